#!/usr/bin/env python3
"""Read and write zerofarm weights files (HDF5) from Python: h5py and numpy,
torch optional.

Layout (docs/schema.md, "Weights files"): root attributes format =
"zerofarm-weights", format_version = 1 (2 for a net with a score head, which
also has score_plies; 3 for a value head of more than one channel, which has
value_channels, and score_plies where it has a score head), game (str), planes, height, width, actions, blocks,
filters, value_hidden (int), version (uint32 model version);
one dataset per tensor at the root, named as in PyTorch's state_dict
("stem.conv.weight"), float32 or int64, in the tensor's shape.

    import h5_weights
    h5_weights.save_weights("models/model-000007.h5", model.state_dict(), cfg, version=7)
    state, cfg, version = h5_weights.load_weights("models/model-000007.h5", torch=True)
    model.load_state_dict(state)

CLI: h5_weights.py --show FILE   (attributes and tensor shapes)
"""

import argparse
import os
import sys
import tempfile

import numpy as np

try:
    import h5py
except ImportError as _e:  # what needs no HDF5 still imports (zf_weights_torch's net, TorchScript, .pt2)
    _H5PY_ERROR = str(_e)

    class _NoH5py:
        def __getattr__(self, name):
            raise ImportError(f"h5py is not installed ({_H5PY_ERROR}); h5_weights needs it to read and write weights files")

    h5py = _NoH5py()

FORMAT = "zerofarm-weights"
FORMAT_VERSION = 3  # the newest read; written: 1 (scalar value head), 2 (score_plies), 3 (value_channels)
CONFIG_KEYS = ("game", "planes", "height", "width", "actions", "blocks", "filters", "value_hidden")


def _to_numpy(t):
    if hasattr(t, "detach"):  # a torch.Tensor
        t = t.detach().cpu().numpy()
    a = np.asarray(t)
    return a.astype(np.int64) if a.dtype.kind in "iub" else a.astype(np.float32)


def fresh_tmp(path):
    """A new temporary file beside `path`, made exclusively (O_EXCL: never a
    file or link someone planted at a guessable name), with the mode a new
    file gets under this umask, for writing and then renaming over `path`."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)),
                               prefix=os.path.basename(path) + ".", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)
    os.close(fd)
    return tmp


def save_weights(path, state_dict, config, version):
    """Writes `state_dict` (name -> tensor or array) with `config` (a dict with
    CONFIG_KEYS, score_plies > 0 for a score head, value_channels > 1 for a
    value head of that many channels) and model `version`,
    atomically: a fresh PATH.*.tmp (fresh_tmp), fsync, rename."""
    missing = [k for k in CONFIG_KEYS if k not in config]
    if missing:
        raise ValueError(f"config lacks {', '.join(missing)}")
    tmp = fresh_tmp(path)
    try:
        with h5py.File(tmp, "w", track_order=True) as f:
            f.attrs["format"] = FORMAT
            score_plies = int(config.get("score_plies", 0))
            value_channels = int(config.get("value_channels", 1))
            f.attrs["format_version"] = np.int32(3 if value_channels != 1 else 2 if score_plies > 0 else 1)
            if value_channels != 1:
                f.attrs["value_channels"] = np.int32(value_channels)
            if score_plies > 0:
                f.attrs["score_plies"] = np.int32(score_plies)
            f.attrs["game"] = str(config["game"])
            for k in CONFIG_KEYS[1:]:
                f.attrs[k] = np.int32(config[k])
            f.attrs["version"] = np.uint32(version)
            for name, t in state_dict.items():
                f.create_dataset(name, data=_to_numpy(t))
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dir_fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


# The most tensor bytes a weights file may hold: 10x a 20-block x 256-filter net
# (94.7 MB), so that a hostile file's shapes cannot size an allocation.
MAX_WEIGHTS_BYTES = 1 << 30


def load_weights(path, torch=False):
    """Returns (state_dict, config, version); tensors are numpy arrays, or
    torch tensors with torch=True. Raises ValueError for a non-weights file."""
    with h5py.File(path, "r") as f:
        fmt = f.attrs.get("format")
        if isinstance(fmt, bytes):
            fmt = fmt.decode()
        if fmt != FORMAT:
            raise ValueError(f"{path}: not a zerofarm weights file")
        if int(f.attrs["format_version"]) > FORMAT_VERSION:
            raise ValueError(f"{path}: weights format version {int(f.attrs['format_version'])}; "
                             f"this reader reads up to {FORMAT_VERSION}")
        config = {k: (f.attrs[k] if k == "game" else int(f.attrs[k])) for k in CONFIG_KEYS}
        if "score_plies" in f.attrs:  # a score head (format version 2 or 3); absent: the scalar head
            config["score_plies"] = int(f.attrs["score_plies"])
        if "value_channels" in f.attrs:  # format version 3; absent: one channel
            config["value_channels"] = int(f.attrs["value_channels"])
        if isinstance(config["game"], bytes):
            config["game"] = config["game"].decode()
        version = int(f.attrs["version"])
        datasets = {name: obj for name, obj in f.items() if isinstance(obj, h5py.Dataset)}
        size = sum(d.size * d.dtype.itemsize for d in datasets.values())
        if size > MAX_WEIGHTS_BYTES:  # sized from the shapes before anything is read
            raise ValueError(f"{path}: its tensors hold {size} bytes, more than any net here "
                             f"({MAX_WEIGHTS_BYTES}); not read")
        state = {name: d[()] for name, d in datasets.items()}
    if torch:
        import torch as _torch
        state = {k: _torch.from_numpy(np.array(v)) for k, v in state.items()}
    return state, config, version


def describe_net(config):
    """"connect4 3x6x7 -> 7, 6 blocks x 64 filters, value head 64" (and " of C channels" where
    value_channels is not 1): the net of a weights file's config, as the C++ logs it."""
    return (f"{config.get('game') or '?'} {config['planes']}x{config['height']}x{config['width']} -> "
            f"{config['actions']}, {config['blocks']} blocks x {config['filters']} filters, "
            f"value head {config['value_hidden']}"
            f"{' of %d channels' % config['value_channels'] if config.get('value_channels', 1) != 1 else ''}")


def main(argv=None):
    parser = argparse.ArgumentParser(description="Show a zerofarm weights file.")
    parser.add_argument("--show", metavar="FILE", required=True)
    args = parser.parse_args(argv)
    try:
        state, config, version = load_weights(args.show)
    except (OSError, ValueError, KeyError) as e:
        print(f"{args.show}: {e}", file=sys.stderr)
        return 1
    print(f"{args.show}: {describe_net(config)}"
          f"{', score head over %d plies' % config['score_plies'] if config.get('score_plies') else ''}, "
          f"version {version}")
    for name, a in state.items():
        print(f"  {name:40s} {str(a.dtype):8s} {list(a.shape)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
