#!/usr/bin/env python3
"""Read zerofarm self-play shards (HDF5) from Python: a module and a CLI.

Needs only h5py and numpy. Full schema: docs/schema.md. In short, one shard
``PREFIX-NNNNNN.h5`` holds n positions and g games:

Root attributes
    schema_version (int, 1), game (str), planes, height, width, actions (int),
    plane_names (str array [planes]), search (str), config (str), run_id (str),
    zerofarm_version (str), host (str), created (str, ISO 8601 UTC),
    model_version_min, model_version_max (uint32), shard_index (uint64),
    positions (uint64, = n), games (uint64, = g).
``/worker_commit``  uint64 [workers]: per-worker queue sequence committed through.
``/positions/``     one row per recorded position, grouped by game:
    features      uint8   [n, planes, height, width]  planes from the mover's view
    policy        float32 [n, actions]                MCTS visit distribution (sums to 1)
    z             float32 [n]      final result from the mover's view: +1 / 0 / -1
    root_value    float32 [n]      search value of the root, mover's view, in [-1, 1]
    ply           int16   [n]      plies played before the position
    game_id       uint64  [n]      the game (a row of /games/game_id)
    model_version uint32  [n]      network version that searched it (0 = random)
``/games/``         one row per game:
    game_id uint64 [g], result int8 [g] (winner 0 or 1, -1 draw), length int32 [g]
    (plies), worker int32 [g], seed uint64 [g], first_position int64 [g] and
    position_count int32 [g] (its rows in /positions), moves int16 [total]
    with moves_offset int64 [g + 1]: game i played moves[moves_offset[i]:moves_offset[i+1]].

Shards are written as ``*.h5.tmp`` and renamed when complete: ``iter_shards``
never returns a ``.tmp`` file, so it is safe to call while a farm is running.

Module use::

    import zf_shards
    paths = zf_shards.iter_shards("runs/run1")
    data = zf_shards.load_positions(paths[-20:])      # a sliding window
    x = data["features"].astype("float32")            # [N, planes, H, W]
    pi, z = data["policy"], data["z"]

CLI::

    zf_shards.py SHARD.h5 --check     # validate; exit 0 if fine, 1 if not
    zf_shards.py --summary DIR        # counts per shard and in total
"""

import argparse
import glob
import os
import sys

import h5py
import numpy as np

SCHEMA_VERSION = 1

POSITION_FIELDS = ("features", "policy", "z", "root_value", "ply", "game_id", "model_version")
GAME_FIELDS = ("game_id", "result", "length", "worker", "seed", "first_position",
               "position_count", "moves", "moves_offset")


def _attr(value):
    """An attribute as a plain Python value (str for strings, int/float, list)."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, np.ndarray):
        return [_attr(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return value.item()
    return value


def read_meta(path):
    """The root attributes of a shard as a dict (plus ``worker_commit``).

    Raises ValueError if the file is not a zerofarm shard or has a newer schema.
    """
    with h5py.File(path, "r") as f:
        return _meta(f, path)


def _meta(f, path):
    if "schema_version" not in f.attrs:
        raise ValueError(f"{path} is not a zerofarm shard (missing attribute schema_version)")
    meta = {k: _attr(v) for k, v in f.attrs.items()}
    if meta["schema_version"] > SCHEMA_VERSION:
        raise ValueError(f"{path} has shard schema version {meta['schema_version']}; "
                         f"this reader reads up to {SCHEMA_VERSION}")
    meta["worker_commit"] = f["worker_commit"][()] if "worker_commit" in f else np.zeros(0, np.uint64)
    return meta


def load_shard(path):
    """Everything in one shard as a dict of numpy arrays.

    Keys: the /positions datasets by name ("features", "policy", "z", ...),
    the /games datasets prefixed "games/" ("games/game_id", "games/moves", ...),
    "worker_commit", and "meta" (the root attributes as a dict).
    """
    with h5py.File(path, "r") as f:
        out = {"meta": _meta(f, path)}
        for name in POSITION_FIELDS:
            out[name] = f["positions"][name][()]
        for name in GAME_FIELDS:
            out["games/" + name] = f["games"][name][()]
        out["worker_commit"] = out["meta"]["worker_commit"]
    return out


def is_shard(path):
    """True if `path` is an HDF5 file with a schema_version root attribute."""
    try:
        with h5py.File(path, "r") as f:
            return "schema_version" in f.attrs
    except OSError:
        return False


def iter_shards(run_or_dir):
    """Sorted paths of the complete shards (*.h5, never *.h5.tmp) under a run
    directory or any directory, searched recursively. Other .h5 files (the
    weights in a run's models directory) are left out, with a warning on
    stderr for a .h5 file that HDF5 cannot open. A path to a single file is
    returned as a one-element list."""
    if os.path.isfile(run_or_dir):
        return [run_or_dir]
    paths = []
    for path in sorted(glob.glob(os.path.join(glob.escape(run_or_dir), "**", "*.h5"), recursive=True)):
        if is_shard(path):
            paths.append(path)
        elif not h5py.is_hdf5(path):
            print(f"zf_shards: skipping {path}: not an HDF5 file", file=sys.stderr)
    return paths


def load_positions(paths, fields=POSITION_FIELDS):
    """The /positions datasets of several shards concatenated in order: a dict
    field -> array. All shards must have the same board shape and actions."""
    parts = {name: [] for name in fields}
    shape = None
    for path in paths:
        with h5py.File(path, "r") as f:
            meta = _meta(f, path)
            this = (meta["game"], meta["planes"], meta["height"], meta["width"], meta["actions"])
            if shape is None:
                shape = this
            elif this != shape:
                raise ValueError(f"{path} is {this}, the shards before it are {shape}")
            for name in fields:
                parts[name].append(f["positions"][name][()])
    return {name: (np.concatenate(arrays) if arrays else np.zeros(0)) for name, arrays in parts.items()}


def game_moves(shard, i):
    """The moves of game i of a shard: `shard` is a path or a load_shard() dict."""
    if isinstance(shard, dict):
        off = shard["games/moves_offset"]
        return shard["games/moves"][off[i]:off[i + 1]]
    with h5py.File(shard, "r") as f:
        off = f["games/moves_offset"][i:i + 2]
        return f["games/moves"][off[0]:off[1]]


def game_positions(shard, i):
    """The /positions rows of game i: a dict field -> array (slices of a
    load_shard() dict, or read from a path)."""
    if isinstance(shard, dict):
        b = int(shard["games/first_position"][i])
        e = b + int(shard["games/position_count"][i])
        return {name: shard[name][b:e] for name in POSITION_FIELDS}
    with h5py.File(shard, "r") as f:
        b = int(f["games/first_position"][i])
        e = b + int(f["games/position_count"][i])
        return {name: f["positions"][name][b:e] for name in POSITION_FIELDS}


def check_shard(path):
    """Validates a shard; returns a list of problems (empty if it is fine)."""
    problems = []
    try:
        d = load_shard(path)
    except (OSError, KeyError, ValueError) as e:
        return [f"cannot read: {e}"]
    m = d["meta"]
    n, g = int(m.get("positions", -1)), int(m.get("games", -1))
    shapes = {
        "features": (n, m["planes"], m["height"], m["width"]),
        "policy": (n, m["actions"]),
        "z": (n,), "root_value": (n,), "ply": (n,), "game_id": (n,), "model_version": (n,),
        "games/game_id": (g,), "games/result": (g,), "games/length": (g,), "games/worker": (g,),
        "games/seed": (g,), "games/first_position": (g,), "games/position_count": (g,),
        "games/moves_offset": (g + 1,),
    }
    for name, shape in shapes.items():
        if d[name].shape != tuple(shape):
            problems.append(f"{name} has shape {d[name].shape}, expected {tuple(shape)}")
    if problems:
        return problems
    if len(m.get("plane_names", [])) != m["planes"]:
        problems.append(f"{len(m.get('plane_names', []))} plane names for {m['planes']} planes")
    if n:
        sums = d["policy"].astype(np.float64).sum(axis=1)
        bad = np.flatnonzero(np.abs(sums - 1.0) > 1e-3)
        if bad.size:
            problems.append(f"{bad.size} policy rows do not sum to 1 (row {bad[0]}: {sums[bad[0]]:.6f})")
        if (d["policy"] < 0).any():
            problems.append("negative policy values")
        bad = np.flatnonzero(~np.isin(d["z"], (-1.0, 0.0, 1.0)))
        if bad.size:
            problems.append(f"{bad.size} z values not in {{-1, 0, 1}} (row {bad[0]}: {d['z'][bad[0]]})")
        rv = d["root_value"]
        if not np.all(np.isfinite(rv)) or (np.abs(rv) > 1.0 + 1e-5).any():
            problems.append("root_value outside [-1, 1]")
        missing = np.setdiff1d(d["game_id"], d["games/game_id"])
        if missing.size:
            problems.append(f"{missing.size} position game_ids are not in /games (e.g. {missing[0]})")
        mv = d["model_version"]
        if mv.min() != m.get("model_version_min") or mv.max() != m.get("model_version_max"):
            problems.append("model_version_min/max attributes disagree with /positions/model_version")
    if np.unique(d["games/game_id"]).size != g:
        problems.append("duplicate game ids in /games")
    if not np.isin(d["games/result"], (-1, 0, 1)).all():
        problems.append("game results not in {-1, 0, 1}")
    off = d["games/moves_offset"]
    if off[0] != 0 or (np.diff(off) < 0).any() or off[-1] != d["games/moves"].size:
        problems.append("moves_offset is not a valid index into moves")
    elif not np.array_equal(np.diff(off), d["games/length"]):
        problems.append("games/length disagrees with moves_offset")
    first, count = d["games/first_position"], d["games/position_count"]
    expected_first = np.concatenate(([0], np.cumsum(count)[:-1])) if g else first
    if (count < 0).any() or not np.array_equal(first, expected_first) or count.sum() != n:
        problems.append("first_position/position_count do not tile /positions")
    elif n and not np.array_equal(np.repeat(d["games/game_id"], count), d["game_id"]):
        problems.append("positions/game_id disagrees with the games' position ranges")
    return problems


def _summary_line(path, m):
    return (f"{path}: {m['game']} {m['planes']}x{m['height']}x{m['width']}, "
            f"{m['positions']} positions, {m['games']} games, "
            f"models {m.get('model_version_min')}..{m.get('model_version_max')}, "
            f"shard {m.get('shard_index')}, {m.get('created')}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("shards", nargs="*", help="shard files to check or describe")
    parser.add_argument("--check", action="store_true", help="validate the given shards")
    parser.add_argument("--summary", metavar="DIR", help="counts of every shard under DIR")
    args = parser.parse_args(argv)
    if not args.shards and not args.summary:
        parser.error("give shard files (with --check) or --summary DIR")

    status = 0
    for path in args.shards:
        if args.check:
            problems = check_shard(path)
            if problems:
                print(f"{path}: INVALID: " + "; ".join(problems))
                status = 1
            else:
                print(_summary_line(path, read_meta(path)) + ": OK")
        else:
            try:
                print(_summary_line(path, read_meta(path)))
            except (OSError, ValueError) as e:
                print(f"{path}: {e}")
                status = 1
    if args.summary:
        paths = iter_shards(args.summary)
        positions = games = 0
        for path in paths:
            try:
                m = read_meta(path)
            except (OSError, ValueError) as e:
                print(f"{path}: {e}")
                status = 1
                continue
            positions += int(m["positions"])
            games += int(m["games"])
            print(_summary_line(path, m))
        print(f"{args.summary}: {len(paths)} shards, {positions} positions, {games} games")
    return status


if __name__ == "__main__":
    sys.exit(main())
