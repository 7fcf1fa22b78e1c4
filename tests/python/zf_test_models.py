#!/usr/bin/env python3
"""Writes TorchScript model files for the tests of docs/models.md: good ones
(a tiny conv net, a transformer over the board cells) and ones that break
the contract, each named KIND.pt in OUT_DIR.

    zf_test_models.py OUT_DIR GAME [KIND ...]     (default: every kind)

Not a test itself (its name is not test_*.py).
"""

import json
import os
import struct
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools"))

import torch  # noqa: E402
from torch import nn  # noqa: E402

import zf_shards  # noqa: E402
import zf_weights_torch as zw  # noqa: E402


class TinyConv(nn.Module):
    """A small conv net keeping the contract; `mode` breaks it on purpose."""

    def __init__(self, planes, height, width, actions, mode: str = "good"):
        super().__init__()
        self.conv = nn.Conv2d(planes, 8, 3, padding=1)
        self.policy = nn.Linear(8 * height * width, actions)
        self.value = nn.Linear(8 * height * width, 1)
        self.mode = mode

    def forward(self, x):
        h = torch.relu(self.conv(x)).flatten(1)
        p = self.policy(h)
        v = torch.tanh(self.value(h))
        if self.mode == "nan":
            v = v * float("nan")
        elif self.mode == "nan_later" and bool(x.sum() > 0):
            v = v * float("nan")
        elif self.mode == "throws":
            raise RuntimeError("this model's forward always fails")
        elif self.mode == "throws_later" and bool(x.sum() > 0):
            raise RuntimeError("this model's forward fails on a real position")
        elif self.mode == "policy_shape":
            p = p[:, :-1]
        elif self.mode == "value_range":
            v = v * 0.0 + 3.0
        return p, v


class BranchOnInput(nn.Module):
    """Control flow on its input: the policy is turned around for a batch with a stone on the
    board. A trace on the default example (zero positions) records the other branch."""

    def __init__(self, planes, height, width, actions):
        super().__init__()
        self.inner = TinyConv(planes, height, width, actions)

    def forward(self, x):
        p, v = self.inner(x)
        if bool(x[:, :2].sum() > 0):
            p = -3.0 * p
        return p, v


class NoScript(nn.Module):
    """A forward torch.jit.script refuses (a variable number of arguments) and a trace can follow;
    `branch` adds BranchOnInput's `if`, which a trace cannot."""

    def __init__(self, planes, height, width, actions, branch=False):
        super().__init__()
        self.inner = TinyConv(planes, height, width, actions)
        self.branch = branch

    def forward(self, *xs):
        p, v = self.inner(xs[0])
        if self.branch and bool(xs[0][:, :2].sum() > 0):
            p = -3.0 * p
        return p, v


class ThreeOutputs(nn.Module):
    def __init__(self, *args):
        super().__init__()
        self.inner = TinyConv(*args)

    def forward(self, x):
        p, v = self.inner(x)
        return p, v, v


class IntPolicy(ThreeOutputs):
    def forward(self, x):
        p, v = self.inner(x)
        return p.to(torch.int64), v


class BoardTransformer(nn.Module):
    """Not a tower: a tiny transformer over the board's cells (one token each)."""

    def __init__(self, planes, height, width, actions, dim=16):
        super().__init__()
        self.embed = nn.Linear(planes, dim)
        self.pos = nn.Parameter(torch.randn(height * width, dim) * 0.1)
        layer = nn.TransformerEncoderLayer(dim, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=1)
        self.policy = nn.Linear(dim * height * width, actions)
        self.value = nn.Linear(dim, 1)

    def forward(self, x):
        tokens = self.embed(x.flatten(2).transpose(1, 2)) + self.pos  # [B, cells, dim]
        h = self.encoder(tokens)
        return self.policy(h.flatten(1)), torch.tanh(self.value(h.mean(1))).squeeze(1)


def save_raw(net, path, meta, scripted=True):
    """torch.jit.save with `meta` (a dict, a text, or None: no metadata) as zerofarm.json."""
    m = torch.jit.script(net) if scripted else net
    extra = {} if meta is None else {zw.MODEL_METADATA: meta if isinstance(meta, str) else json.dumps(meta)}
    torch.jit.save(m, path, _extra_files=extra)


def write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)


def zip_bomb(good, path):
    """`good` with a deflated entry's uncompressed size in the central directory raised to ~4 GiB."""
    with open(good, "rb") as f:
        data = bytearray(f.read())
    with zipfile.ZipFile(good) as z:
        info = [i for i in z.infolist() if i.compress_type == zipfile.ZIP_DEFLATED][0]
    at = data.find(b"PK\x01\x02")
    while at >= 0:
        name_len = struct.unpack_from("<H", data, at + 28)[0]
        if data[at + 46:at + 46 + name_len].decode() == info.filename:
            struct.pack_into("<I", data, at + 24, 0xFFFFFFF0)
            break
        at = data.find(b"PK\x01\x02", at + 4)
    with open(path, "wb") as f:
        f.write(bytes(data))


def main(out, game, kinds, version=7):
    """Writes OUT/KIND.pt for each of `kinds` (all when empty) at model `version`."""
    torch.manual_seed(0)
    shape = zf_shards.GAME_SHAPES[game]
    args = (shape["planes"], shape["height"], shape["width"], shape["actions"])
    meta = dict(game=game, version=version, **shape)
    makers = {
        "good": lambda p: zw.save_torchscript(torch.jit.script(TinyConv(*args)), p, game, version),
        "transformer": lambda p: zw.save_torchscript(BoardTransformer(*args), p, game, version),
        "nan": lambda p: save_raw(TinyConv(*args, mode="nan"), p, meta),
        "nan_later": lambda p: save_raw(TinyConv(*args, mode="nan_later"), p, meta),
        "throws": lambda p: save_raw(TinyConv(*args, mode="throws"), p, meta),
        "throws_later": lambda p: save_raw(TinyConv(*args, mode="throws_later"), p, meta),
        "policy_shape": lambda p: save_raw(TinyConv(*args, mode="policy_shape"), p, meta),
        "value_range": lambda p: save_raw(TinyConv(*args, mode="value_range"), p, meta),
        "three_outputs": lambda p: save_raw(ThreeOutputs(*args), p, meta),
        "int_policy": lambda p: save_raw(IntPolicy(*args), p, meta),
        "no_metadata": lambda p: save_raw(TinyConv(*args), p, None),
        "metadata_types": lambda p: save_raw(TinyConv(*args), p, dict(meta, planes=str(shape["planes"]))),
        "metadata_json": lambda p: save_raw(TinyConv(*args), p, "{\"game\": "),
        "wrong_game": lambda p: save_raw(TinyConv(*args), p, dict(meta, game="tictactoe" if game != "tictactoe"
                                                                  else "connect4")),
        "not_zip": lambda p: write_bytes(p, b"not a zip archive at all\n" * 10),
        "truncated": lambda p: (makers["good"](p), os.truncate(p, os.path.getsize(p) // 2)),
        "zip_bomb": lambda p: (makers["good"](p + ".good"), zip_bomb(p + ".good", p), os.unlink(p + ".good")),
    }
    for kind in kinds or makers:
        makers[kind](os.path.join(out, kind + ".pt"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
