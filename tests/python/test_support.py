"""Helpers shared by the tests of tools/*.py; it holds no tests itself (its
name only keeps it among the test_*.py files of this directory).

Paths, the zerofarm binary (from $ZF_BINARY), the torch check, a synthetic
shard writer, random weights in numpy and a numpy reference forward pass of
the network (so the C++ network can be checked against Python without torch).
"""

import os
import subprocess
import sys
import unittest

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TOOLS = os.path.join(REPO, "tools")
if TOOLS not in sys.path:
    sys.path.insert(0, TOOLS)

import zf_shards  # noqa: E402

# run_tests.sh sets ZF_REQUIRE_TORCH=1 when Debian's python3-torch is
# installed: then a torch that fails to import is an error, never a skip.
if os.environ.get("ZF_REQUIRE_TORCH") == "1":
    import torch  # noqa: F401
    HAVE_TORCH = True
else:
    try:
        import torch  # noqa: F401
        HAVE_TORCH = True
    except Exception:  # ImportError, or a broken install
        HAVE_TORCH = False

def run_tool(tool, *args, timeout=120):
    """Runs the Python tool `tool` (a path) with `args`: its CompletedProcess, text output."""
    return subprocess.run([sys.executable, tool, *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout)


_told = set()


def skip_without_torch(test_name):
    """unittest.skipUnless for torch, printing "SKIPPED: torch not installed" once per module."""
    if not HAVE_TORCH and test_name not in _told:
        _told.add(test_name)
        print(f"SKIPPED: torch not installed ({test_name})", file=sys.stderr)
    return unittest.skipUnless(HAVE_TORCH, "torch not installed")


def binary():
    """The zerofarm binary named by $ZF_BINARY, or None if unset."""
    path = os.environ.get("ZF_BINARY", "").strip()
    if not path:
        return None
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"ZF_BINARY={path} is not an executable file")
    return path


def run(cmd, timeout=300):
    """Runs cmd (a list); returns the CompletedProcess, failing with its output if rc != 0."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    if p.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-4000:]}")
    return p


def run_farm(out, extra=()):
    """The brief's small farm: 6 connect4 games on the CPU into `out` (a 1x8 random net unless
    `extra` names --weights: the farm refuses a shape beside a model file)."""
    shape = () if "--weights" in extra else ("--blocks", "1", "--filters", "8")
    return run([binary(), "run", "--game", "connect4", "--workers", "2", "--games-per-worker", "4",
                "--simulations", "8", *shape, "--games", "6", "--gpus", "0", "--no-status", "--out", out,
                *extra])


# ---- a synthetic shard (docs/schema.md), for tests without the binary ----------

def write_synthetic_shard(path, game="connect4", games=3, seed=0, shard_index=0, first_game_id=0):
    """A small valid shard of random positions: each game has 2..6 positions
    with random stones and a policy over the columns/cells not full."""
    rng = np.random.default_rng(seed)
    shape = zf_shards.GAME_SHAPES[game]
    planes, h, w, actions = shape["planes"], shape["height"], shape["width"], shape["actions"]
    feats, pols, zs, rvs, plies, gids, mvs = [], [], [], [], [], [], []
    g_ids, lengths, firsts, counts, moves = [], [], [], [], []
    for g in range(games):
        n = int(rng.integers(2, 7))
        gid = first_game_id + g
        firsts.append(len(zs))
        counts.append(n)
        lengths.append(n)
        g_ids.append(gid)
        winner_to_move = rng.choice([-1.0, 0.0, 1.0])
        for k in range(n):
            f = np.zeros((planes, h, w), np.uint8)
            stones = rng.integers(0, 3, size=(h, w))
            f[0][stones == 1] = 1
            f[1][stones == 2] = 1
            f[2][:] = k % 2 == 0
            legal = (f[0, 0] == 0) & (f[1, 0] == 0) if game == "connect4" else ((f[0] == 0) & (f[1] == 0)).ravel()
            if not legal.any():
                f[0, 0, 0] = f[1, 0, 0] = 0
                legal = (f[0, 0] == 0) & (f[1, 0] == 0) if game == "connect4" else ((f[0] == 0) & (f[1] == 0)).ravel()
            p = rng.random(actions) * legal
            p = (p / p.sum()).astype(np.float32)
            feats.append(f)
            pols.append(p)
            zs.append(winner_to_move * (1 if k % 2 == 0 else -1))
            rvs.append(rng.uniform(-1, 1))
            plies.append(k)
            gids.append(gid)
            mvs.append(0)
            moves.append(int(np.argmax(p)))
    n = len(zs)
    with h5py.File(path, "w") as f:
        a = f.attrs
        a["schema_version"] = np.int32(1)
        a["game"] = game
        for k in ("planes", "height", "width", "actions"):
            a[k] = np.int32(shape[k])
        a["plane_names"] = ["own", "opponent", "first_player_to_move"]
        for k in ("search", "config", "run_id", "zerofarm_version", "host", "created"):
            a[k] = "synthetic"
        a["model_version_min"] = np.uint32(0)
        a["model_version_max"] = np.uint32(0)
        a["shard_index"] = np.uint64(shard_index)
        a["positions"] = np.uint64(n)
        a["games"] = np.uint64(games)
        f["worker_commit"] = np.zeros(1, np.uint64)
        pos = f.create_group("positions")
        pos["features"] = np.array(feats, np.uint8)
        pos["policy"] = np.array(pols, np.float32)
        pos["z"] = np.array(zs, np.float32)
        pos["root_value"] = np.array(rvs, np.float32)
        pos["ply"] = np.array(plies, np.int16)
        pos["game_id"] = np.array(gids, np.uint64)
        pos["model_version"] = np.array(mvs, np.uint32)
        gr = f.create_group("games")
        gr["game_id"] = np.array(g_ids, np.uint64)
        gr["result"] = np.zeros(games, np.int8)
        gr["length"] = np.array(lengths, np.int32)
        gr["worker"] = np.zeros(games, np.int32)
        gr["seed"] = np.arange(games, dtype=np.uint64)
        gr["first_position"] = np.array(firsts, np.int64)
        gr["position_count"] = np.array(counts, np.int32)
        gr["moves"] = np.array(moves, np.int16)
        gr["moves_offset"] = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    return n


# ---- the network in numpy ------------------------------------------------------

def random_weights(config, seed=0):
    """name -> numpy array for every tensor of a ZeroNet with `config`, random,
    BatchNorm running statistics included (so eval-mode BN is really tested)."""
    import zf_weights_torch as zw
    rng = np.random.default_rng(seed)
    state = {}
    for name, shape in zw.state_dict_shapes(config).items():
        if name.endswith("num_batches_tracked"):
            state[name] = np.array(int(rng.integers(0, 100)), np.int64)
        elif name.endswith("running_var"):
            state[name] = rng.uniform(0.5, 2.0, shape).astype(np.float32)
        elif name.endswith("running_mean"):
            state[name] = rng.normal(0, 0.2, shape).astype(np.float32)
        elif name.endswith("bn.weight") or name.endswith("bn1.weight") or name.endswith("bn2.weight"):
            state[name] = rng.uniform(0.5, 1.5, shape).astype(np.float32)
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 4
            state[name] = (rng.normal(0, 1, shape) / np.sqrt(fan_in)).astype(np.float32)
    return state


def _conv(x, w):
    """Convolution with padding k//2, no bias: x [N, C, H, W], w [O, C, k, k] (float64)."""
    k = w.shape[2]
    pad = k // 2
    n, _, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.zeros((n, w.shape[0], h, wd))
    for i in range(k):
        for j in range(k):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return out


def _bn(x, state, prefix):
    g = state[prefix + ".weight"].astype(np.float64)[None, :, None, None]
    b = state[prefix + ".bias"].astype(np.float64)[None, :, None, None]
    m = state[prefix + ".running_mean"].astype(np.float64)[None, :, None, None]
    v = state[prefix + ".running_var"].astype(np.float64)[None, :, None, None]
    return (x - m) / np.sqrt(v + 1e-5) * g + b


def numpy_forward(state, config, x):
    """The network in eval mode, in float64 numpy: (policy logits [N, actions], value [N])."""
    s = {k: np.asarray(v) for k, v in state.items()}
    relu = lambda a: np.maximum(a, 0)  # noqa: E731
    h = relu(_bn(_conv(np.asarray(x, np.float64), s["stem.conv.weight"].astype(np.float64)), s, "stem.bn"))
    for i in range(config["blocks"]):
        y = relu(_bn(_conv(h, s[f"blocks.{i}.conv1.weight"].astype(np.float64)), s, f"blocks.{i}.bn1"))
        y = _bn(_conv(y, s[f"blocks.{i}.conv2.weight"].astype(np.float64)), s, f"blocks.{i}.bn2")
        h = relu(y + h)
    p = relu(_bn(_conv(h, s["policy_head.conv.weight"].astype(np.float64)), s, "policy_head.bn"))
    p = p.reshape(len(p), -1) @ s["policy_head.fc.weight"].T.astype(np.float64) + s["policy_head.fc.bias"]
    v = relu(_bn(_conv(h, s["value_head.conv.weight"].astype(np.float64)), s, "value_head.bn"))
    v = relu(v.reshape(len(v), -1) @ s["value_head.fc1.weight"].T.astype(np.float64) + s["value_head.fc1.bias"])
    v = np.tanh(v @ s["value_head.fc2.weight"].T.astype(np.float64) + s["value_head.fc2.bias"])[:, 0]
    return p, v
