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
"""

import argparse
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


def newest_version(run):
    """The highest N of RUN/models/model-N.{h5,pt} and of the model versions in the run's shards
    (a farm started from --weights runs that file's version), or 0: a new model must be newer."""
    models_dir = os.path.join(run, "models")
    best = 0
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
    args = p.parse_args()
    # SIGTERM (zerofarm loop --trainer-command stops it so) ends it cleanly: exit 0, no temporary file left.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    torch.set_num_threads(int(os.environ.get("ZF_TRAIN_THREADS", "1")))
    models_dir = os.path.join(args.run, "models")
    data = wait_for_shards(args.run, args.min_positions)
    net = Net(data.planes, data.height, data.width, data.actions)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    made = 0
    while args.models == 0 or made < args.models:
        loss = train_round(net, opt, data, args.steps, args.batch)
        version = newest_version(args.run) + 1
        path = os.path.join(models_dir, f"model-{version}.pt")
        zw.save_torchscript(net, path, data.game, version)
        made += 1
        print(f"{path}: loss {loss:.3f} on {len(data)} positions", flush=True)
        data = zf_shards.ShardDataset(args.run, last_shards=50)  # the newest shards, this model's too
    return 0


if __name__ == "__main__":
    sys.exit(main())
