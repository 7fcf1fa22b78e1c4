"""tools/zf_shards.py: load_run, symmetries, ShardDataset (torch), and a real
farm's shards read back and trained on.

Synthetic shards (written here to docs/schema.md) need neither the binary nor
torch. The farm tests need $ZF_BINARY; the Dataset and training tests need
torch and skip without it ("SKIPPED: torch not installed").
"""

import glob
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

import test_support as zftest
import h5_weights
import zf_shards

if zftest.HAVE_TORCH:
    import torch
    import torch.nn.functional as F
    import zf_weights_torch as zw

requires_torch = zftest.skip_without_torch("test_shards")


def make_run(root, shards=3, game="connect4", seed=0):
    """A run directory: shards/ with `shards` synthetic shards, plus what
    iter_shards must leave out (a weights file, a .h5.tmp remnant)."""
    os.makedirs(os.path.join(root, "shards"))
    os.makedirs(os.path.join(root, "models"))
    counts = []
    for i in range(shards):
        counts.append(zftest.write_synthetic_shard(
            os.path.join(root, "shards", f"selfplay-{i:06d}.h5"), game=game, games=2 + i,
            seed=seed + i, shard_index=i, first_game_id=100 * i))
    with open(os.path.join(root, "shards", f"selfplay-{shards:06d}.h5.tmp"), "wb") as fh:
        fh.write(b"partial")
    cfg = dict(zf_shards.GAME_SHAPES[game], game=game, blocks=1, filters=4, value_hidden=8)
    h5_weights.save_weights(os.path.join(root, "models", "model-000001.h5"),
                            {"stem.conv.weight": np.zeros((4, 3, 3, 3), np.float32)}, cfg, 1)
    return counts


def connect4_legal(features):
    """[..., 7] bool: a column is legal when its top cell is empty (planes 0 and 1)."""
    return (features[..., 0, 0, :] == 0) & (features[..., 1, 0, :] == 0)


class LoadRunTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="zf_shards_")
        self.run_dir = os.path.join(self.tmp.name, "run")
        self.counts = make_run(self.run_dir)

    def tearDown(self):
        self.tmp.cleanup()

    def test_synthetic_shards_are_valid(self):
        paths = zf_shards.iter_shards(self.run_dir)
        self.assertEqual([os.path.basename(p) for p in paths],
                         ["selfplay-000000.h5", "selfplay-000001.h5", "selfplay-000002.h5"])
        for p in paths:
            self.assertEqual(zf_shards.check_shard(p), [], p)

    def test_older_shards_read_as_all_full_search_and_no_resignation(self):
        # The synthetic shards have no full_search / resigned / would_resign
        # columns, as shards written before they existed.
        paths = zf_shards.iter_shards(self.run_dir)
        d = zf_shards.load_shard(paths[0])
        n, g = int(d["meta"]["positions"]), int(d["meta"]["games"])
        self.assertEqual(d["full_search"].tolist(), [1] * n)
        self.assertEqual(d["games/resigned"].tolist(), [-1] * g)
        self.assertEqual(d["games/would_resign"].tolist(), [-1] * g)
        run = zf_shards.load_run(self.run_dir, fields=("policy", "full_search"))
        self.assertEqual(run["full_search"].shape, (sum(self.counts),))
        self.assertTrue((run["full_search"] == 1).all())
        self.assertEqual(zf_shards.game_positions(paths[0], 0)["full_search"].tolist(),
                         [1] * int(d["games/position_count"][0]))
        # A shard with the column reads it back.
        import h5py
        with h5py.File(paths[1], "r+") as f:
            rows = int(f.attrs["positions"])
            f["positions"].create_dataset("full_search", data=np.arange(rows, dtype=np.uint8) % 2)
        run = zf_shards.load_run(self.run_dir, fields=("full_search",))
        b = self.counts[0]
        self.assertEqual(run["full_search"][b:b + self.counts[1]].tolist(),
                         [i % 2 for i in range(self.counts[1])])
        self.assertEqual(zf_shards.check_shard(paths[1]), [])

    def test_load_run_matches_load_positions(self):
        data = zf_shards.load_run(self.run_dir)
        self.assertEqual(sorted(data), ["features", "meta", "policy", "z"])
        ref = zf_shards.load_positions(zf_shards.iter_shards(self.run_dir))
        for name in ("features", "policy", "z"):
            np.testing.assert_array_equal(data[name], ref[name], err_msg=name)
            self.assertEqual(data[name].dtype, ref[name].dtype)
        n = sum(self.counts)
        self.assertEqual(data["features"].shape, (n, 3, 6, 7))
        self.assertEqual(data["features"].dtype, np.uint8)
        self.assertEqual(data["policy"].shape, (n, 7))
        meta = data["meta"]
        self.assertEqual((meta["game"], meta["planes"], meta["height"], meta["width"], meta["actions"]),
                         ("connect4", 3, 6, 7, 7))
        self.assertEqual(meta["positions"], n)
        self.assertEqual(len(meta["shards"]), 3)

    def test_load_run_fields_window_and_sources(self):
        data = zf_shards.load_run(self.run_dir, fields=zf_shards.POSITION_FIELDS, last_shards=2)
        self.assertEqual(len(data["game_id"]), sum(self.counts[1:]))
        self.assertEqual(data["game_id"].dtype, np.uint64)
        paths = zf_shards.iter_shards(self.run_dir)
        one = zf_shards.load_run(paths[1])
        np.testing.assert_array_equal(one["z"], data["z"][:self.counts[1]])
        listed = zf_shards.load_run(paths[::-1])  # a list is read in the order given
        np.testing.assert_array_equal(listed["z"][:self.counts[2]], zf_shards.load_run(paths[2])["z"])

    def test_load_run_errors(self):
        empty = os.path.join(self.tmp.name, "empty")
        os.makedirs(empty)
        with self.assertRaisesRegex(ValueError, "no shards under"):
            zf_shards.load_run(empty)
        with self.assertRaisesRegex(ValueError, "unknown position field"):
            zf_shards.load_run(self.run_dir, fields=("features", "nope"))
        with self.assertRaisesRegex(ValueError, "last_shards"):
            zf_shards.load_run(self.run_dir, last_shards=0)
        zftest.write_synthetic_shard(os.path.join(self.run_dir, "shards", "selfplay-000009.h5"),
                                     game="tictactoe")
        with self.assertRaisesRegex(ValueError, "tictactoe 3x3x3 with 9 actions"):
            zf_shards.load_run(self.run_dir)
        # A positions attribute that is not the datasets' rows (a huge one would size the arrays).
        huge = os.path.join(self.tmp.name, "huge.h5")
        zftest.write_synthetic_shard(huge, games=2)
        with h5py.File(huge, "r+") as f:
            f.attrs["positions"] = np.int64(10**12)
        with self.assertRaisesRegex(ValueError, "is not the .* rows of /positions/features"):
            zf_shards.load_run(huge)

    def test_module_and_cli_work_without_torch(self):
        code = ("import sys; sys.modules['torch'] = None; sys.path.insert(0, %r); import zf_shards; "
                "assert not zf_shards.torch_available(); assert not hasattr(zf_shards, 'ShardDataset'); "
                "print(zf_shards.load_run(%r)['meta']['positions']); "
                "sys.exit(zf_shards.main(['--summary', %r]))" % (zftest.TOOLS, self.run_dir, self.run_dir))
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(str(sum(self.counts)), p.stdout.splitlines()[0])
        self.assertIn("3 shards", p.stdout)
        # and the message names the problem
        code = ("import sys; sys.modules['torch'] = None; sys.path.insert(0, %r); import zf_shards; "
                "zf_shards.ShardDataset" % zftest.TOOLS)
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("needs PyTorch", p.stderr)


class HostsTest(unittest.TestCase):
    """A run of several hosts: RUN/run_id and RUN/shards/HOST/ (docs/scale-out.md)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="zf_hosts_")
        self.run_dir = os.path.join(self.tmp.name, "run")
        os.makedirs(os.path.join(self.run_dir, "shards"))
        with open(os.path.join(self.run_dir, "run_id"), "w") as fh:
            fh.write("00000000000000aa\n")

    def tearDown(self):
        self.tmp.cleanup()

    def add_host(self, host, shards, run_id="00000000000000aa"):
        d = os.path.join(self.run_dir, "shards", host)
        os.makedirs(d)
        games = 0
        for i in range(shards):
            path = os.path.join(d, f"shard-{i:06d}.h5")
            zftest.write_synthetic_shard(path, games=2 + i, seed=i, shard_index=i, first_game_id=100 * i)
            with h5py.File(path, "r+") as f:
                f.attrs["run_id"] = run_id
                f.attrs["host_id"] = host
            games += 2 + i
        return games

    def test_every_host_is_read_with_per_host_counts(self):
        g0, g1 = self.add_host("0", 2), self.add_host("node-b", 3)
        self.assertEqual(len(zf_shards.iter_shards(self.run_dir)), 5)
        counts = zf_shards.host_counts(self.run_dir)
        self.assertEqual(sorted(counts), ["0", "node-b"])
        self.assertEqual((counts["0"]["shards"], counts["0"]["games"]), (2, g0))
        self.assertEqual((counts["node-b"]["shards"], counts["node-b"]["games"]), (3, g1))
        self.assertEqual(zf_shards.run_id_of(os.path.join(self.run_dir, "shards", "0")), "00000000000000aa")
        data = zf_shards.load_run(self.run_dir, fields=("z",))
        self.assertEqual(len(data["meta"]["shards"]), 5)
        p = subprocess.run([sys.executable, os.path.join(zftest.TOOLS, "zf_shards.py"), "--summary", self.run_dir],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"host 0: 2 shards, {g0} games", p.stdout)
        self.assertIn(f"host node-b: 3 shards, {g1} games", p.stdout)
        self.assertIn("2 host(s) of run 00000000000000aa", p.stdout)

    def test_a_host_directory_of_another_run_is_refused(self):
        self.add_host("0", 1)
        self.add_host("7", 1, run_id="00000000000000bb")
        with self.assertRaisesRegex(ValueError, "host directory 7 comes from another run"):
            zf_shards.iter_shards(self.run_dir)
        with self.assertRaisesRegex(ValueError, "another run"):
            zf_shards.load_run(self.run_dir)
        p = subprocess.run([sys.executable, os.path.join(zftest.TOOLS, "zf_shards.py"), "--summary", self.run_dir],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertIn("comes from another run", p.stderr)

    def test_links_are_not_followed_and_a_missing_directory_is_an_error(self):
        self.add_host("0", 1)
        elsewhere = os.path.join(self.tmp.name, "elsewhere")
        os.makedirs(elsewhere)
        zftest.write_synthetic_shard(os.path.join(elsewhere, "shard-000009.h5"), games=3)
        os.symlink(elsewhere, os.path.join(self.run_dir, "shards", "planted"))
        os.symlink(os.path.join(elsewhere, "shard-000009.h5"),
                   os.path.join(self.run_dir, "shards", "0", "shard-000010.h5"))
        self.assertEqual(len(zf_shards.iter_shards(self.run_dir)), 1)  # neither link is read
        p = subprocess.run([sys.executable, os.path.join(zftest.TOOLS, "zf_shards.py"), "--summary",
                            os.path.join(self.tmp.name, "missing")], capture_output=True, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertIn("no such file or directory", p.stderr)

    def write_manifest(self, host, names):
        with open(os.path.join(self.run_dir, "shards", host, "manifest"), "a") as fh:
            fh.writelines(f"{n} 10 2\n" for n in names)

    def test_hosts_with_a_manifest_are_read_from_it_incrementally(self):
        self.add_host("0", 3)
        self.add_host("1", 2)  # host 1: no manifest (a run from before manifests): listed
        self.write_manifest("0", ["shard-000000.h5", "shard-000001.h5"])  # shard 2: renamed, not yet listed
        opened = []
        real = zf_shards._shard_attrs
        zf_shards._shard_attrs = lambda p: opened.append(os.path.relpath(p, self.run_dir)) or real(p)
        self.addCleanup(setattr, zf_shards, "_shard_attrs", real)
        follower = zf_shards.ShardFollower(self.run_dir)
        got = [os.path.relpath(p, self.run_dir) for p in follower.new_shards()]
        self.assertEqual(got, ["shards/0/shard-000000.h5", "shards/0/shard-000001.h5",
                               "shards/1/shard-000000.h5", "shards/1/shard-000001.h5"])
        # Of host 0 only its first shard is opened (its run id); host 1's are all checked.
        self.assertEqual(sorted(opened), ["shards/0/shard-000000.h5", "shards/1/shard-000000.h5",
                                          "shards/1/shard-000001.h5"])
        self.assertEqual(follower.new_shards(), [])
        self.assertEqual(len(zf_shards.iter_shards(self.run_dir)), 4)  # not a listing: shard 2 waits
        self.write_manifest("0", ["shard-000002.h5"])
        self.assertEqual(follower.new_shards(), [os.path.join(self.run_dir, "shards", "0", "shard-000002.h5")])
        self.assertEqual(len(zf_shards.iter_shards(self.run_dir)), 5)
        self.assertEqual(len(zf_shards.iter_shards(os.path.join(self.run_dir, "shards"))), 5)

    def test_a_host_with_a_manifest_of_another_run_is_refused(self):
        self.add_host("7", 2, run_id="00000000000000bb")
        self.write_manifest("7", ["shard-000000.h5", "shard-000001.h5"])
        with self.assertRaisesRegex(ValueError, "host directory 7 comes from another run"):
            zf_shards.iter_shards(self.run_dir)

    def test_shards_from_before_hosts_are_still_read(self):
        # RUN/shards/*.h5 with no host_id next to the new layout: no run id check.
        zftest.write_synthetic_shard(os.path.join(self.run_dir, "shards", "shard-000000.h5"), games=4)
        self.add_host("0", 1)
        counts = zf_shards.host_counts(self.run_dir)
        self.assertEqual(counts[""]["games"], 4)
        self.assertEqual(len(zf_shards.iter_shards(self.run_dir)), 2)


class SymmetryTest(unittest.TestCase):
    def test_counts(self):
        self.assertEqual(zf_shards.symmetry_count("connect4"), 2)
        self.assertEqual(zf_shards.symmetry_count("tictactoe"), 8)
        self.assertEqual(zf_shards.symmetry_count("unknown"), 1)

    def test_connect4_mirror(self):
        rng = np.random.default_rng(1)
        f = rng.integers(0, 2, (3, 6, 7)).astype(np.uint8)
        p = rng.random(7).astype(np.float32)
        f1, p1 = zf_shards.apply_symmetry(f, p, "connect4", 1)
        np.testing.assert_array_equal(f1, f[:, :, ::-1])
        np.testing.assert_array_equal(p1, p[::-1])
        f2, p2 = zf_shards.apply_symmetry(f1, p1, "connect4", 1)
        np.testing.assert_array_equal(f2, f)
        np.testing.assert_array_equal(p2, p)
        f0, p0 = zf_shards.apply_symmetry(f, p, "connect4", 0)
        np.testing.assert_array_equal(f0, f)
        self.assertIsNot(f0, f)

    def test_tictactoe_group(self):
        maps = zf_shards.symmetry_maps("tictactoe", 3, 3)
        self.assertEqual(len(maps), 8)
        self.assertEqual(len({tuple(c) for c, _ in maps}), 8)
        for c, a in maps:
            self.assertEqual(sorted(c), list(range(9)))
            np.testing.assert_array_equal(c, a)
        np.testing.assert_array_equal(maps[0][0], np.arange(9))
        # TicTacToeGame::CellMap: s = 1 turns clockwise, (r, c) -> (c, 2 - r): the top-left corner goes top-right
        self.assertEqual(maps[1][0][0], 2)
        board = np.arange(9).reshape(1, 3, 3)
        f1, _ = zf_shards.apply_symmetry(board, np.zeros(9), "tictactoe", 1)
        np.testing.assert_array_equal(f1[0], np.rot90(board[0], -1))
        f4, _ = zf_shards.apply_symmetry(board, np.zeros(9), "tictactoe", 4)
        np.testing.assert_array_equal(f4[0], board[0][:, ::-1])
        # features and a cell-valued policy move together
        rng = np.random.default_rng(2)
        f = rng.integers(0, 2, (3, 3, 3)).astype(np.uint8)
        for s in range(8):
            fs, ps = zf_shards.apply_symmetry(f, f[0].ravel().astype(np.float32), "tictactoe", s)
            np.testing.assert_array_equal(fs[0].ravel(), ps)

    def test_batches_and_errors(self):
        rng = np.random.default_rng(3)
        f = rng.integers(0, 2, (5, 3, 6, 7)).astype(np.uint8)
        p = rng.random((5, 7)).astype(np.float32)
        fb, pb = zf_shards.apply_symmetry(f, p, "connect4", 1)
        for i in range(5):
            fi, pi = zf_shards.apply_symmetry(f[i], p[i], "connect4", 1)
            np.testing.assert_array_equal(fb[i], fi)
            np.testing.assert_array_equal(pb[i], pi)
        with self.assertRaisesRegex(ValueError, "2 symmetries"):
            zf_shards.apply_symmetry(f, p, "connect4", 2)
        with self.assertRaisesRegex(ValueError, "1 symmetries"):
            zf_shards.apply_symmetry(f, p, "unknown", 1)


class CppSymmetryTest(unittest.TestCase):
    """Issue 72 point 7: Python transforms samples as the C++ game does, for
    every registered game, from the maps its shard carries. `zerofarm
    check-game --symmetry-samples` writes, per game, a shard and its positions
    as game::TransformFeatures / TransformPolicy transform them."""

    @classmethod
    def setUpClass(cls):
        if zftest.binary() is None:
            raise unittest.SkipTest("ZF_BINARY is not set")
        cls.tmp = tempfile.mkdtemp(prefix="zf_symmetry_")
        zftest.run([zftest.binary(), "check-game", "--symmetry-samples", cls.tmp, "--playouts", "2"])
        cls.games = sorted(os.listdir(cls.tmp))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def cpp(self, game):
        """(shard path, C++ features [S, n, ...], C++ policy [S, n, actions])."""
        with h5py.File(os.path.join(self.tmp, game, "symmetry-samples.h5"), "r") as f:
            self.assertEqual(int(f.attrs["symmetries"]), len(f["features"]))
            return os.path.join(self.tmp, game, "symmetry-000000.h5"), f["features"][()], f["policy"][()]

    def test_every_game_has_samples(self):
        self.assertTrue({"connect4", "tictactoe", "gomoku", "othello", "go", "go7", "breakthrough"}
                        <= set(self.games), self.games)

    def test_numpy_transforms_match_cpp(self):
        for game in self.games:
            with self.subTest(game=game):
                shard, want_f, want_p = self.cpp(game)
                self.assertEqual(zf_shards.check_shard(shard), [])
                maps = zf_shards.shard_symmetry_maps(shard)
                data = zf_shards.load_shard(shard)
                self.assertEqual(len(maps), len(want_f))
                for k in range(len(maps)):
                    f, p = zf_shards.apply_symmetry(data["features"], data["policy"], game, k, maps)
                    np.testing.assert_array_equal(f, want_f[k], err_msg=f"symmetry {k}")
                    np.testing.assert_array_equal(p, want_p[k], err_msg=f"symmetry {k}")
                # Not vacuous: each other symmetry moves some policy value.
                for k in range(1, len(maps)):
                    self.assertFalse(np.array_equal(want_p[k], want_p[0]), f"symmetry {k}")
        self.assertEqual(len(zf_shards.shard_symmetry_maps(os.path.join(self.tmp, "go", "symmetry-000000.h5"))),
                         8)  # docs/games.md

    @requires_torch
    def test_shard_dataset_augments_as_cpp(self):
        for game in self.games:
            with self.subTest(game=game):
                shard, want_f, want_p = self.cpp(game)
                ds = zf_shards.ShardDataset(shard, augment=True)
                self.assertEqual(ds.symmetries, len(want_f))
                for k in range(ds.symmetries):
                    for i in range(len(ds)):
                        x, pi, _ = ds.transform(i, k)
                        np.testing.assert_array_equal(x.numpy(), want_f[k][i].astype(np.float32))
                        np.testing.assert_array_equal(pi.numpy(), want_p[k][i])

    @requires_torch
    def test_old_shards_fall_back_or_refuse(self):
        # Synthetic shards have no /symmetry, as shards written before it.
        path = os.path.join(self.tmp, "old-connect4.h5")
        zftest.write_synthetic_shard(path)
        self.assertIsNone(zf_shards.shard_symmetry_maps(path))
        self.assertEqual(zf_shards.ShardDataset(path, augment=True).symmetries, 2)
        old_go = os.path.join(self.tmp, "old-go.h5")
        shutil.copy(os.path.join(self.tmp, "go", "symmetry-000000.h5"), old_go)
        with h5py.File(old_go, "a") as f:
            del f["symmetry"]
        self.assertEqual(zf_shards.ShardDataset(old_go).symmetries, 1)  # no augment: no maps needed
        with self.assertRaisesRegex(ValueError, "written before shards carried their symmetries"):
            zf_shards.ShardDataset(old_go, augment=True)


@requires_torch
class ShardDatasetTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="zf_dataset_")
        self.run_dir = os.path.join(self.tmp.name, "run")
        self.counts = make_run(self.run_dir)
        self.data = zf_shards.load_run(self.run_dir)

    def tearDown(self):
        self.tmp.cleanup()

    def assertItem(self, item, i):
        x, pi, z = item
        self.assertEqual((x.dtype, pi.dtype, z.dtype), (torch.float32,) * 3)
        self.assertEqual(tuple(x.shape), (3, 6, 7))
        self.assertEqual(tuple(pi.shape), (7,))
        self.assertEqual(tuple(z.shape), ())
        np.testing.assert_array_equal(x.numpy(), self.data["features"][i].astype(np.float32))
        np.testing.assert_array_equal(pi.numpy(), self.data["policy"][i])
        self.assertEqual(float(z), float(self.data["z"][i]))

    def test_items_match_load_run(self):
        ds = zf_shards.ShardDataset(self.run_dir)
        n = sum(self.counts)
        self.assertEqual(len(ds), n)
        self.assertEqual(ds.config, {"game": "connect4", "planes": 3, "height": 6, "width": 7, "actions": 7})
        for i in range(n):
            self.assertItem(ds[i], i)
        self.assertItem(ds[-1], n - 1)
        self.assertEqual(ds.locate(self.counts[0]), (1, 0))
        self.assertEqual(ds.locate(n - 1), (2, self.counts[2] - 1))
        with self.assertRaises(IndexError):
            ds[n]
        ds[0][1][0] = 99  # items are copies: the dataset is not changed through them
        self.assertItem(ds[0], 0)

    def test_lazy_cache_and_grouped_sampler(self):
        ds = zf_shards.ShardDataset(self.run_dir, cache_shards=1)
        sampler = zf_shards.ShardGroupedSampler(ds, shuffle=True, seed=4)
        order = list(sampler)
        self.assertEqual(sorted(order), list(range(len(ds))))
        shard_of = [ds.locate(i)[0] for i in order]
        self.assertEqual(sum(a != b for a, b in zip(shard_of, shard_of[1:])), 2)  # one run per shard
        for i in order:
            self.assertItem(ds[i], i)
            self.assertLessEqual(len(ds._cache), 1)
        sampler.set_epoch(1)
        self.assertNotEqual(list(sampler), order)
        self.assertEqual(list(zf_shards.ShardGroupedSampler(ds, shuffle=False)), list(range(len(ds))))
        with self.assertRaises(ValueError):
            zf_shards.ShardDataset(self.run_dir, cache_shards=0)

    def test_window_and_list(self):
        paths = zf_shards.iter_shards(self.run_dir)
        self.assertEqual(len(zf_shards.ShardDataset(self.run_dir, last_shards=1)), self.counts[-1])
        self.assertEqual(len(zf_shards.ShardDataset(paths[:2])), sum(self.counts[:2]))

    def test_augmentation(self):
        ds = zf_shards.ShardDataset(self.run_dir, augment=True)
        torch.manual_seed(0)
        seen = set()
        for _ in range(4):
            for i in range(len(ds)):
                x, pi, z = ds[i]
                f, p = self.data["features"][i], self.data["policy"][i]
                if np.array_equal(x.numpy(), f) and np.array_equal(pi.numpy(), p):
                    seen.add(0)
                else:
                    np.testing.assert_array_equal(x.numpy(), f[:, :, ::-1])
                    np.testing.assert_array_equal(pi.numpy(), p[::-1])
                    seen.add(1)
                self.assertEqual(float(z), float(self.data["z"][i]))
        self.assertEqual(seen, {0, 1})
        self.assertFalse(zf_shards.ShardDataset(self.run_dir).augment)

    def test_dataloader_and_pickle(self):
        ds = zf_shards.ShardDataset(self.run_dir, augment=True)
        copy = pickle.loads(pickle.dumps(ds))
        self.assertEqual(len(copy), len(ds))
        loader = torch.utils.data.DataLoader(ds, batch_size=4, shuffle=True, num_workers=2)
        rows = 0
        for x, pi, z in loader:
            self.assertEqual(tuple(x.shape[1:]), (3, 6, 7))
            self.assertEqual(pi.shape[1], 7)
            self.assertEqual(z.dim(), 1)
            rows += len(z)
        self.assertEqual(rows, len(ds))


def train_steps(net, x, pi, z, steps, lr=0.01):
    """Adam steps on one batch; returns the losses (policy cross-entropy + value MSE)."""
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    net.train()
    losses = []
    for _ in range(steps):
        logits, v = net(x)
        loss = -(pi * F.log_softmax(logits, dim=1)).sum(1).mean() + F.mse_loss(v, z)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def break_global_heap_reference(path):
    """The crafted shard of the C++ fault tests (tests/support/farm_check.h): a
    variable-length string's global-heap reference pointed at a collection
    index far out of range, which crashes libhdf5 1.10 when it is read."""
    with open(path, "rb") as fh:
        data = bytearray(fh.read())
    gcol = data.find(b"GCOL")
    ref = data.find(gcol.to_bytes(8, "little"))
    assert gcol >= 0 and ref >= 0, path
    data[ref + 8:ref + 12] = (0x7FFFFF00).to_bytes(4, "little")
    with open(path, "wb") as fh:
        fh.write(data)


class CheckedReadTest(unittest.TestCase):
    """Shards from others: the checker process first (with a binary), and each
    dataset's declared size against what the file stores (always)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="zf_checked_")
        self.env = dict(os.environ)

    def tearDown(self):
        os.environ.clear()
        os.environ.update(self.env)
        self.tmp.cleanup()

    def test_a_dataset_declaring_more_than_the_file_stores_is_refused_before_any_allocation(self):
        os.environ[zf_shards.CHECKER_ENV] = "none"  # the size check alone
        path = os.path.join(self.tmp.name, "hostile.h5")
        zftest.write_synthetic_shard(path)
        rows = 10 ** 9  # 126 GB of features declared, none stored
        with h5py.File(path, "r+") as f:
            del f["positions/features"]
            f.create_dataset("positions/features", shape=(rows, 3, 6, 7), dtype=np.uint8, chunks=(1024, 3, 6, 7),
                             compression="gzip")
            f.attrs["positions"] = np.uint64(rows)
        with self.assertRaisesRegex(zf_shards.ShardRefused, "/positions/features declares 126000000000 bytes but "
                                    "the file stores 0"):
            zf_shards.load_run(path)
        with self.assertRaises(zf_shards.ShardRefused):
            zf_shards.load_shard(path)
        self.assertEqual(zf_shards.check_shard(path)[0][:13], "cannot read: ")

    def test_a_shard_that_crashes_libhdf5_is_refused_in_one_line_and_never_read(self):
        if zftest.binary() is None:
            self.skipTest("ZF_BINARY is not set")
        run = os.path.join(self.tmp.name, "run")
        zftest.run_farm(run)
        shards = sorted(glob.glob(os.path.join(run, "shards", "*", "*.h5")))
        self.assertTrue(shards)
        top = os.path.join(self.tmp.name, "dir")
        os.makedirs(top)
        good, broken = os.path.join(top, "good.h5"), os.path.join(top, "broken.h5")
        shutil.copyfile(shards[0], good)
        shutil.copyfile(shards[0], broken)
        break_global_heap_reference(broken)
        crashed = broken + ": refused: reading it crashed libhdf5 (killed by signal"
        script = "import sys, zf_shards; print(zf_shards.read_meta(sys.argv[1])['games'])"
        env = dict(os.environ, PYTHONPATH=zftest.TOOLS)
        # Read in this process, as before: it is h5py that crashes (the file is a real threat) ...
        p = subprocess.run([sys.executable, "-c", script, broken], capture_output=True, text=True,
                           env=dict(env, ZF_CHECKER="none"))
        self.assertLess(p.returncode, 0, p.stdout + p.stderr)
        # ... and with the checker, one line, no crash; the good shard still reads.
        os.environ[zf_shards.CHECKER_ENV] = zftest.binary()
        with self.assertRaisesRegex(zf_shards.ShardRefused, "^" + re.escape(crashed)):
            zf_shards.read_meta(broken)
        self.assertGreater(zf_shards.read_meta(good)["games"], 0)
        p = subprocess.run([sys.executable, os.path.join(zftest.TOOLS, "zf_shards.py"), "--summary", top],
                           capture_output=True, text=True, env=dict(env, ZF_CHECKER=zftest.binary()))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
        self.assertTrue(p.stderr.startswith("zf_shards: skipping " + crashed), p.stderr)
        self.assertIn(f"{top}: 1 shards", p.stdout)


class FarmShardsTest(unittest.TestCase):
    """A real short farm (the binary from $ZF_BINARY), read back and trained on."""

    @classmethod
    def setUpClass(cls):
        if zftest.binary() is None:
            raise unittest.SkipTest("ZF_BINARY is not set")
        cls.tmp = tempfile.mkdtemp(prefix="zf_farm_")
        cls.run_dir = os.path.join(cls.tmp, "run")
        cls.farm_output = zftest.run_farm(cls.run_dir).stdout

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_shards_are_valid_and_load(self):
        paths = zf_shards.iter_shards(self.run_dir)
        self.assertGreaterEqual(len(paths), 1, self.farm_output)
        games = positions = 0
        for p in paths:
            self.assertEqual(zf_shards.check_shard(p), [], p)
            m = zf_shards.read_meta(p)
            games += int(m["games"])
            positions += int(m["positions"])
        self.assertGreaterEqual(games, 6)
        data = zf_shards.load_run(self.run_dir)
        self.assertEqual(data["meta"]["positions"], positions)
        self.assertEqual(data["features"].shape, (positions, 3, 6, 7))
        self.assertEqual(data["policy"].shape, (positions, 7))
        self.assertTrue(np.isin(data["z"], (-1.0, 0.0, 1.0)).all())
        np.testing.assert_allclose(data["policy"].sum(1), 1.0, atol=1e-3)
        self.assertTrue(set(np.unique(data["features"])) <= {0, 1})
        # policy mass only on legal columns, also after the mirror symmetry
        illegal = ~connect4_legal(data["features"])
        self.assertEqual(float(data["policy"][illegal].sum()), 0.0)
        f1, p1 = zf_shards.apply_symmetry(data["features"], data["policy"], "connect4", 1)
        self.assertEqual(float(p1[~connect4_legal(f1)].sum()), 0.0)

    @requires_torch
    def test_dataset_and_a_training_step(self):
        torch.manual_seed(0)
        ds = zf_shards.ShardDataset(self.run_dir, augment=True)
        data = zf_shards.load_run(self.run_dir)
        self.assertEqual(len(ds), len(data["z"]))
        loader = torch.utils.data.DataLoader(ds, batch_size=64, shuffle=True, drop_last=False)
        x, pi, z = next(iter(loader))
        self.assertEqual(tuple(x.shape[1:]), (3, 6, 7))
        self.assertEqual(x.dtype, torch.float32)
        net = zw.ZeroNet.from_config(dict(ds.config, blocks=1, filters=8, value_hidden=16))
        losses = train_steps(net, x, pi, z, steps=30)
        self.assertTrue(all(np.isfinite(losses)), losses)
        self.assertLess(losses[-1], losses[0], losses)
        # an epoch over the loader works too
        for x, pi, z in loader:
            self.assertTrue(np.isfinite(train_steps(net, x, pi, z, steps=1)[0]))

        # The trained net goes back to the farm: it loads it and records its version.
        net.eval()
        weights = os.path.join(self.tmp, "trained.h5")
        zw.save_zerofarm_weights(net, weights, "connect4", 7)
        out = os.path.join(self.tmp, "run2")
        zftest.run_farm(out, extra=("--weights", weights))
        mv = zf_shards.load_run(out, fields=("model_version",))["model_version"]
        # A position whose search met only terminal leaves records 0 (no network
        # call in that search, src/mcts/selfplay_game.cpp); every other one 7.
        self.assertTrue(set(np.unique(mv)) <= {0, 7}, np.unique(mv))
        self.assertGreater(float((mv == 7).mean()), 0.5)

    def test_plot_metrics_if_the_farm_writes_them(self):
        csv_path = os.path.join(self.run_dir, "metrics.csv")
        csv_path = (glob.glob(os.path.join(self.run_dir, "shards", "*", "metrics.csv")) or [csv_path])[0]
        if not os.path.exists(csv_path):
            self.skipTest("this zerofarm writes no metrics.csv")
        out = os.path.join(self.tmp, "plots")
        p = subprocess.run([sys.executable, os.path.join(zftest.TOOLS, "plot_metrics.py"), self.run_dir,
                            "--out", out], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        for name in ("throughput.png", "batch.png", "latency.png", "occupancy.png"):
            with open(os.path.join(out, name), "rb") as fh:
                self.assertEqual(fh.read(8), b"\x89PNG\r\n\x1a\n", name)


if __name__ == "__main__":
    unittest.main()
