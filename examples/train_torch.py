#!/usr/bin/env python3
"""Trains your own PyTorch network on a live zerofarm run, closing the loop.

    zerofarm run --game connect4 --out runs/mine --duration 1800
    python3 examples/train_torch.py runs/mine

or both as one command: zerofarm loop --game connect4 --out runs/mine
--weights START.pt --trainer-command "python3 examples/train_torch.py".

Every round it reads the run's newest shards (tools/zf_shards.py's
ShardDataset), takes --steps SGD steps on them and writes the network as
RUN/models/model-N.pt (TorchScript with its metadata, atomically: a temporary
file, then a rename), which the farm hot-reloads (docs/models.md). Replace
`Net` with any nn.Module that keeps the contract: features [B, planes, H, W]
in, (policy logits [B, actions], value [B] in [-1, 1]) out.

It continues a model when given one: --start-model PATH, else the
environment's ZF_START_MODEL (zerofarm loop sets it to --weights, or to the
run's newest model when it resumes). A .pt is trained as the TorchScript
module it is (its architecture and weights; a traced one keeps what its trace
recorded, in eval mode: script it to train dropout or batch norm); a .h5 as
zerofarm's own net (zf_weights_torch.ZeroNet). Without one it starts a fresh
`Net`. Each new model is numbered above the run's models, its shards' model
versions and the start model's version.
"""

import argparse
import json
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))

import torch  # noqa: E402
from torch import nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import zf_shards  # noqa: E402
import zf_weights_torch as zw  # noqa: E402


class Net(nn.Module):
    """Any network will do; this one is a small conv net with two heads."""

    def __init__(self, planes, height, width, actions, channels=32):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(planes, channels, 3, padding=1), nn.ReLU(),
                                  nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU())
        cells = channels * height * width
        self.policy = nn.Linear(cells, actions)
        self.value = nn.Sequential(nn.Linear(cells, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, x):
        h = self.body(x).flatten(1)
        return self.policy(h), torch.tanh(self.value(h)).squeeze(1)


def newest_version(run, least=0):
    """The highest N of RUN/models/model-N.{h5,pt}, of the model versions in the run's shards
    (a farm started from --weights runs that file's version) and `least`: a new model must be newer."""
    models_dir = os.path.join(run, "models")
    best = least
    for name in os.listdir(models_dir) if os.path.isdir(models_dir) else []:
        stem, ext = os.path.splitext(name)
        if ext in (".h5", ".pt") and stem.startswith("model-") and stem[6:].isdigit():
            best = max(best, int(stem[6:]))
    for path in zf_shards.iter_shards(run):
        best = max(best, int(zf_shards.read_meta(path)["model_version_max"]))
    return best


def wait_for_shards(run, least):
    """A ShardDataset of the run's newest shards once they hold `least` positions."""
    while True:
        try:
            data = zf_shards.ShardDataset(run, last_shards=50)
            if len(data) >= least:
                return data
        except ValueError:  # no shards yet
            pass
        time.sleep(2)


def start_model(path):
    """(the module to train, its game, its model version) of a model file: a .pt as its
    TorchScript module, a .h5 as a ZeroNet. ValueError for a file it cannot train."""
    if path.endswith(".pt"):
        extra = {zw.MODEL_METADATA: ""}
        net = torch.jit.load(path, map_location="cpu", _extra_files=extra)
        try:
            meta = json.loads(extra[zw.MODEL_METADATA])
            game, version = meta["game"], int(meta["version"])
        except (ValueError, KeyError, TypeError):
            raise ValueError(f"{path}: no readable {zw.MODEL_METADATA} (docs/models.md)") from None
    elif path.endswith(".h5"):
        net = zw.load_zerofarm_weights(path).float()
        game, version = net.config["game"], int(net.version)
    else:
        raise ValueError(f"{path}: this trainer continues a .pt or a .h5 model only")
    if not any(p.requires_grad for p in net.parameters()):
        raise ValueError(f"{path}: no trainable parameters")
    return net, game, version


def sample_positions(data, count=64):
    """`count` positions of the run's shards, spread over them: what a trace is checked on."""
    picks = torch.linspace(0, len(data) - 1, min(count, len(data))).long().unique()
    return torch.stack([data[int(i)][0] for i in picks])


def train_round(net, opt, data, steps, batch):
    """`steps` steps of cross-entropy on the search's policy plus squared error on the outcome."""
    loader = torch.utils.data.DataLoader(data, batch_size=batch, shuffle=True, drop_last=True)
    net.train()
    done, loss = 0, torch.tensor(0.0)
    while done < steps:
        for x, pi, z in loader:
            logits, v = net(x)
            loss = -(pi * F.log_softmax(logits, 1)).sum(1).mean() + F.mse_loss(v, z)
            opt.zero_grad()
            loss.backward()
            opt.step()
            done += 1
            if done == steps:
                break
    return float(loss)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run", help="the run directory (zerofarm run --out)")
    p.add_argument("--models", type=int, default=0, help="stop after this many models (0: never)")
    p.add_argument("--steps", type=int, default=200, help="SGD steps per model")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--min-positions", type=int, default=2000, help="positions to wait for before training")
    p.add_argument("--start-model", default=os.environ.get("ZF_START_MODEL") or None,
                   help="a model file (.pt or .h5) to continue (default: $ZF_START_MODEL; none: a fresh Net)")
    args = p.parse_args()
    # SIGTERM (zerofarm loop --trainer-command stops it so) ends it cleanly: exit 0, no temporary file left.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    torch.set_num_threads(int(os.environ.get("ZF_TRAIN_THREADS", "1")))
    models_dir = os.path.join(args.run, "models")
    net, game, start_version = None, None, 0
    if args.start_model:
        try:
            net, game, start_version = start_model(args.start_model)
        except (OSError, RuntimeError, ValueError) as e:
            print(f"train_torch.py: cannot continue {args.start_model}: {str(e).strip().splitlines()[0]}",
                  file=sys.stderr)
            return 2
    data = wait_for_shards(args.run, args.min_positions)
    if net is None:
        net = Net(data.planes, data.height, data.width, data.actions)
    elif game != data.game:
        print(f"train_torch.py: {args.start_model} plays {game}, the run's shards {data.game}", file=sys.stderr)
        return 2
    else:
        print(f"continuing {args.start_model} (model version {start_version})", flush=True)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    made = 0
    while args.models == 0 or made < args.models:
        loss = train_round(net, opt, data, args.steps, args.batch)
        version = newest_version(args.run, start_version) + 1
        path = os.path.join(models_dir, f"model-{version}.pt")
        zw.save_torchscript(net, path, data.game, version, positions=sample_positions(data))
        made += 1
        print(f"{path}: loss {loss:.3f} on {len(data)} positions", flush=True)
        data = zf_shards.ShardDataset(args.run, last_shards=50)  # the newest shards, this model's too
    return 0


if __name__ == "__main__":
    sys.exit(main())
