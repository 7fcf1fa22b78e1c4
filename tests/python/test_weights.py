"""tools/zf_weights_torch.py: the network layout, weights round trips, and the
C++ network against Python on the same weights file.

Without torch the PyTorch tests skip ("SKIPPED: torch not installed"); the
layout tests and the C++ check (against a numpy forward pass) still run. The
C++ checks need $ZF_BINARY.
"""

import functools
import os
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

import test_support as zftest
import h5_weights
import zf_shards
import zf_weights_torch as zw

if zftest.HAVE_TORCH:
    import torch

requires_torch = zftest.skip_without_torch("test_weights")
SCRIPT = os.path.join(zftest.TOOLS, "zf_weights_torch.py")

C4 = {"game": "connect4", "planes": 3, "height": 6, "width": 7, "actions": 7,
      "blocks": 2, "filters": 8, "value_hidden": 16}
TTT = {"game": "tictactoe", "planes": 3, "height": 3, "width": 3, "actions": 9,
       "blocks": 1, "filters": 4, "value_hidden": 8}


def random_features(n, config, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2, (n, config["planes"], config["height"], config["width"])).astype(np.uint8)


class LayoutTest(unittest.TestCase):
    """What needs no torch: names, shapes, inference of the config."""

    def test_state_dict_shapes(self):
        shapes = zw.state_dict_shapes(C4)
        self.assertEqual(len(shapes), 6 + 2 * 12 + 8 + 10)  # stem, 2 blocks, policy, value
        self.assertEqual(shapes["stem.conv.weight"], (8, 3, 3, 3))
        self.assertEqual(shapes["blocks.1.bn2.running_var"], (8,))
        self.assertEqual(shapes["blocks.0.bn1.num_batches_tracked"], ())
        self.assertEqual(shapes["policy_head.fc.weight"], (7, 2 * 6 * 7))
        self.assertEqual(shapes["value_head.fc1.weight"], (16, 42))
        self.assertEqual(shapes["value_head.fc2.bias"], (1,))
        self.assertNotIn("blocks.2.conv1.weight", shapes)

    def test_save_never_writes_through_a_planted_tmp_link(self):
        # A shared models directory where someone planted PATH.tmp -> a file of
        # theirs (or root's): the save goes to a fresh name and the victim stays.
        with tempfile.TemporaryDirectory() as d:
            victim = os.path.join(d, "victim")
            with open(victim, "w") as f:
                f.write("untouched\n")
            path = os.path.join(d, "w.h5")
            os.symlink(victim, path + ".tmp")
            h5_weights.save_weights(path, sensitive_weights(C4, seed=3), C4, version=2)
            with open(victim) as f:
                self.assertEqual(f.read(), "untouched\n")
            self.assertFalse(os.path.islink(path))
            self.assertEqual(h5_weights.load_weights(path)[2], 2)
            self.assertEqual(sorted(os.listdir(d)), ["victim", "w.h5", "w.h5.tmp"])  # no tmp of ours left

    def test_a_tensor_too_large_for_any_net_is_refused_before_it_is_read(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "w.h5")
            h5_weights.save_weights(path, sensitive_weights(C4, seed=3), C4, version=2)
            with h5py.File(path, "r+") as f:  # 8 GiB by its shape, a few KB on disk
                f.create_dataset("huge", shape=(2**31,), dtype="f4", chunks=(2**20,), compression="gzip")
            with self.assertRaisesRegex(ValueError, "more than any net here"):
                h5_weights.load_weights(path)

    def test_value_head_of_several_channels(self):
        cfg = dict(C4, value_channels=4)
        shapes = zw.state_dict_shapes(cfg)
        self.assertEqual(shapes["value_head.conv.weight"], (4, 8, 1, 1))
        self.assertEqual(shapes["value_head.bn.running_mean"], (4,))
        self.assertEqual(shapes["value_head.fc1.weight"], (16, 4 * 42))
        state = zftest.random_weights(cfg)
        self.assertEqual(zw.infer_config(state, "connect4"), cfg)
        self.assertIn("value head 16 of 4 channels", zw.describe(cfg))
        # One channel stays out of the config (and the file), as zerofarm writes it.
        self.assertNotIn("value_channels", zw.infer_config(zftest.random_weights(C4), "connect4"))
        self.assertIn("value_head.conv.weight has shape [4, 8, 1, 1], expected [1, 8, 1, 1]",
                      " ".join(zw.check_state_dict(state, C4)))

    def test_infer_config(self):
        state = zftest.random_weights(C4)
        self.assertEqual(zw.infer_config(state, "connect4"), C4)
        prefixed = {"module." + k: v for k, v in state.items()}
        self.assertEqual(zw.infer_config(prefixed, "connect4"), C4)
        with self.assertRaisesRegex(ValueError, "tictactoe has planes|tictactoe has height|tictactoe has actions"):
            zw.infer_config(state, "tictactoe")
        with self.assertRaisesRegex(ValueError, "unknown game"):
            zw.infer_config(state, "go")
        self.assertEqual(zw.infer_config(state, "mygame", height=6, width=7)["game"], "mygame")
        with self.assertRaisesRegex(ValueError, "does not fit"):
            zw.infer_config(state, "mygame", height=7, width=7)

    def test_check_state_dict(self):
        state = zftest.random_weights(C4)
        self.assertEqual(zw.check_state_dict(state, C4), [])
        del state["blocks.1.conv2.weight"]
        state["extra.weight"] = np.zeros(2, np.float32)
        state["value_head.fc2.bias"] = np.zeros(2, np.float32)
        problems = " ".join(zw.check_state_dict(state, C4))
        self.assertIn("missing 1 tensor(s): blocks.1.conv2.weight", problems)
        self.assertIn("unexpected 1 tensor(s): extra.weight", problems)
        self.assertIn("value_head.fc2.bias has shape [2], expected [1]", problems)

    def test_module_imports_without_torch(self):
        # The layout helpers work and the CLI says why it cannot run.
        code = ("import sys; sys.modules['torch'] = None; sys.path.insert(0, %r); "
                "import zf_weights_torch as zw; assert zw.torch is None; "
                "print(len(zw.state_dict_shapes(%r))); "
                "sys.exit(zw.main(['init', 'x.h5', '--game', 'connect4']))" % (zftest.TOOLS, C4))
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.run([sys.executable, "-c", code], cwd=d, capture_output=True, text=True)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertEqual(p.stdout.strip(), "48")
            self.assertIn("PyTorch is not installed", p.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "x.h5")))


@requires_torch
class TorchNetTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="zf_weights_")
        self.dir = self.tmp.name
        torch.manual_seed(0)

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def outputs(self, net, x):
        with torch.no_grad():
            return net(torch.from_numpy(x))

    def assertSameOutputs(self, a, b):
        self.assertTrue(torch.equal(a[0], b[0]), "policy logits differ")
        self.assertTrue(torch.equal(a[1], b[1]), "values differ")

    def test_state_dict_names_are_the_cpp_names(self):
        for cfg in (C4, TTT):
            net = zw.ZeroNet.from_config(cfg)
            sd = net.state_dict()
            self.assertEqual(list(sd), list(zw.state_dict_shapes(cfg)))
            for name, shape in zw.state_dict_shapes(cfg).items():
                self.assertEqual(tuple(sd[name].shape), shape, name)
            self.assertEqual(sd["stem.bn.num_batches_tracked"].dtype, torch.int64)

    def test_forward_matches_numpy_reference(self):
        for cfg in (C4, TTT):
            state = zftest.random_weights(cfg, seed=3)
            net = zw.ZeroNet.from_config(cfg)
            net.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items()}, strict=True)
            net.eval()
            x = random_features(16, cfg, seed=4)
            p, v = self.outputs(net, x)
            rp, rv = zftest.numpy_forward(state, cfg, x)
            self.assertEqual(tuple(p.shape), (16, cfg["actions"]))
            self.assertEqual(tuple(v.shape), (16,))
            np.testing.assert_allclose(p.numpy(), rp, atol=1e-5, rtol=1e-5)
            np.testing.assert_allclose(v.numpy(), rv, atol=1e-5, rtol=1e-5)
            # uint8 and float input give the same result
            pf, vf = self.outputs(net, x.astype(np.float32))
            self.assertSameOutputs((p, v), (pf, vf))

    def test_round_trip_gives_identical_outputs(self):
        # Weights written the way the C++ side and h5_weights write them ...
        state = zftest.random_weights(C4, seed=7)
        h5_weights.save_weights(self.path("a.h5"), state, C4, version=11)
        # ... loaded in PyTorch, evaluated, saved back, loaded again.
        net = zw.load_zerofarm_weights(self.path("a.h5"))
        self.assertFalse(net.training)
        self.assertEqual(net.version, 11)
        self.assertEqual(net.config, C4)
        x = random_features(32, C4, seed=8)
        first = self.outputs(net, x)
        zw.save_zerofarm_weights(net, self.path("b.h5"), "connect4", 12)
        again = zw.load_zerofarm_weights(self.path("b.h5"))
        self.assertEqual(again.version, 12)
        self.assertSameOutputs(first, self.outputs(again, x))
        # every tensor is bit-identical to the original file, dtypes as the schema says
        back, cfg, version = h5_weights.load_weights(self.path("b.h5"))
        self.assertEqual((cfg, version), (C4, 12))
        self.assertEqual(set(back), set(state))
        for name, a in state.items():
            self.assertEqual(back[name].dtype, np.int64 if a.dtype.kind == "i" else np.float32, name)
            np.testing.assert_array_equal(back[name], a, err_msg=name)
        with h5py.File(self.path("b.h5"), "r") as f:
            self.assertEqual(f.attrs["format"], "zerofarm-weights")
            self.assertEqual(int(f.attrs["format_version"]), 1)
            self.assertEqual(f.attrs["version"].dtype, np.uint32)
            self.assertIsNone(f["stem.conv.weight"].compression)
        self.assertFalse(os.path.exists(self.path("b.h5.tmp")))

    def test_trained_net_round_trip(self):
        # A net after training steps (BN statistics moved, num_batches_tracked > 0).
        net = zw.ZeroNet.for_game("tictactoe", blocks=1, filters=4, value_hidden=8)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        x = torch.from_numpy(random_features(8, TTT))
        for _ in range(3):
            p, v = net(x)
            loss = p.pow(2).mean() + v.pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()
        zw.save_zerofarm_weights(net, self.path("t.h5"), version=3)
        loaded = zw.load_zerofarm_weights(self.path("t.h5"))
        self.assertEqual(int(loaded.state_dict()["stem.bn.num_batches_tracked"]), 3)
        self.assertSameOutputs(self.outputs(net, x.numpy()), self.outputs(loaded, x.numpy()))

    def test_wrapped_and_low_precision_nets_save(self):
        net = zw.ZeroNet.for_game("connect4", blocks=1, filters=4, value_hidden=8)
        zw.save_zerofarm_weights(torch.nn.DataParallel(net), self.path("dp.h5"), "connect4", 1)
        self.assertEqual(zw.load_zerofarm_weights(self.path("dp.h5")).config["filters"], 4)
        zw.save_zerofarm_weights(net.to(torch.bfloat16), self.path("bf16.h5"), "connect4", 1)
        state, _, _ = h5_weights.load_weights(self.path("bf16.h5"))
        self.assertEqual(state["stem.conv.weight"].dtype, np.float32)

    def test_cli_round_trip(self):
        state = zftest.random_weights(C4, seed=9)
        h5_weights.save_weights(self.path("w.h5"), state, C4, version=5)
        zftest.run([sys.executable, SCRIPT, "to-state-dict", self.path("w.h5"), self.path("w.pt")])
        pt = torch.load(self.path("w.pt"))
        sd = pt["state_dict"]
        self.assertEqual(list(sd), list(zw.state_dict_shapes(C4)))
        self.assertEqual(pt["model_version"], 5)  # the .h5's model version travels in the .pt
        zftest.run([sys.executable, SCRIPT, "from-state-dict", self.path("w.pt"), self.path("kept.h5"),
                    "--game", "connect4"])
        self.assertEqual(zw.load_zerofarm_weights(self.path("kept.h5")).version, 5)
        zftest.run([sys.executable, SCRIPT, "from-state-dict", self.path("w.pt"), self.path("w2.h5"),
                    "--game", "connect4", "--version", "6"])
        x = random_features(8, C4)
        a, b = zw.load_zerofarm_weights(self.path("w.h5")), zw.load_zerofarm_weights(self.path("w2.h5"))
        self.assertEqual(b.version, 6)
        self.assertSameOutputs(self.outputs(a, x), self.outputs(b, x))
        # a checkpoint dict of a DataParallel model is accepted too
        torch.save({"model": {"module." + k: v for k, v in sd.items()}, "step": 10}, self.path("ckpt.pt"))
        zftest.run([sys.executable, SCRIPT, "from-state-dict", self.path("ckpt.pt"), self.path("w3.h5"),
                    "--game", "connect4"])
        self.assertSameOutputs(self.outputs(a, x), self.outputs(zw.load_zerofarm_weights(self.path("w3.h5")), x))
        # init writes a loadable random net
        zftest.run([sys.executable, SCRIPT, "init", self.path("r.h5"), "--game", "tictactoe",
                    "--blocks", "1", "--filters", "4"])
        self.assertEqual(zw.load_zerofarm_weights(self.path("r.h5")).config["game"], "tictactoe")

    def test_cli_errors_are_one_line(self):
        torch.save({"stem.conv.weight": torch.zeros(4, 3, 3, 3)}, self.path("bad.pt"))
        for args in (["to-state-dict", self.path("nope.h5"), self.path("x.pt")],
                     ["from-state-dict", self.path("bad.pt"), self.path("x.h5"), "--game", "connect4"]):
            p = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertFalse(os.path.exists(self.path("x.h5")))

    def test_a_pt_rejected_by_the_restricted_unpickler_is_never_retried(self):
        # issue 21: a crafted .pt that makes torch's restricted unpickler raise
        # TypeError (OrderedDict(1, 2, 3)) used to be retried without
        # weights_only, where a pickle can run any code.
        crafted = self.path("crafted.pt")
        with open(crafted, "wb") as f:
            f.write(b"\x80\x02ccollections\nOrderedDict\nq\x00(K\x01K\x02K\x03tq\x01Rq\x02.")
        calls = []
        real_load = torch.load

        @functools.wraps(real_load)  # keeps torch.load's signature, weights_only included
        def spy(*args, **kwargs):
            calls.append(kwargs.get("weights_only", False))
            return real_load(*args, **kwargs)

        torch.load = spy
        try:
            with self.assertRaisesRegex(ValueError, "refused by torch's restricted unpickler"):
                zw._torch_load(crafted)
        finally:
            torch.load = real_load
        self.assertEqual(calls, [True])  # one call, restricted; no unrestricted retry
        p = subprocess.run([sys.executable, SCRIPT, "from-state-dict", crafted, self.path("x.h5"),
                            "--game", "connect4"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("refused", p.stderr)
        self.assertFalse(os.path.exists(self.path("x.h5")))

    def test_strict_loading_rejects_bad_files(self):
        state = zftest.random_weights(C4)
        missing = dict(state)
        del missing["value_head.fc1.bias"]
        h5_weights.save_weights(self.path("missing.h5"), missing, C4, 0)
        with self.assertRaisesRegex(ValueError, "missing 1 tensor"):
            zw.load_zerofarm_weights(self.path("missing.h5"))
        extra = dict(state, **{"blocks.2.conv1.weight": np.zeros((8, 8, 3, 3), np.float32)})
        h5_weights.save_weights(self.path("extra.h5"), extra, C4, 0)
        with self.assertRaisesRegex(ValueError, "unexpected 1 tensor"):
            zw.load_zerofarm_weights(self.path("extra.h5"))
        h5_weights.save_weights(self.path("shape.h5"), state, dict(C4, value_hidden=32), 0)
        with self.assertRaisesRegex(ValueError, "expected"):
            zw.load_zerofarm_weights(self.path("shape.h5"))
        with h5py.File(self.path("other.h5"), "w") as f:
            f["x"] = np.zeros(3)
        with self.assertRaisesRegex(ValueError, "not a zerofarm weights file"):
            zw.load_zerofarm_weights(self.path("other.h5"))

    def test_save_rejects_a_net_for_another_game(self):
        net = zw.ZeroNet.for_game("connect4", blocks=1, filters=4)
        with self.assertRaisesRegex(ValueError, "tictactoe has"):
            zw.save_zerofarm_weights(net, self.path("x.h5"), "tictactoe", 0)
        with self.assertRaisesRegex(ValueError, "no game"):
            zw.save_zerofarm_weights(zw.ZeroNet(3, 6, 7, 7, blocks=1, filters=4), self.path("x.h5"))
        self.assertFalse(os.path.exists(self.path("x.h5")))


def sensitive_weights(config, seed):
    """Random weights whose outputs depend strongly on the input and on every
    detail of the computation: no fc biases (they would decide the policy's
    argmax alone), small BatchNorm variances (the eps matters), a policy
    layer large enough to spread the logits and a value head out of tanh's
    saturation."""
    state = zftest.random_weights(config, seed)
    rng = np.random.default_rng(seed + 1)
    for name in state:
        if name.endswith("running_var"):
            state[name] = rng.uniform(0.02, 0.2, state[name].shape).astype(np.float32)
        elif name.endswith("fc.bias") or name.endswith("fc1.bias") or name.endswith("fc2.bias"):
            state[name] = np.zeros_like(state[name])
    state["policy_head.fc.weight"] *= 3
    state["value_head.fc2.weight"] *= 0.5
    return state


class CppNetworkParityTest(unittest.TestCase):
    """The C++ network (LibTorch, in `zerofarm selfplay`) evaluates a weights
    file written by Python exactly as Python does.

    With --simulations 1, --no-tree-reuse and no Dirichlet noise, each root is
    evaluated, then its most probable legal child: the shard's root_value is
    (v(root) - v(child)) / 2, where the child is the game's next position (or
    the final result, -z, after the last move), and the policy target is
    one-hot on the argmax of the root's legal logits. Both are compared with
    the Python network on the shard's features."""

    @classmethod
    def setUpClass(cls):
        if zftest.binary() is None:
            raise unittest.SkipTest("ZF_BINARY is not set")

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="zf_parity_")
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def selfplay(self, weights, name, noise, seed):
        out = os.path.join(self.dir, name)
        os.makedirs(out)
        zftest.run([zftest.binary(), "selfplay", "--game", "connect4", "--weights", weights,
                    "--simulations", "1", "--no-tree-reuse", "--dirichlet-fraction", noise,
                    "--games", "6", "--concurrent", "6", "--seed", str(seed), "--out", out,
                    "--random-opening-plies", "0",  # every position recorded (check below)
                    # fp32: the parity checks are exact to 1e-5 (the default, `auto`, is bf16
                    # on CPUs with bf16 units). No solver: a proven root's value is exact,
                    # not the network's.
                    "--precision", "fp32", "--no-solver"])
        paths = zf_shards.iter_shards(out)
        self.assertEqual(len(paths), 1)
        self.assertEqual(zf_shards.check_shard(paths[0]), [])
        return zf_shards.load_shard(paths[0])

    def check(self, shard, forward, check_policy):
        logits, value = forward(shard["features"])
        self.assertTrue(np.array_equal(shard["games/position_count"], shard["games/length"]),
                        "every position must be recorded for this check")
        errors, rows = [], 0
        for g in range(len(shard["games/game_id"])):
            b = int(shard["games/first_position"][g])
            e = b + int(shard["games/position_count"][g])
            for i in range(b, e):
                child = value[i + 1] if i + 1 < e else -shard["z"][i]
                errors.append(abs(shard["root_value"][i] - (value[i] - child) / 2))
                if check_policy:
                    f = shard["features"][i]
                    legal = (f[0, 0] == 0) & (f[1, 0] == 0)  # connect4: the column's top cell is empty
                    self.assertEqual(int(np.argmax(np.where(legal, logits[i], -np.inf))),
                                     int(np.argmax(shard["policy"][i])), f"policy of row {i}")
                rows += 1
        self.assertGreater(rows, 20)
        # float32 rounding differences stay below 1e-6; a real difference (BatchNorm eps
        # 1e-4 instead of 1e-5, a flatten order) is 1e-3 or more.
        self.assertLess(max(errors), 1e-5, "C++ and Python values differ")

    def run_parity(self, weights, forward):
        self.check(self.selfplay(weights, "greedy", "0", 5), forward, check_policy=True)
        self.check(self.selfplay(weights, "noisy", "0.25", 6), forward, check_policy=False)

    def test_numpy_written_weights_numpy_reference(self):
        cfg = dict(C4, value_hidden=16)
        state = sensitive_weights(cfg, seed=21)
        path = os.path.join(self.dir, "np.h5")
        h5_weights.save_weights(path, state, cfg, version=4)
        self.run_parity(path, lambda x: zftest.numpy_forward(state, cfg, x))

    def test_value_channels_numpy_reference(self):
        # A value head of 4 channels (format version 3): the C++ net flattens them as numpy does.
        cfg = dict(C4, value_channels=4)
        state = sensitive_weights(cfg, seed=8)
        path = os.path.join(self.dir, "channels.h5")
        h5_weights.save_weights(path, state, cfg, version=3)
        with h5py.File(path, "r") as f:
            self.assertEqual(int(f.attrs["format_version"]), 3)
            self.assertEqual(int(f.attrs["value_channels"]), 4)
        self.assertEqual(h5_weights.load_weights(path)[1]["value_channels"], 4)
        self.run_parity(path, lambda x: zftest.numpy_forward(state, cfg, x))

    @requires_torch
    def test_torch_written_weights_torch_reference(self):
        cfg = dict(C4, blocks=2, filters=8, value_hidden=32)
        net = zw.ZeroNet.from_config(cfg)
        net.load_state_dict({k: torch.from_numpy(v) for k, v in sensitive_weights(cfg, seed=5).items()})
        net.eval()
        path = os.path.join(self.dir, "torch.h5")
        zw.save_zerofarm_weights(net, path, "connect4", 2)

        def forward(x):
            with torch.no_grad():
                p, v = net(torch.from_numpy(x))
            return p.double().numpy(), v.double().numpy()
        self.run_parity(path, forward)


if __name__ == "__main__":
    unittest.main()
