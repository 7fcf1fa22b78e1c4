#!/usr/bin/env python3
"""zerofarm's network in PyTorch, and its weights files <-> PyTorch state_dicts.

``ZeroNet`` has exactly the module tree of the C++ network (src/eval/torch_net.h),
so its ``state_dict()`` names are the tensor names of a zerofarm weights file
(docs/schema.md, "Weights files"):

    stem.conv, stem.bn                      conv3x3 planes->filters (no bias), BatchNorm
    blocks.N.{conv1,bn1,conv2,bn2}          residual blocks: relu(bn2(conv2(relu(bn1(conv1 x)))) + x)
    policy_head.{conv,bn,fc}                conv1x1 filters->2, bn, relu, flatten, fc 2*H*W->actions
    value_head.{conv,bn,fc1,fc2}            conv1x1 filters->value_channels (1 unless the config says),
                                            bn, relu, flatten, fc value_channels*H*W->value_hidden,
                                            relu, fc value_hidden->1, tanh

``forward(x)`` takes features [N, planes, H, W] (uint8 as stored in shards, or
float) and returns (policy logits [N, actions], value [N] in [-1, 1]); the C++
search applies the softmax over the legal actions itself.

Module use::

    import zf_weights_torch as zw
    net = zw.load_zerofarm_weights("runs/run1/models/model-000007.h5")   # eval() mode
    net = zw.ZeroNet.for_game("connect4", blocks=6, filters=64)           # a fresh net
    zw.save_zerofarm_weights(net, "runs/run1/models/model-000008.h5", "connect4", 8)

CLI (needs torch)::

    zf_weights_torch.py to-state-dict WEIGHTS.h5 OUT.pt
    zf_weights_torch.py from-state-dict IN.pt WEIGHTS.h5 --game connect4 [--version 8]

``to-state-dict`` writes a checkpoint dict: {"state_dict": the tensors,
"model_version": the weights file's model version (its attribute), "config":
the network's config}; ``from-state-dict`` records that model version again
unless --version is given (0 for a .pt that has none).
    zf_weights_torch.py init WEIGHTS.h5 --game connect4 [--blocks 6 --filters 64 --value-channels 1 --seed 0]
    zf_weights_torch.py to-torchscript WEIGHTS.h5 MODEL.pt [--trace [--run RUN]]

``to-torchscript`` writes the network as a TorchScript model file that
``zerofarm run --weights MODEL.pt`` runs (docs/models.md); ``save_torchscript``
does the same for any ``nn.Module`` that keeps the contract of docs/models.md.
Both script the module; a trace (``--trace``, or a module that does not
script) must equal the module on real positions (RUN's shards) within 1e-4,
else it is refused: one line, exit 3 (TraceMismatch), no file written.

``from-state-dict`` reads a plain state_dict or a checkpoint dict holding one
under "state_dict" or "model" (a "module." or "_orig_mod." prefix from
DataParallel or torch.compile is dropped); it infers planes, actions, blocks,
filters and value_hidden from the tensor shapes and takes height and width
from --game (or --height/--width for a game this tool does not know).

The functions that need no torch (``state_dict_shapes``, ``infer_config``)
work without it; everything else raises ImportError / exits 1 with a clear
message when ``import torch`` fails. See docs/training.md.
"""

import argparse
import collections
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import h5_weights  # noqa: E402  (tools/h5_weights.py: the file format itself)
import zf_shards  # noqa: E402   (GAME_SHAPES)

try:
    import torch
    from torch import nn
    import torch.nn.functional as F
    _TORCH_ERROR = None
except Exception as _e:  # ImportError, or a broken install
    torch = nn = F = None
    _TORCH_ERROR = _e

CONFIG_KEYS = h5_weights.CONFIG_KEYS  # game, planes, height, width, actions, blocks, filters, value_hidden
DEFAULT_BLOCKS = 6
DEFAULT_FILTERS = 64
DEFAULT_VALUE_HIDDEN = 64  # what `zerofarm run` uses for its random nets


def require_torch():
    if torch is None:
        raise ImportError(f"PyTorch is not installed (import torch failed: {_TORCH_ERROR})")


# ---- the layout, without torch -----------------------------------------------

def _bn_shapes(prefix, channels):
    return [(prefix + ".weight", (channels,)), (prefix + ".bias", (channels,)),
            (prefix + ".running_mean", (channels,)), (prefix + ".running_var", (channels,)),
            (prefix + ".num_batches_tracked", ())]


def state_dict_shapes(config):
    """The tensors of a ZeroNet with `config` (a dict with planes, height,
    width, actions, blocks, filters, value_hidden; value_channels, 1 if
    absent): an OrderedDict name -> shape tuple, in PyTorch's state_dict
    order. Needs no torch."""
    p, h, w, a = (int(config[k]) for k in ("planes", "height", "width", "actions"))
    b, f, vh = (int(config[k]) for k in ("blocks", "filters", "value_hidden"))
    vc = int(config.get("value_channels", 1))
    shapes = [("stem.conv.weight", (f, p, 3, 3))] + _bn_shapes("stem.bn", f)
    for i in range(b):
        shapes += [(f"blocks.{i}.conv1.weight", (f, f, 3, 3))] + _bn_shapes(f"blocks.{i}.bn1", f)
        shapes += [(f"blocks.{i}.conv2.weight", (f, f, 3, 3))] + _bn_shapes(f"blocks.{i}.bn2", f)
    shapes += [("policy_head.conv.weight", (2, f, 1, 1))] + _bn_shapes("policy_head.bn", 2)
    shapes += [("policy_head.fc.weight", (a, 2 * h * w)), ("policy_head.fc.bias", (a,))]
    shapes += [("value_head.conv.weight", (vc, f, 1, 1))] + _bn_shapes("value_head.bn", vc)
    shapes += [("value_head.fc1.weight", (vh, vc * h * w)), ("value_head.fc1.bias", (vh,)),
               ("value_head.fc2.weight", (1, vh)), ("value_head.fc2.bias", (1,))]
    return collections.OrderedDict(shapes)


def _shape_of(t):
    return tuple(int(d) for d in (t.shape if hasattr(t, "shape") else np.shape(t)))


def strip_prefixes(state):
    """A state_dict without the "module." (DataParallel) or "_orig_mod."
    (torch.compile) prefixes on its names."""
    out = collections.OrderedDict()
    for name, t in state.items():
        for prefix in ("module.", "_orig_mod."):
            while name.startswith(prefix):
                name = name[len(prefix):]
        out[name] = t
    return out


def check_state_dict(state, config):
    """Problems (a list of strings, empty if none) of `state` (name -> tensor
    or array) as the weights of a ZeroNet with `config`."""
    want = state_dict_shapes(config)
    problems = []
    missing = [n for n in want if n not in state]
    extra = [n for n in state if n not in want]
    if missing:
        problems.append(f"missing {len(missing)} tensor(s): {', '.join(missing[:5])}"
                        + (" ..." if len(missing) > 5 else ""))
    if extra:
        problems.append(f"unexpected {len(extra)} tensor(s): {', '.join(extra[:5])}"
                        + (" ..." if len(extra) > 5 else ""))
    for n, shape in want.items():
        if n in state and _shape_of(state[n]) != shape:
            problems.append(f"{n} has shape {list(_shape_of(state[n]))}, expected {list(shape)}")
    return problems


def infer_config(state, game, height=None, width=None):
    """The config of a ZeroNet state_dict: planes, actions, blocks, filters and
    value_hidden from the tensor shapes; height and width from the arguments,
    else from `game` (zf_shards.GAME_SHAPES). Raises ValueError if they do
    not fit together. Needs no torch."""
    state = strip_prefixes(state)
    known = zf_shards.GAME_SHAPES.get(game)
    if height is None or width is None:
        if known is None:
            raise ValueError(f"unknown game {game!r} (known: {', '.join(sorted(zf_shards.GAME_SHAPES))}); "
                             "give its height and width")
        height = known["height"] if height is None else height
        width = known["width"] if width is None else width
    try:
        filters, planes = _shape_of(state["stem.conv.weight"])[:2]
        actions = _shape_of(state["policy_head.fc.weight"])[0]
        value_hidden = _shape_of(state["value_head.fc1.weight"])[0]
        value_channels = _shape_of(state["value_head.conv.weight"])[0]
    except KeyError as e:
        raise ValueError(f"not a ZeroNet state_dict: no tensor {e.args[0]}") from None
    blocks = 0
    while f"blocks.{blocks}.conv1.weight" in state:
        blocks += 1
    config = {"game": game, "planes": planes, "height": int(height), "width": int(width),
              "actions": actions, "blocks": blocks, "filters": filters, "value_hidden": value_hidden}
    if value_channels != 1:
        config["value_channels"] = value_channels
    if known is not None:
        for k in ("planes", "height", "width", "actions"):
            if config[k] != known[k]:
                raise ValueError(f"{game} has {k} {known[k]}, the network has {config[k]}")
    problems = check_state_dict(state, config)
    if problems:
        raise ValueError("state_dict does not fit " + describe(config) + ": " + "; ".join(problems))
    return config


def describe(config, version=None):
    """"connect4 3x6x7 -> 7, 6 blocks x 64 filters, value head 64" (as the C++ logs it)."""
    text = h5_weights.describe_net(config)
    return text if version is None else f"{text}, version {version}"


# ---- the network ---------------------------------------------------------------

if torch is not None:

    class _Stem(nn.Module):
        def __init__(self, planes, filters):
            super().__init__()
            self.conv = nn.Conv2d(planes, filters, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(filters)

        def forward(self, x):
            return F.relu(self.bn(self.conv(x)))

    class ResidualBlock(nn.Module):
        def __init__(self, filters):
            super().__init__()
            self.conv1 = nn.Conv2d(filters, filters, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(filters)
            self.conv2 = nn.Conv2d(filters, filters, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(filters)

        def forward(self, x):
            y = F.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return F.relu(y + x)

    class _PolicyHead(nn.Module):
        def __init__(self, filters, cells, actions):
            super().__init__()
            self.conv = nn.Conv2d(filters, 2, 1, bias=False)
            self.bn = nn.BatchNorm2d(2)
            self.fc = nn.Linear(2 * cells, actions)

        def forward(self, h):
            return self.fc(F.relu(self.bn(self.conv(h))).flatten(1))

    class _ValueHead(nn.Module):
        def __init__(self, filters, cells, value_hidden, value_channels=1):
            super().__init__()
            self.conv = nn.Conv2d(filters, value_channels, 1, bias=False)
            self.bn = nn.BatchNorm2d(value_channels)
            self.fc1 = nn.Linear(value_channels * cells, value_hidden)
            self.fc2 = nn.Linear(value_hidden, 1)

        def forward(self, h):
            v = F.relu(self.bn(self.conv(h))).flatten(1)
            return torch.tanh(self.fc2(F.relu(self.fc1(v)))).squeeze(1)

    class ZeroNet(nn.Module):
        """The C++ ZeroNet (src/eval/torch_net.h) as a PyTorch module.

        forward(x): x [N, planes, H, W], uint8 or float -> (policy logits
        [N, actions], value [N]). ``config`` is the dict a weights file
        stores (game, planes, height, width, actions, blocks, filters,
        value_hidden, and value_channels where it is not 1); ``version`` the
        model version (0 for a fresh net).
        """

        def __init__(self, planes, height, width, actions, blocks=DEFAULT_BLOCKS,
                     filters=DEFAULT_FILTERS, value_hidden=DEFAULT_VALUE_HIDDEN, game="",
                     value_channels=1):
            super().__init__()
            self.config = {"game": game, "planes": int(planes), "height": int(height),
                           "width": int(width), "actions": int(actions), "blocks": int(blocks),
                           "filters": int(filters), "value_hidden": int(value_hidden)}
            if int(value_channels) != 1:
                self.config["value_channels"] = int(value_channels)
            self.version = 0
            cells = int(height) * int(width)
            self.stem = _Stem(int(planes), int(filters))
            self.blocks = nn.ModuleList(ResidualBlock(int(filters)) for _ in range(int(blocks)))
            self.policy_head = _PolicyHead(int(filters), cells, int(actions))
            self.value_head = _ValueHead(int(filters), cells, int(value_hidden), int(value_channels))

        @classmethod
        def from_config(cls, config):
            """A fresh net from a dict with planes, height, width, actions (and
            optionally blocks, filters, value_hidden, value_channels, game); other keys ignored."""
            keys = ("planes", "height", "width", "actions", "blocks", "filters", "value_hidden", "game",
                    "value_channels")
            return cls(**{k: config[k] for k in keys if k in config})

        @classmethod
        def for_game(cls, game, blocks=DEFAULT_BLOCKS, filters=DEFAULT_FILTERS,
                     value_hidden=DEFAULT_VALUE_HIDDEN, value_channels=1):
            """A fresh net for a game zerofarm knows ("connect4", "tictactoe")."""
            if game not in zf_shards.GAME_SHAPES:
                raise ValueError(f"unknown game {game!r}; known: {', '.join(sorted(zf_shards.GAME_SHAPES))}")
            return cls(blocks=blocks, filters=filters, value_hidden=value_hidden, game=game,
                       value_channels=value_channels, **zf_shards.GAME_SHAPES[game])

        def forward(self, x):
            dtype = self.stem.conv.weight.dtype
            if x.dtype != dtype:
                x = x.to(dtype)  # the one conversion: uint8 planes -> the network's dtype
            h = self.stem(x)
            for block in self.blocks:
                h = block(h)
            return self.policy_head(h), self.value_head(h)

        def extra_repr(self):
            return describe(self.config)


def _unwrap(net):
    """The ZeroNet inside DataParallel / DistributedDataParallel / torch.compile."""
    while True:
        if hasattr(net, "_orig_mod"):
            net = net._orig_mod
        elif hasattr(net, "module") and isinstance(net.module, nn.Module):
            net = net.module
        else:
            return net


def _numpy_state(state):
    """name -> float32 / int64 numpy array (from CPU or GPU tensors of any dtype)."""
    out = collections.OrderedDict()
    for name, t in state.items():
        if hasattr(t, "detach"):
            t = t.detach().to("cpu")
            t = t.to(torch.int64) if not (t.is_floating_point() or t.is_complex()) else t.to(torch.float32)
            a = t.numpy()
        else:
            a = np.asarray(t)
            a = a.astype(np.int64) if a.dtype.kind in "iub" else a.astype(np.float32)
        out[name] = a
    return out


def read_zerofarm_weights(path):
    """(state_dict of numpy arrays, config dict, version) of a weights file,
    checked against the ZeroNet layout; ValueError if it does not fit. No torch needed."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such file")
    try:
        state, config, version = h5_weights.load_weights(path)
    except KeyError as e:
        raise ValueError(f"{path}: not a zerofarm weights file (missing {e})") from None
    if config.get("score_plies"):
        raise ValueError(f"{path} has a score head (docs/training.md, \"The score head\"), which this "
                         "module's ZeroNet does not build; h5_weights.load_weights reads its tensors")
    problems = check_state_dict(state, config)
    if problems:
        raise ValueError(f"{path} does not hold a {describe(config)}: " + "; ".join(problems))
    return state, config, version


def load_zerofarm_weights(path, map_location="cpu"):
    """A ZeroNet holding the weights of a zerofarm weights file, loaded with
    strict=True, in eval() mode (call .train() to go on training it); its
    ``config`` and ``version`` are the file's. ValueError for a file that is
    not a weights file or whose tensors do not fit the network."""
    require_torch()
    state, config, version = read_zerofarm_weights(path)
    net = ZeroNet.from_config(config)
    net.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items()}, strict=True)
    net.version = version
    net.to(map_location)
    return net.eval()


def save_zerofarm_weights(net, path, game=None, version=None):
    """Writes `net` (a ZeroNet, possibly wrapped by DataParallel or
    torch.compile, on any device and dtype) as a zerofarm weights file that
    `zerofarm run --weights` reads: float32 / int64 tensors under their
    state_dict names, the attributes of docs/schema.md; atomically (a fresh PATH.*.tmp,
    fsync, rename). `game` defaults to net.config["game"], `version` to
    net.version. Returns the config written."""
    require_torch()
    net = _unwrap(net)
    if not isinstance(getattr(net, "config", None), dict):
        raise ValueError(f"save_zerofarm_weights needs a ZeroNet, not a {type(net).__name__}; "
                         "for a bare state_dict use the from-state-dict command or h5_weights.save_weights")
    config = dict(net.config)
    if game is not None:
        config["game"] = game
    if not config.get("game"):
        raise ValueError("no game: pass game= (\"connect4\", ...) or build the net with game=")
    known = zf_shards.GAME_SHAPES.get(config["game"])
    if known is not None:
        for k in ("planes", "height", "width", "actions"):
            if config[k] != known[k]:
                raise ValueError(f"{config['game']} has {k} {known[k]}, the network has {config[k]}")
    if version is None:
        version = getattr(net, "version", 0)
    if not 0 <= int(version) < 2 ** 32:
        raise ValueError(f"version {version} does not fit uint32")
    state = _numpy_state(strip_prefixes(net.state_dict()))
    problems = check_state_dict(state, config)
    if problems:
        raise ValueError(f"the network does not fit {describe(config)}: " + "; ".join(problems))
    h5_weights.save_weights(path, state, config, int(version))
    return config


# ---- TorchScript model files (docs/models.md) -----------------------------------

MODEL_METADATA = "zerofarm.json"  # the extra file of every model archive
TRACE_TOLERANCE = 1e-4  # max abs difference allowed between a trace and its module (fp32)
TRACE_POSITIONS = 64    # positions a trace is compared on


class TraceMismatch(ValueError):
    """A traced module that does not compute what its eager module does
    (save_torchscript refuses it; the CLI exits 3). Its message is one line."""


def _check_positions(positions, shape):
    """`positions` as a tensor [N, planes, H, W] of the game's shape, N >= 1."""
    t = positions if torch.is_tensor(positions) else torch.from_numpy(np.asarray(positions))
    want = tuple(int(shape[k]) for k in ("planes", "height", "width"))
    if t.dim() != 4 or tuple(t.shape[1:]) != want or t.shape[0] == 0:
        raise ValueError(f"positions must be [N, {', '.join(map(str, want))}] with N >= 1; they are "
                         f"{list(t.shape)}")
    return t


def trace_positions(game, shape, run=None, count=TRACE_POSITIONS):
    """Up to `count` positions to compare a trace on, and where they came
    from: the newest shards of `run` (real positions of the game), else
    random 0/1 planes (which at least leave the all-zero example)."""
    if run is not None:
        data = zf_shards.load_run(run, fields=("features",), last_shards=2)
        if data["meta"]["game"] != game:
            raise ValueError(f"{run} plays {data['meta']['game']}, not {game}")
        features = data["features"]
        if len(features):
            pick = np.unique(np.linspace(0, len(features) - 1, min(count, len(features))).astype(np.int64))
            return _check_positions(features[pick], shape), f"{len(pick)} positions of {run}"
    g = torch.Generator().manual_seed(0)
    planes = torch.randint(0, 2, (count, int(shape["planes"]), int(shape["height"]), int(shape["width"])),
                           generator=g, dtype=torch.uint8)
    return planes, f"{count} random 0/1 positions (pass positions= or run= for real ones)"


def _outputs(out):
    """The tensors of a model's output (a tensor, or a tuple / list of them), in order."""
    if torch.is_tensor(out):
        return [out]
    if isinstance(out, (tuple, list)) and all(torch.is_tensor(t) for t in out):
        return list(out)
    raise ValueError(f"forward must return tensors, not {type(out).__name__}")


def trace_difference(net, traced, positions):
    """The largest absolute difference between `traced` and the eager `net`
    (in eval mode) over their outputs on `positions` and on the first of them
    alone (a batch of 1: a trace can freeze the batch size); inf when their
    outputs do not have the same shapes or the trace fails on them."""
    param = next(net.parameters(), None)
    x = positions.to(device=param.device, dtype=param.dtype) if param is not None else positions.float()
    worst = 0.0
    with torch.no_grad():
        for batch in (x, x[:1]):
            want = _outputs(net(batch))
            try:
                got = _outputs(traced(batch))
            except Exception:  # noqa: BLE001 -- a trace that fails where its module works diverges
                return float("inf")
            if len(got) != len(want) or any(a.shape != b.shape for a, b in zip(got, want)):
                return float("inf")
            for a, b in zip(got, want):
                worst = max(worst, float((a.float() - b.float()).abs().max()) if a.numel() else 0.0)
    return worst


def _script_or_trace(net, path, shape, trace, example, positions, run, game):
    """The TorchScript module of `net`: scripted, else a trace that equals `net` on real positions."""
    if isinstance(net, torch.jit.ScriptModule):
        return net
    why = "trace=True"
    if not trace:
        try:
            return torch.jit.script(net)
        except Exception as e:  # noqa: BLE001 -- torch raises many kinds; any of them means "trace instead"
            why = "torch.jit.script failed: " + (str(e).strip().splitlines() or [type(e).__name__])[0]
            warnings.warn(f"save_torchscript: {type(net).__name__} does not script ({why}); tracing it "
                          "and checking the trace against the module")
    if example is None:
        example = torch.zeros(2, shape["planes"], shape["height"], shape["width"])
    param = next(net.parameters(), None)
    if param is not None:
        example = example.to(device=param.device, dtype=param.dtype)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)  # the check below says what matters, once
        traced = torch.jit.trace(net, example, check_trace=False)
    if positions is not None:
        positions, source = _check_positions(positions, shape), f"{len(positions)} given positions"
    else:
        positions, source = trace_positions(game, shape, run)
    diff = trace_difference(net, traced, positions)
    if not diff <= TRACE_TOLERANCE:
        raise TraceMismatch(f"{path}: not written: the trace of {type(net).__name__} ({why}) differs from the "
                            f"module by {diff:.3g} (max abs, limit {TRACE_TOLERANCE:g}) on {source}: it has "
                            "control flow or shapes the trace froze; make it scriptable (torch.jit.script)")
    return traced


def save_torchscript(net, path, game, version, example=None, shape=None, trace=False, positions=None,
                     run=None):
    """Writes `net` (any nn.Module keeping the contract of docs/models.md, or
    an already compiled ScriptModule) as a TorchScript model file for `game`
    at model `version`, saved atomically (a fresh PATH.*.tmp, rename) with its
    metadata zerofarm.json; `shape` (planes, height, width, actions) defaults
    to the game's. Returns the metadata dict.

    The module is scripted (torch.jit.script), which keeps its control flow.
    It is traced (torch.jit.trace on `example`, default a float batch of 2
    zero positions) only when scripting fails (a warning says so) or when
    `trace` is True. A trace is then run beside the module, both in eval
    mode, on `positions` (a tensor [N, planes, H, W], e.g. a batch of the
    run's shards), else on positions of `run`'s newest shards, else on random
    0/1 planes, and on a batch of 1: a largest difference above
    TRACE_TOLERANCE (1e-4) in any output raises TraceMismatch and nothing is
    written."""
    require_torch()
    import json
    shape = shape or zf_shards.GAME_SHAPES.get(game)
    if shape is None:
        raise ValueError(f"unknown game {game!r}; known: {', '.join(sorted(zf_shards.GAME_SHAPES))}")
    if not 0 <= int(version) < 2 ** 32:
        raise ValueError(f"version {version} does not fit uint32")
    meta = dict(game=game, version=int(version), **{k: int(shape[k]) for k in ("planes", "height", "width",
                                                                             "actions")})
    net = _unwrap(net)
    was_training = net.training
    net.eval()
    tmp = None
    try:
        compiled = _script_or_trace(net, path, shape, trace, example, positions, run, game)
        tmp = h5_weights.fresh_tmp(path)
        compiled.cpu().save(tmp, _extra_files={MODEL_METADATA: json.dumps(meta)})
        os.replace(tmp, path)
    except BaseException:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        raise
    finally:
        net.train(was_training)
    return meta


def save_aoti(net, path, game, version, max_batch=1024, device="cpu", shape=None):
    """Writes `net` as an AOTInductor package (.pt2, docs/models.md) for
    `device` ("cpu" or "cuda"), fp32, batches of 1 to `max_batch`, with
    zerofarm.json at the archive's top. Needs PyTorch 2.5+ (and a zerofarm
    built with LibTorch 2.x to run it); not run with Debian's 1.13."""
    require_torch()
    import json
    import shutil
    import tempfile
    import zipfile
    if not hasattr(getattr(torch, "_inductor", None), "aoti_compile_and_package"):
        raise RuntimeError(f"a .pt2 package needs PyTorch 2.5+; this is {torch.__version__}")
    shape = shape or zf_shards.GAME_SHAPES.get(game)
    if shape is None:
        raise ValueError(f"unknown game {game!r}")
    meta = dict(game=game, version=int(version), **{k: int(shape[k]) for k in ("planes", "height", "width",
                                                                             "actions")})
    net = _unwrap(net).eval().float().to(device)
    example = torch.zeros(2, shape["planes"], shape["height"], shape["width"], device=device)
    batch = torch.export.Dim("batch", min=1, max=max_batch)
    with torch.no_grad():
        exported = torch.export.export(net, (example,), dynamic_shapes=({0: batch},))
    tmp_dir = tempfile.mkdtemp(dir=os.path.dirname(os.path.abspath(path)))  # the package path must end in .pt2
    try:
        tmp = os.path.join(tmp_dir, "model.pt2")
        torch._inductor.aoti_compile_and_package(exported, package_path=tmp)
        with zipfile.ZipFile(tmp, "a") as z:  # stored, at the top, where LibTorch's loader does not look
            z.writestr(MODEL_METADATA, json.dumps(meta))
        os.replace(tmp, path)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    return meta


# ---- CLI -----------------------------------------------------------------------

def _torch_load(path):
    """Loads a .pt with torch's restricted unpickler only, never the full one.

    A .pt file is a pickle: unpickled without weights_only it can run any code.
    So there is no fallback: a torch without weights_only (before 1.13) is
    refused, and so is any file the restricted unpickler rejects, whatever it
    raises (a crafted file can make it raise TypeError, which an old fallback
    took for "no weights_only" and retried unrestricted).
    """
    import inspect
    try:
        has_weights_only = "weights_only" in inspect.signature(torch.load).parameters
    except (TypeError, ValueError):
        has_weights_only = False
    if not has_weights_only:
        raise ValueError(f"this torch ({torch.__version__}) has no torch.load(weights_only=True); refusing to "
                         f"unpickle {path} (it could run code): use torch >= 1.13")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except OSError:
        raise
    except Exception as e:  # noqa: BLE001 -- every rejection is a refusal, never a retry
        raise ValueError(f"{path}: refused by torch's restricted unpickler (weights_only=True): "
                         f"{type(e).__name__}: {e}") from None


def _version_from_file(obj):
    """The model version a checkpoint dict of to-state-dict keeps, else None."""
    if isinstance(obj, dict) and isinstance(obj.get("model_version"), int):
        return obj["model_version"]
    return None


def _state_from_file(obj, path):
    if isinstance(obj, dict):
        for key in ("state_dict", "model", "model_state_dict"):
            if key in obj and isinstance(obj[key], dict):
                return obj[key]
        if all(hasattr(v, "shape") for v in obj.values()):
            return obj
    raise ValueError(f"{path} holds neither a state_dict nor a checkpoint with one "
                     "under 'state_dict' or 'model'")


def _atomic_torch_save(obj, path):
    tmp = h5_weights.fresh_tmp(path)
    try:
        torch.save(obj, tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _cmd_to_state_dict(args):
    net = load_zerofarm_weights(args.weights)
    # A checkpoint dict, so the model version (the .h5's attribute) travels with the tensors.
    _atomic_torch_save({"state_dict": net.state_dict(), "model_version": int(net.version),
                        "config": dict(net.config)}, args.out)
    print(f"{args.out}: {describe(net.config, net.version)} ({len(net.state_dict())} tensors)")


def _cmd_from_state_dict(args):
    obj = _torch_load(args.state_dict)
    state = strip_prefixes(_state_from_file(obj, args.state_dict))
    config = infer_config(state, args.game, args.height, args.width)
    net = ZeroNet.from_config(config)
    net.load_state_dict(state, strict=True)
    version = args.version if args.version is not None else (_version_from_file(obj) or 0)
    save_zerofarm_weights(net, args.weights, args.game, version)
    print(f"{args.weights}: {describe(config, version)}")


def _cmd_init(args):
    torch.manual_seed(args.seed)
    if args.game in zf_shards.GAME_SHAPES:
        net = ZeroNet.for_game(args.game, args.blocks, args.filters, args.value_hidden, args.value_channels)
    else:
        raise ValueError(f"unknown game {args.game!r}; known: {', '.join(sorted(zf_shards.GAME_SHAPES))}")
    save_zerofarm_weights(net, args.weights, args.game, args.version)
    print(f"{args.weights}: {describe(net.config, args.version)} (random, seed {args.seed})")


def _cmd_to_torchscript(args):
    net = load_zerofarm_weights(args.weights)
    float_net = net.float()
    save_torchscript(float_net, args.out, net.config["game"], net.version, shape=net.config, trace=args.trace,
                     run=args.run)
    how = "traced, equal to the module on real positions" if args.trace else "scripted"
    print(f"{args.out}: TorchScript of {describe(net.config, net.version)} ({how})")


def _cmd_to_aoti(args):
    net = load_zerofarm_weights(args.weights)
    save_aoti(net.float(), args.out, net.config["game"], net.version, args.max_batch, args.device, net.config)
    print(f"{args.out}: AOTInductor package ({args.device}) of {describe(net.config, net.version)}")


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Convert zerofarm weights files (HDF5) to and from PyTorch state_dicts.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("to-state-dict", help="weights file -> torch.save'd state_dict")
    p.add_argument("weights", metavar="WEIGHTS.h5")
    p.add_argument("out", metavar="OUT.pt")
    p.set_defaults(func=_cmd_to_state_dict)
    p = sub.add_parser("from-state-dict", help="torch.save'd state_dict (or checkpoint) -> weights file")
    p.add_argument("state_dict", metavar="IN.pt")
    p.add_argument("weights", metavar="WEIGHTS.h5")
    p.add_argument("--game", required=True, help="the game it plays (connect4, tictactoe, ...)")
    p.add_argument("--version", type=int, default=None,
                   help="model version to record (default: the .pt's model_version, else 0)")
    p.add_argument("--height", type=int, help="board height, for a game this tool does not know")
    p.add_argument("--width", type=int, help="board width, for a game this tool does not know")
    p.set_defaults(func=_cmd_from_state_dict)
    p = sub.add_parser("init", help="write a randomly initialised network (PyTorch's default init)")
    p.add_argument("weights", metavar="WEIGHTS.h5")
    p.add_argument("--game", required=True)
    p.add_argument("--blocks", type=int, default=DEFAULT_BLOCKS)
    p.add_argument("--filters", type=int, default=DEFAULT_FILTERS)
    p.add_argument("--value-hidden", type=int, default=DEFAULT_VALUE_HIDDEN)
    p.add_argument("--value-channels", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--version", type=int, default=0)
    p.set_defaults(func=_cmd_init)
    p = sub.add_parser("to-torchscript", help="weights file -> TorchScript model file (docs/models.md)")
    p.add_argument("weights", metavar="WEIGHTS.h5")
    p.add_argument("out", metavar="MODEL.pt")
    p.add_argument("--trace", action="store_true", help="trace instead of script (checked against the module)")
    p.add_argument("--run", help="compare the trace on positions of this run's newest shards")
    p.set_defaults(func=_cmd_to_torchscript)
    p = sub.add_parser("to-aoti", help="weights file -> AOTInductor package (.pt2; PyTorch 2.5+, docs/models.md)")
    p.add_argument("weights", metavar="WEIGHTS.h5")
    p.add_argument("out", metavar="MODEL.pt2")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--max-batch", type=int, default=1024, help="the largest batch it takes (the farm's --max-batch)")
    p.set_defaults(func=_cmd_to_aoti)
    args = parser.parse_args(argv)
    try:
        require_torch()
        args.func(args)
    except TraceMismatch as e:
        print(f"zf_weights_torch {args.command}: {e}", file=sys.stderr)
        return 3
    except (ImportError, OSError, ValueError, KeyError, RuntimeError) as e:
        print(f"zf_weights_torch {args.command}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
