#!/usr/bin/env python3
"""Read zerofarm self-play shards (HDF5) from Python: a module and a CLI.

Needs only h5py and numpy. Full schema: docs/schema.md. In short, one shard
``PREFIX-NNNNNN.h5`` holds n positions and g games:

Root attributes
    schema_version (int, 2; 1 is read too), game (str), planes, height, width, actions (int),
    plane_names (str array [planes]), search (str), config (str), run_id (str),
    zerofarm_version (str), host (str), host_id (str), epoch (uint32),
    created (str, ISO 8601 UTC), model_version_min, model_version_max (uint32), shard_index (uint64),
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
    full_search   uint8   [n]      1 = full search (use its policy as a target), 0 =
                                   playout-capped fast search (value target only);
                                   absent in older shards: read as all 1
``/games/``         one row per game:
    game_id uint64 [g], result int8 [g] (winner 0 or 1, -1 draw), length int32 [g]
    (plies), worker int32 [g], seed uint64 [g], first_position int64 [g] and
    position_count int32 [g] (its rows in /positions), moves int16 [total]
    with moves_offset int64 [g + 1]: game i played moves[moves_offset[i]:moves_offset[i+1]].
    resigned int8 [g] (the player who resigned, -1 none) and would_resign int8 [g]
    (play-through game: first player that would have resigned, -1 none); absent
    in older shards: read as all -1.

Shards are written as ``*.h5.tmp`` and renamed when complete: ``iter_shards``
never returns a ``.tmp`` file, so it is safe to call while a farm is running.
A run of several hosts (docs/scale-out.md) has one directory per host,
``RUN/shards/HOST/``; ``iter_shards(RUN)`` returns every host's shards and
raises ValueError for a host directory of another run (its shards' run_id
differs from ``RUN/run_id``); ``host_counts(RUN)`` gives per-host totals.

Module use::

    import zf_shards
    paths = zf_shards.iter_shards("runs/run1")
    data = zf_shards.load_positions(paths[-20:])      # a sliding window
    x = data["features"].astype("float32")            # [N, planes, H, W]
    pi, z = data["policy"], data["z"]

    data = zf_shards.load_run("runs/run1", last_shards=20)   # the same, for a run

    # With PyTorch (the class exists only when ``import torch`` works; the
    # rest of the module never imports torch):
    ds = zf_shards.ShardDataset("runs/run1", augment=True)   # (x, pi, z) float32
    loader = torch.utils.data.DataLoader(ds, batch_size=256, shuffle=True)

Symmetries: a shard carries its game's (``/symmetry``: the C++
Game::CellMap / ActionMap); ``shard_symmetry_maps(path)`` reads them and
``apply_symmetry(features, policy, game, s, maps)`` applies one. Shards
written before they carried them: ``symmetry_count(game)`` and
``symmetry_maps(game, height, width)``, this module's own tables (Connect
Four and tic-tac-toe only). Training with shards is described in docs/training.md.

Shards from others: libhdf5, and h5py with it, crashes on some damaged
files (docs/reliability.md). So every shard this module opens is first read
by zerofarm's checker, ``zerofarm __check-h5`` (the C++ reader, in a process
of its own), where a zerofarm binary is found: ``$ZF_CHECKER``, else
``zerofarm`` on PATH, else ``build/zerofarm`` beside ``tools/``
(``ZF_CHECKER=none``: no checker). A shard that crashes it raises
ShardRefused (a ValueError) with its one line, and the listings (iter_shards,
ShardFollower) skip it with that line on stderr; one it refuses for another
reason is read by this module's own checks, which say what is wrong in their
own words (the checker catches crashes only). And, checker or not, each dataset's declared
size (shape x item size) is checked against the bytes the file stores before
it is read, so a hostile shape cannot make this process allocate without bound.

CLI::

    zf_shards.py SHARD.h5 --check     # validate; exit 0 if fine, 1 if not
    zf_shards.py --summary DIR        # counts per shard, per host and in total
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys

import numpy as np

try:
    import h5py
except ImportError as _e:  # what needs no HDF5 still imports (zf_weights_torch's net, TorchScript, .pt2)
    _H5PY_ERROR = str(_e)

    class _NoH5py:
        def __getattr__(self, name):
            raise ImportError(f"h5py is not installed ({_H5PY_ERROR}); zf_shards needs it to read shards")

    h5py = _NoH5py()

try:
    import zf_manifest
except ImportError:  # imported by path, tools/ not on sys.path
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import zf_manifest

SCHEMA_VERSION = 2

POSITION_FIELDS = ("features", "policy", "z", "root_value", "ply", "game_id", "model_version",
                   "full_search")
GAME_FIELDS = ("game_id", "result", "length", "worker", "seed", "first_position",
               "position_count", "moves", "moves_offset", "resigned", "would_resign")

# Columns of schema 2 (and of some shards written as 1 before the bump), with the
# value a shard without them implies.
_OPTIONAL_POSITIONS = {"full_search": (np.uint8, 1)}
_OPTIONAL_GAMES = {"resigned": (np.int8, -1), "would_resign": (np.int8, -1)}


# ---- shards from others: the checker process and the size checks ---------------

CHECKER_ENV = "ZF_CHECKER"
_CHECK_TAG = "zf-check-h5 "  # the protocol's lines (src/io/h5_check.cpp)
_CHECK_RANK = {"shard-meta": 1, "shard-games": 2, "shard": 3}  # what each kind reads, in order
_FILES_PER_CHECKER = 128
# Deaths that stopping this process explains, not the file being read (as CheckH5Files has them).
_STOPPED_FROM_OUTSIDE = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGPIPE)
_checked = {}  # (path, dev, inode, size, mtime) -> (rank checked, verdict)
# Deflate expands at most about 1032:1 (zlib's own bound); a chunk's few bytes of overhead on top.
_DEFLATE_RATIO = 1032
_SLACK_BYTES = 1 << 20


class ShardRefused(ValueError):
    """A shard the checker refused, or whose datasets declare more than the
    file can hold: the message is one line naming the file."""


def checker_binary():
    """The zerofarm binary that checks shards before this module reads them
    ($ZF_CHECKER, else zerofarm on PATH, else build/zerofarm beside tools/),
    or None: ZF_CHECKER=none, or none found."""
    named = os.environ.get(CHECKER_ENV, "").strip()
    if named.lower() in ("none", "0", "off"):
        return None
    if named:
        if not (os.path.isfile(named) and os.access(named, os.X_OK)):
            raise RuntimeError(f"{CHECKER_ENV}={named} is not an executable file")
        return named
    found = shutil.which("zerofarm")
    if found:
        return found
    beside = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "build", "zerofarm")
    return os.path.normpath(beside) if os.path.isfile(beside) and os.access(beside, os.X_OK) else None


def _describe_death(code):
    if code < 0:
        return f"killed by signal {-code} ({signal.strsignal(-code) or 'unknown'})"
    return f"exit code {code}"


def _run_checker(binary, kind, paths):
    """One verdict per path ("" = read whole without error) from one checker
    process, and a file that killed it refused (as CheckH5Files does)."""
    verdicts = []
    while len(verdicts) < len(paths):
        rest = paths[len(verdicts):len(verdicts) + _FILES_PER_CHECKER]
        p = subprocess.run([binary, "__check-h5", kind] + rest, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
        lines = p.stdout.decode("utf-8", "replace").splitlines()
        said = [line[len(_CHECK_TAG):] for line in lines if line.startswith(_CHECK_TAG)]
        if not said or said[0] != "ready" or -p.returncode in _STOPPED_FROM_OUTSIDE:
            other = next((line for line in reversed(lines) if not line.startswith(_CHECK_TAG)), "")
            raise RuntimeError(f"the HDF5 checker {binary} failed ({_describe_death(p.returncode)}"
                               + (f": {other[:300]}" if other else "") + ")")
        for line in said[1:]:
            verdicts.append("" if line == "ok" else line[len("error "):] if line.startswith("error ") else line)
        if len(verdicts) < len(paths) and len(said) - 1 < len(rest):  # it died reading the next one
            verdicts.append(f"{paths[len(verdicts)]}: refused: reading it crashed libhdf5 "
                            f"({_describe_death(p.returncode)}); a damaged or hostile file")
    return verdicts[:len(paths)]


def _key(path):
    st = os.stat(path)
    return (os.path.abspath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def check_shards(paths, kind="shard"):
    """Has the checker read each of `paths` as `kind` ("shard-meta": the
    attributes; "shard": every dataset), all in as few processes as it can;
    returns the verdicts, "" for a shard it read whole, else its one line.
    A file changed since its check is checked again. No checker: all ""."""
    binary = checker_binary()
    if binary is None:
        return ["" for _ in paths]
    keys = []
    for path in paths:
        try:
            keys.append(_key(path))
        except OSError:
            keys.append(None)  # h5py says what is wrong with it
    rank = _CHECK_RANK[kind]
    # To check: a file not read yet as far as `kind` reads (a refusal stands for every kind).
    unchecked = [i for i, k in enumerate(keys) if k is not None and _checked.get(k, (0, ""))[0] < rank
            and not _checked.get(k, (0, ""))[1]]
    for i, verdict in zip(unchecked, _run_checker(binary, kind, [os.fspath(paths[i]) for i in unchecked])):
        _checked[keys[i]] = (rank, verdict)
    return [_checked[k][1] if k in _checked else "" for k in keys]


def crashed_checker(path, verdict):
    """Whether `verdict` (check_shards's for `path`) says the file killed the
    checker: a crash, or its CPU or memory limit."""
    return verdict.startswith(f"{os.fspath(path)}: refused: reading it crashed libhdf5 (")


def _open(path, kind="shard"):
    """h5py.File(path, "r"), once the checker has read it as `kind` without
    crashing; ShardRefused for one that crashed it."""
    verdict = check_shards([path], kind)[0]
    if crashed_checker(path, verdict):
        raise ShardRefused(verdict)
    return h5py.File(path, "r")


def _sized(ds):
    """`ds` once its declared size fits what the file stores for it."""
    if ds.shape is None:  # a null dataspace: nothing to read
        return ds
    declared = ds.dtype.itemsize
    for n in ds.shape:
        declared *= int(n)  # Python ints: no overflow
    stored = ds.id.get_storage_size()
    bound = stored * (_DEFLATE_RATIO if ds.chunks else 1) + _SLACK_BYTES
    if declared > bound:
        raise ShardRefused(f"{ds.file.filename}: {ds.name} declares {declared} bytes but the file stores "
                           f"{stored}: a damaged or hostile shard")
    return ds


def _column(group, name, rows, optional, sel=slice(None)):
    """group[name][sel], or the default column of an older shard without it."""
    if name in group:
        return _sized(group[name])[sel]
    dtype, value = optional[name]
    return np.full(len(range(rows)[sel]), value, dtype=dtype)


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
    with _open(path, "shard-meta") as f:
        return _meta(f, path)


def _meta(f, path):
    if "schema_version" not in f.attrs:
        raise ValueError(f"{path} is not a zerofarm shard (missing attribute schema_version)")
    meta = {k: _attr(v) for k, v in f.attrs.items()}
    if not isinstance(meta["schema_version"], (int, np.integer)):
        raise ValueError(f"{path} is not a zerofarm shard (schema_version is not a number)")
    missing = [k for k in ("game", "planes", "height", "width", "positions", "games") if k not in meta]
    if missing:
        raise ValueError(f"{path} is not a zerofarm shard (missing attribute {', '.join(missing)})")
    if meta["schema_version"] > SCHEMA_VERSION:
        raise ValueError(f"{path} has shard schema version {meta['schema_version']}; "
                         f"this reader reads up to {SCHEMA_VERSION}")
    # The counts size what readers allocate: they must be what the datasets hold.
    rows = f["positions/features"].shape[0] if "positions/features" in f else None
    if not isinstance(meta["positions"], (int, np.integer)) or meta["positions"] != rows:
        raise ValueError(f"{path}: the positions attribute ({meta['positions']}) is not the "
                         f"{rows} rows of /positions/features")
    meta["worker_commit"] = _sized(f["worker_commit"])[()] if "worker_commit" in f else np.zeros(0, np.uint64)
    return meta


def load_shard(path):
    """Everything in one shard as a dict of numpy arrays.

    Keys: the /positions datasets by name ("features", "policy", "z", ...),
    the /games datasets prefixed "games/" ("games/game_id", "games/moves", ...),
    "worker_commit", and "meta" (the root attributes as a dict).
    """
    with _open(path) as f:
        out = {"meta": _meta(f, path)}
        n, g = int(out["meta"]["positions"]), int(out["meta"]["games"])
        for name in POSITION_FIELDS:
            out[name] = _column(f["positions"], name, n, _OPTIONAL_POSITIONS)
        for name in GAME_FIELDS:
            out["games/" + name] = _column(f["games"], name, g, _OPTIONAL_GAMES)
        out["worker_commit"] = out["meta"]["worker_commit"]
    return out


def is_shard(path):
    """True if `path` is an HDF5 file with a schema_version root attribute."""
    try:
        with _open(path, "shard-meta") as f:
            return "schema_version" in f.attrs
    except (OSError, ShardRefused):
        return False


def run_id_of(run_or_dir):
    """The run id of the run a directory belongs to: the contents of RUN/run_id,
    looked for in the directory, its parent and its grandparent (so RUN,
    RUN/shards and RUN/shards/HOST all find it); None for a file, a directory
    outside a run, or a run written before hosts (no run_id file)."""
    if not os.path.isdir(run_or_dir):
        return None
    d = os.path.abspath(run_or_dir)
    for _ in range(3):
        path = os.path.join(d, "run_id")
        if os.path.isfile(path):
            with open(path) as fh:
                text = fh.read(4096).strip()  # an id is a line; a planted huge file is not read whole
            if text:
                return text
        d = os.path.dirname(d)
    return None


def _shard_attrs(path):
    """(run_id, host_id) of a shard, or None if `path` is not a zerofarm shard;
    ShardRefused for one that crashed the checker."""
    try:
        with _open(path, "shard-meta") as f:
            if "schema_version" not in f.attrs:
                return None
            return (_attr(f.attrs.get("run_id", "")), _attr(f.attrs.get("host_id", "")))
    except OSError:
        return None


def _h5_files(top):
    """Every *.h5 file under `top`, found without following a link: a link
    planted in a run directory (shards/x -> /) is not walked, nor read."""
    for root, dirs, files in os.walk(top, followlinks=False):
        for name in files:
            path = os.path.join(root, name)
            if name.endswith(".h5") and not os.path.islink(path):
                yield path


def _check_run(path, run_id):
    """True if `path` is a zerofarm shard (a warning on stderr for a .h5 file
    that HDF5 cannot open or that crashed the checker); ValueError if a host's
    shard belongs to another run."""
    try:
        attrs = _shard_attrs(path)
    except ShardRefused as e:  # its message names the file
        print(f"zf_shards: skipping {e}", file=sys.stderr)
        return False
    if attrs is None:
        if not h5py.is_hdf5(path):
            print(f"zf_shards: skipping {path}: not an HDF5 file", file=sys.stderr)
        return False
    shard_run, host = attrs
    if run_id is not None and host and shard_run != run_id:
        raise ValueError(f"{path} belongs to run {shard_run}, not to this run ({run_id}): "
                         f"host directory {host} comes from another run")
    return True


class ShardFollower:
    """The new shards of a run at each ``new_shards()`` call, sorted, none
    twice: each host's shards from its manifest (tools/zf_manifest.py, read
    from the last offset: O(new shards), no listing of old ones), a listing
    for a host without one (a run from before manifests) and for RUN/shards/*.h5.
    Checks run ids like iter_shards: every listed file is opened, and the
    first shard of each host with a manifest."""

    def __init__(self, run):
        self._follower = zf_manifest.ShardFollower(run)
        self._run_id = run_id_of(run)
        self._checked_hosts = set()

    def new_shards(self):
        out = []
        paths = self._follower.new_shards()
        from_manifest = self._follower.from_manifest
        check_shards([p for p in paths if p not in from_manifest], "shard-meta")  # one checker for all
        for path in paths:
            host = os.path.dirname(path)
            trusted = path in from_manifest  # the writer listed it after its rename
            if trusted and host in self._checked_hosts:
                out.append(path)
            elif _check_run(path, self._run_id):
                if trusted:
                    self._checked_hosts.add(host)
                out.append(path)
        return out


def iter_shards(run_or_dir):
    """Sorted paths of the complete shards (*.h5, never *.h5.tmp) under a run
    directory or any directory. A run (a directory with shards/, or its
    shards/ itself) is read as ShardFollower reads it: a host's shards from
    its manifest, RUN/shards/HOST/manifest, else a listing of RUN/shards/HOST/;
    shards of a run from before hosts from RUN/shards/. Any other directory is
    searched recursively. Other .h5 files (the weights in a run's models
    directory) are left out, with a warning on stderr for a .h5 file that HDF5
    cannot open. A path to a single file is returned as a one-element list.

    Raises ValueError, naming the shard and both run ids, if a host's shard
    belongs to another run than the directory's RUN/run_id (a host directory
    copied in from another run)."""
    if os.path.isfile(run_or_dir):
        return [run_or_dir]
    if not os.path.isdir(run_or_dir):
        raise ValueError(f"{run_or_dir}: no such file or directory")
    if os.path.isdir(os.path.join(run_or_dir, "shards")) or os.path.basename(
            os.path.normpath(run_or_dir)) == "shards":
        return ShardFollower(run_or_dir).new_shards()
    run_id = run_id_of(run_or_dir)
    paths = sorted(_h5_files(run_or_dir))
    check_shards(paths, "shard-meta")  # one checker for all
    return [path for path in paths if _check_run(path, run_id)]


def host_counts(run_or_dir):
    """Per-host totals of a run: {host_id: {"shards", "games", "positions"}}
    (host "" for shards written before hosts). Checks run ids like iter_shards."""
    hosts = {}
    for path in iter_shards(run_or_dir):
        m = read_meta(path)
        h = hosts.setdefault(m.get("host_id", ""), {"shards": 0, "games": 0, "positions": 0})
        h["shards"] += 1
        h["games"] += int(m["games"])
        h["positions"] += int(m["positions"])
    return hosts


def load_positions(paths, fields=POSITION_FIELDS):
    """The /positions datasets of several shards concatenated in order: a dict
    field -> array. All shards must have the same board shape and actions."""
    parts = {name: [] for name in fields}
    shape = None
    paths = list(paths)
    check_shards(paths)  # one checker for all
    for path in paths:
        with _open(path) as f:
            meta = _meta(f, path)
            this = (meta["game"], meta["planes"], meta["height"], meta["width"], meta["actions"])
            if shape is None:
                shape = this
            elif this != shape:
                raise ValueError(f"{path} is {this}, the shards before it are {shape}")
            for name in fields:
                parts[name].append(_column(f["positions"], name, int(meta["positions"]), _OPTIONAL_POSITIONS))
    return {name: (np.concatenate(arrays) if arrays else np.zeros(0)) for name, arrays in parts.items()}


def game_moves(shard, i):
    """The moves of game i of a shard: `shard` is a path or a load_shard() dict."""
    if isinstance(shard, dict):
        off = shard["games/moves_offset"]
        return shard["games/moves"][off[i]:off[i + 1]]
    with _open(shard, "shard-games") as f:
        off = _sized(f["games/moves_offset"])[i:i + 2]
        return _sized(f["games/moves"])[off[0]:off[1]]


def game_positions(shard, i):
    """The /positions rows of game i: a dict field -> array (slices of a
    load_shard() dict, or read from a path)."""
    if isinstance(shard, dict):
        b = int(shard["games/first_position"][i])
        e = b + int(shard["games/position_count"][i])
        return {name: shard[name][b:e] for name in POSITION_FIELDS}
    with _open(shard) as f:
        b = int(_sized(f["games/first_position"])[i])
        e = b + int(_sized(f["games/position_count"])[i])
        n = int(f.attrs["positions"])
        return {name: _column(f["positions"], name, n, _OPTIONAL_POSITIONS, slice(b, e))
                for name in POSITION_FIELDS}


# ---- runs as arrays ----------------------------------------------------------

TRAINING_FIELDS = ("features", "policy", "z")


def _shard_shape(meta):
    return (meta["game"], int(meta["planes"]), int(meta["height"]), int(meta["width"]),
            int(meta["actions"]))


def _select_shards(source, last_shards=None):
    """Shard paths from a run directory, a directory, one file or a list of paths,
    optionally only the newest `last_shards` of them."""
    if isinstance(source, (str, bytes, os.PathLike)):
        paths = iter_shards(os.fsdecode(source))
    else:
        paths = [os.fspath(p) for p in source]
    if last_shards is not None:
        if last_shards <= 0:
            raise ValueError(f"last_shards must be positive, not {last_shards}")
        paths = paths[-last_shards:]
    return paths


def _scan(paths):
    """(metas, counts, shape) of shards that must share one game and board shape."""
    metas, counts, shape = [], [], None
    check_shards(paths)  # every dataset, as the callers read them; one checker for all
    for path in paths:
        meta = read_meta(path)
        this = _shard_shape(meta)
        if shape is None:
            shape = this
        elif this != shape:
            raise ValueError(f"{path} is {this[0]} {this[1]}x{this[2]}x{this[3]} with {this[4]} actions, "
                             f"the shards before it are {shape[0]} {shape[1]}x{shape[2]}x{shape[3]} "
                             f"with {shape[4]} actions")
        metas.append(meta)
        counts.append(int(meta["positions"]))
    return metas, counts, shape


def load_run(run_dir, fields=TRAINING_FIELDS, last_shards=None):
    """The positions of every complete shard of a run, concatenated in shard
    order: a dict field -> numpy array (``features`` uint8 [N, planes, H, W],
    ``policy`` float32 [N, actions], ``z`` float32 [N], and any other
    /positions field asked for in `fields`), plus ``meta``: the game, the
    board shape and the shards read.

    `run_dir` is a run directory (searched recursively, like iter_shards), a
    shard file or a list of shard paths; `last_shards` keeps only the newest
    ones (a sliding window). Memory: the result is allocated once from the
    shards' position counts and filled one shard at a time, so the peak is
    the result plus one shard. Raises ValueError when there is no shard or the
    shards disagree on game or shape."""
    fields = tuple(fields)
    unknown = [f for f in fields if f not in POSITION_FIELDS]
    if unknown:
        raise ValueError(f"unknown position field(s) {', '.join(unknown)}; known: {', '.join(POSITION_FIELDS)}")
    paths = _select_shards(run_dir, last_shards)
    if not paths:
        raise ValueError(f"no shards under {run_dir}")
    metas, counts, shape = _scan(paths)
    for path in paths:  # what each shard declares against what it stores, before allocating for it
        with _open(path) as f:
            for name in fields:
                if name in f["positions"]:
                    _sized(f["positions"][name])
    total = sum(counts)
    out = {}
    with _open(paths[0]) as f:
        for name in fields:
            if name not in f["positions"]:
                dtype, _ = _OPTIONAL_POSITIONS[name]
                out[name] = np.empty((total,), dtype=dtype)
                continue
            ds = f["positions"][name]
            out[name] = np.empty((total,) + ds.shape[1:], dtype=ds.dtype)
    at = 0
    for path, n in zip(paths, counts):
        with _open(path) as f:
            for name in fields:
                if name not in f["positions"]:  # an older shard: the implied value
                    out[name][at:at + n] = _OPTIONAL_POSITIONS[name][1]
                    continue
                ds = _sized(f["positions"][name])
                if ds.shape[0] != n:
                    raise ValueError(f"{path}: /positions/{name} has {ds.shape[0]} rows, "
                                     f"the positions attribute says {n}")
                if n:
                    ds.read_direct(out[name], dest_sel=np.s_[at:at + n])
        at += n
    game, planes, height, width, actions = shape
    out["meta"] = {"game": game, "planes": planes, "height": height, "width": width,
                   "actions": actions, "positions": total, "shards": list(paths)}
    return out


# ---- symmetries --------------------------------------------------------------

# Board shape (planes, height, width) and policy length of the games the C++
# side knows (game::MakeGame); used to build networks and check files.
GAME_SHAPES = {
    "connect4": {"planes": 3, "height": 6, "width": 7, "actions": 7},
    "connect4-threats": {"planes": 6, "height": 6, "width": 7, "actions": 7},
    "tictactoe": {"planes": 3, "height": 3, "width": 3, "actions": 9},
}

_SYMMETRY_COUNTS = {"connect4": 2, "connect4-threats": 2, "tictactoe": 8}
_CONNECT4 = ("connect4", "connect4-threats")  # the same board, two feature sets


def symmetry_count(game):
    """How many symmetries this module's own tables give `game` (1 = the
    identity only, for a game they lack); for shards without /symmetry."""
    return _SYMMETRY_COUNTS.get(game, 1)


def _cell_map(game, s, height, width):
    cells = np.arange(height * width)
    r, c = cells // width, cells % width
    if s == 0:
        return cells
    if game in _CONNECT4:  # 1: mirror left-right (Connect4Game::CellMap)
        return r * width + (width - 1 - c)
    if game == "tictactoe":  # TicTacToeGame::CellMap: mirror if s >= 4, then s % 4 clockwise turns
        if height != width:
            raise ValueError(f"tictactoe board {height}x{width} is not square")
        if s >= 4:
            c = width - 1 - c
        for _ in range(s % 4):
            r, c = c, height - 1 - r
        return r * width + c
    raise ValueError(f"{game} has no symmetry {s}")


def symmetry_maps(game, height, width):
    """[(cell_map, action_map)] for every symmetry of `game` (index 0 = identity)
    from this module's own tables, for shards without /symmetry (use
    shard_symmetry_maps first): cell c (row * width + col) goes to cell_map[c]
    and action a to action_map[a], as Game::CellMap / Game::ActionMap in C++.
    A game the tables lack has only the identity, with action_map None."""
    maps = []
    for s in range(symmetry_count(game)):
        cmap = _cell_map(game, s, height, width)
        if game in _CONNECT4:  # actions are columns
            amap = np.arange(width) if s == 0 else width - 1 - np.arange(width)
        elif game == "tictactoe":  # actions are cells
            amap = cmap
        else:
            amap = None  # an unknown game: only the identity, whatever its action count
        maps.append((cmap, amap))
    return maps


def shard_symmetry_maps(path):
    """[(cell_map, action_map)] the shard at `path` carries in /symmetry (the
    C++ game's, index 0 = identity), or None for a shard written before
    shards carried them. Raises ValueError for maps that do not fit the shard."""
    with _open(path) as f:
        return _read_maps(f, path)


def _read_maps(f, path):
    if "symmetry" not in f:
        return None
    g = f["symmetry"]
    cells, actions = _sized(g["cell_map"])[()], _sized(g["action_map"])[()]
    meta = _meta(f, path)
    shape = (int(meta["height"]) * int(meta["width"]), int(meta["actions"]))
    if (cells.ndim != 2 or actions.ndim != 2 or len(cells) != len(actions) or len(cells) < 1
            or (cells.shape[1], actions.shape[1]) != shape):
        raise ValueError(f"{path}: /symmetry maps of shapes {cells.shape} and {actions.shape} do not fit "
                         f"{shape[0]} cells and {shape[1]} actions")
    maps = [(cells[k].astype(np.int64), actions[k].astype(np.int64)) for k in range(len(cells))]
    for k, (c, a) in enumerate(maps):
        if not (np.array_equal(np.sort(c), np.arange(shape[0]))
                and np.array_equal(np.sort(a), np.arange(shape[1]))):
            raise ValueError(f"{path}: /symmetry map {k} is not a permutation")
    return maps


def _run_maps(paths, game, height, width, augment):
    """The symmetries of a ShardDataset: those the shards carry (they share one
    game); for shards from before /symmetry, this module's own tables, and
    with `augment` a ValueError where those lack the game."""
    for path in paths:
        maps = shard_symmetry_maps(path)
        if maps is not None:
            return maps
    if augment and game not in _SYMMETRY_COUNTS:
        raise ValueError(f"{paths[0]}: these {game} shards were written before shards carried their "
                         f"symmetries (/symmetry, docs/schema.md), and zf_shards has no table for {game}: "
                         f"augment=True cannot transform them; use augment=False or newer shards")
    return symmetry_maps(game, height, width)


def apply_symmetry(features, policy, game, s, maps=None):
    """Symmetry `s` of `game` applied to features [..., planes, H, W] and a
    policy [..., actions] (one position or a batch): returns new arrays
    (features, policy); C++ TransformFeatures / TransformPolicy. `maps`: the
    shard's (shard_symmetry_maps); None: this module's own tables."""
    features = np.asarray(features)
    policy = np.asarray(policy)
    if s == 0:
        return features.copy(), policy.copy()
    height, width = features.shape[-2:]
    maps = maps if maps is not None else symmetry_maps(game, height, width)
    if not 0 <= s < len(maps):
        raise ValueError(f"{game} has {len(maps)} symmetries, not {s + 1}")
    return _permute(features, policy, *maps[s])


def _permute(features, policy, cmap, amap):
    height, width = features.shape[-2:]
    flat = features.reshape(features.shape[:-2] + (height * width,))
    out_f = np.empty_like(flat)
    out_f[..., cmap] = flat
    out_p = np.empty_like(policy)
    out_p[..., amap] = policy
    return out_f.reshape(features.shape), out_p


# ---- PyTorch: defined on first use, only when torch imports -------------------

_TORCH_NAMES = ("ShardDataset", "ShardGroupedSampler")


def torch_available():
    """True if ``import torch`` works (ShardDataset exists only then)."""
    try:
        import torch  # noqa: F401
    except Exception:  # ImportError, or a broken install (OSError, ...)
        return False
    return True


def _define_torch_classes():
    import torch
    import collections

    class ShardDataset(torch.utils.data.Dataset):
        """A ``torch.utils.data.Dataset`` over the shards of a run.

        Item i is ``(features, policy, z)``: float32 tensors of shape
        [planes, height, width], [actions] and [] (0-d), so a DataLoader
        batches them to [B, planes, H, W], [B, actions], [B].

        source        run directory (searched like iter_shards), shard file, or list of shard paths
        augment       apply a random symmetry of the game to each item (off by default);
                      drawn with torch's RNG, so DataLoader workers draw differently. The
                      symmetries are the shards' own (/symmetry); shards written before
                      them: this module's tables, or ValueError for a game they lack
        last_shards   use only the newest N shards (a sliding window)
        cache_shards  None (default): hold every shard's rows in memory (compact: features
                      stay uint8 and become float32 per item). An int: hold at most that
                      many shards, loading a shard whole when a row of it is asked for
                      (least recently used dropped); pair it with ShardGroupedSampler,
                      which visits the rows shard by shard.

        The index is a table of cumulative row counts: item i is row
        ``i - offsets[s]`` of shard s (``locate(i)``). The shard list is fixed
        when the dataset is made; make a new one to pick up new shards.
        Attributes: paths, offsets, game, planes, height, width, actions,
        config (a dict for zf_weights_torch.ZeroNet).
        """

        def __init__(self, source, augment=False, last_shards=None, cache_shards=None):
            paths = _select_shards(source, last_shards)
            if not paths:
                raise ValueError(f"no shards under {source}")
            _, counts, shape = _scan(paths)
            keep = [i for i, n in enumerate(counts) if n > 0]
            self.paths = [paths[i] for i in keep]
            counts = [counts[i] for i in keep]
            self.offsets = np.concatenate(([0], np.cumsum(counts, dtype=np.int64))).astype(np.int64)
            self.game, self.planes, self.height, self.width, self.actions = shape
            self.config = {"game": self.game, "planes": self.planes, "height": self.height,
                           "width": self.width, "actions": self.actions}
            self.augment = bool(augment)
            self._maps = _run_maps(self.paths, self.game, self.height, self.width, self.augment)
            if self.augment and len(self._maps) == 1:
                print(f"zf_shards: {self.game} has no symmetry but the identity; augment does nothing",
                      file=sys.stderr)
            if cache_shards is not None and cache_shards < 1:
                raise ValueError(f"cache_shards must be None or at least 1, not {cache_shards}")
            self.cache_shards = cache_shards
            self._cache = collections.OrderedDict()
            if cache_shards is None:
                for s in range(len(self.paths)):
                    self._cache[s] = self._read(s)

        def __len__(self):
            return int(self.offsets[-1])

        def locate(self, i):
            """(shard number, row in that shard) of item i."""
            n = len(self)
            if i < 0:
                i += n
            if not 0 <= i < n:
                raise IndexError(f"index {i} out of range for {n} positions")
            s = int(np.searchsorted(self.offsets, i, side="right")) - 1
            return s, int(i - self.offsets[s])

        def shard_ranges(self):
            """[(first item, end item)] of every shard, in order."""
            return [(int(a), int(b)) for a, b in zip(self.offsets[:-1], self.offsets[1:])]

        def _read(self, s):
            with _open(self.paths[s]) as f:
                pos = f["positions"]
                return (_sized(pos["features"])[()], _sized(pos["policy"])[()].astype(np.float32, copy=False),
                        _sized(pos["z"])[()].astype(np.float32, copy=False))

        def _shard(self, s):
            data = self._cache.get(s)
            if data is None:
                data = self._read(s)
                self._cache[s] = data
                while len(self._cache) > self.cache_shards:
                    self._cache.popitem(last=False)
            elif self.cache_shards is not None:
                self._cache.move_to_end(s)
            return data

        @property
        def symmetries(self):
            """How many symmetries augment draws from (the shards' /symmetry)."""
            return len(self._maps)

        def transform(self, i, k):
            """Item i under symmetry k (0..symmetries-1), as augment draws it:
            (features, policy, z) as __getitem__ returns them."""
            s, row = self.locate(int(i))
            features, policy, z = self._shard(s)
            x, pi = features[row], policy[row]
            if k:
                x, pi = _permute(x, pi, *self._maps[k])
            return (torch.from_numpy(np.asarray(x, dtype=np.float32)),
                    torch.from_numpy(np.array(pi, dtype=np.float32)),
                    torch.tensor(float(z[row]), dtype=torch.float32))

        def __getitem__(self, i):
            k = 0
            if self.augment and len(self._maps) > 1:
                k = int(torch.randint(len(self._maps), ()))
            return self.transform(i, k)

    class ShardGroupedSampler(torch.utils.data.Sampler):
        """Indices of a ShardDataset one shard at a time: shards in random
        order, rows shuffled within each (shuffle=True), so a dataset with
        ``cache_shards`` reads each shard once per epoch. ``set_epoch(e)``
        changes the order; the same seed and epoch give the same order."""

        def __init__(self, dataset, shuffle=True, seed=0):
            self.ranges = dataset.shard_ranges()
            self.shuffle = shuffle
            self.seed = seed
            self.epoch = 0

        def set_epoch(self, epoch):
            self.epoch = epoch

        def __len__(self):
            return sum(b - a for a, b in self.ranges)

        def __iter__(self):
            rng = np.random.default_rng((self.seed, self.epoch))
            order = rng.permutation(len(self.ranges)) if self.shuffle else range(len(self.ranges))
            for s in order:
                a, b = self.ranges[s]
                rows = np.arange(a, b)
                if self.shuffle:
                    rng.shuffle(rows)
                yield from (int(r) for r in rows)

    classes = {"ShardDataset": ShardDataset, "ShardGroupedSampler": ShardGroupedSampler}
    for name, cls in classes.items():  # picklable as zf_shards.NAME (DataLoader workers)
        cls.__module__ = __name__
        cls.__qualname__ = name
    return classes


def __getattr__(name):
    """Defines ShardDataset and ShardGroupedSampler on first access, so that
    the module (and its CLI) never pays for, or needs, ``import torch``."""
    if name in _TORCH_NAMES:
        try:
            classes = _define_torch_classes()
        except Exception as e:
            raise AttributeError(f"zf_shards.{name} needs PyTorch, and import torch failed: {e}") from e
        globals().update(classes)
        return classes[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
        "full_search": (n,), "games/resigned": (g,), "games/would_resign": (g,),
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
    if not np.isin(d["full_search"], (0, 1)).all():
        problems.append("full_search values not in {0, 1}")
    for name in ("games/resigned", "games/would_resign"):
        if not np.isin(d[name], (-1, 0, 1)).all():
            problems.append(f"{name} values not in {{-1, 0, 1}}")
    resigned = d["games/resigned"] >= 0
    if (d["games/result"][resigned] != 1 - d["games/resigned"][resigned]).any():
        problems.append("a game's winner is not the opponent of the player who resigned")
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
        try:
            paths = iter_shards(args.summary)
        except ValueError as e:
            print(f"zf_shards: {e}", file=sys.stderr)
            return 1
        positions = games = 0
        hosts = {}
        for path in paths:
            try:
                m = read_meta(path)
            except (OSError, ValueError) as e:
                print(f"{path}: {e}")
                status = 1
                continue
            positions += int(m["positions"])
            games += int(m["games"])
            h = hosts.setdefault(m.get("host_id", ""), [0, 0, 0])
            h[0] += 1
            h[1] += int(m["games"])
            h[2] += int(m["positions"])
            print(_summary_line(path, m))
        if len(hosts) > 1 or run_id_of(args.summary):
            for host, (n, g, p) in sorted(hosts.items()):
                print(f"host {host or '(no host id)'}: {n} shards, {g} games, {p} positions")
        print(f"{args.summary}: {len(paths)} shards, {positions} positions, {games} games"
              + (f", {len(hosts)} host(s) of run {run_id_of(args.summary)}" if run_id_of(args.summary) else ""))
    return status


if __name__ == "__main__":
    sys.exit(main())
