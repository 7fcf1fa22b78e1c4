"""TorchScript models in a real farm (docs/models.md): refused at start in one
line before any child starts, a transformer plays a farm that eval measures
and inspect shows, hot reload takes .pt and keeps the old model when a new one
is refused, and examples/train_torch.py closes the loop. Needs $ZF_BINARY and
torch."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import warnings

import test_support as zftest
import zf_shards

sys.path.insert(0, zftest.HERE)
requires_torch = zftest.skip_without_torch("test_models")
if zftest.HAVE_TORCH:
    import zf_test_models  # noqa: E402

SMALL_FARM = ["--game", "connect4", "--workers", "2", "--games-per-worker", "4", "--simulations", "8",
              "--gpus", "0", "--no-status"]


@requires_torch
class TorchScriptFarmTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if zftest.binary() is None:
            raise unittest.SkipTest("ZF_BINARY is not set")
        cls.tmp = tempfile.mkdtemp(prefix="zf_models_")
        zf_test_models.main(cls.tmp, "connect4", [])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def model(self, kind):
        return os.path.join(self.tmp, kind + ".pt")

    def test_a_broken_model_is_refused_at_start_in_one_line_before_any_child(self):
        for kind, says in (("nan", "not finite"), ("throws", "its forward failed"),
                           ("policy_shape", "policy must be"), ("no_metadata", "zerofarm.json"),
                           ("zip_bomb", "zip bomb"), ("wrong_game", "tictactoe"), ("not_zip", "not a zip"),
                           ("metadata_types", "must be an integer")):
            out = os.path.join(self.tmp, "run-" + kind)
            p = subprocess.run([zftest.binary(), "run", *SMALL_FARM, "--games", "4", "--weights",
                                self.model(kind), "--out", out], capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 2, (kind, p.stdout, p.stderr))
            lines = p.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, (kind, p.stderr))
            self.assertIn(says, lines[0], kind)
            self.assertIn(self.model(kind), lines[0], kind)
            self.assertFalse(os.path.exists(out), f"{kind}: the run directory was made")

    def test_the_built_in_trainer_and_loop_refuse_a_pt_in_one_line(self):
        for command in (["train", "--run", os.path.join(self.tmp, "no-run")],
                        ["loop", "--game", "connect4", "--out", os.path.join(self.tmp, "loop-run")]):
            p = subprocess.run([zftest.binary(), *command, "--weights", self.model("good")], capture_output=True,
                               text=True, timeout=120)
            self.assertEqual(p.returncode, 2, (command, p.stdout, p.stderr))
            self.assertIn("examples/train_torch.py", p.stderr.strip().splitlines()[-1])
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "loop-run")))

    def test_a_trainer_command_is_refused_beside_what_only_zerofarms_trainer_does(self):
        loop = [zftest.binary(), "loop", "--game", "connect4", "--out", os.path.join(self.tmp, "loop-cmd"),
                "--weights", self.model("good")]
        for extra, says in ((["--trainer-command", "no-such-trainer-zf"], "no-such-trainer-zf is not an executable"),
                            (["--trainer-command", "true", "--train-args", "--lr 0.1"], "--train-args go to"),
                            (["--trainer-command", "true", "--final-mean", "2"], "--final-mean averages"),
                            (["--trainer-command", "true", "--recipe", "connect4"], "a recipe schedules")):
            # The recipe names a net's shape, which --weights would make refused first.
            base = loop[:-2] if "--recipe" in extra else loop
            p = subprocess.run(base + extra, capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 2, (extra, p.stdout, p.stderr))
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, (extra, p.stderr))
            self.assertIn(says, p.stderr, extra)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "loop-cmd", "shards")))

    def test_a_transformer_plays_a_farm_that_inspect_and_eval_see(self):
        out = os.path.join(self.tmp, "run-transformer")
        zftest.run([zftest.binary(), "run", *SMALL_FARM, "--games", "6", "--weights",
                    self.model("transformer"), "--out", out])
        paths = zf_shards.iter_shards(out)
        self.assertGreaterEqual(len(paths), 1)
        for path in paths:
            self.assertEqual(zf_shards.check_shard(path), [], path)
            m = zf_shards.read_meta(path)
            self.assertEqual((int(m["model_version_min"]), int(m["model_version_max"])), (7, 7))
        shown = zftest.run([zftest.binary(), "inspect", paths[0]]).stdout
        self.assertIn("model versions 7..7", shown)
        arena = zftest.run([zftest.binary(), "eval", "--weights", self.model("transformer"), "--against",
                            self.model("good"), "--games", "4", "--simulations", "8", "--no-status"]).stdout
        self.assertIn('"kind":"arena"', arena)
        self.assertIn('"games":4', arena)

    def farm_with_models(self, name, models, weights=()):
        """A short farm whose models directory holds `models` (file name -> (kind, version)) at
        start: its log and the model versions its shards record."""
        out = os.path.join(self.tmp, name)
        models_dir = os.path.join(out, "models")
        os.makedirs(models_dir, mode=0o755, exist_ok=True)
        for file_name, (kind, version) in models.items():
            if kind == "h5":
                zftest.run([sys.executable, os.path.join(zftest.TOOLS, "zf_weights_torch.py"), "init",
                            os.path.join(models_dir, file_name), "--game", "connect4", "--blocks", "1",
                            "--filters", "8", "--version", str(version)])
                continue
            zf_test_models.main(models_dir, "connect4", [kind], version=version)
            os.rename(os.path.join(models_dir, kind + ".pt"), os.path.join(models_dir, file_name))
        log = zftest.run([zftest.binary(), "run", *SMALL_FARM, "--games", "4", *weights, "--out", out]).stdout
        versions = set()
        for path in zf_shards.iter_shards(out):
            m = zf_shards.read_meta(path)
            versions |= {int(m["model_version_min"]), int(m["model_version_max"])}
        return log, versions

    def test_hot_reload_takes_the_newest_model_of_either_format(self):
        # The evaluators load the newest model of the models directory before they serve.
        log, versions = self.farm_with_models("reload-pt", {"model-9.pt": ("good", 9), "model-6.h5": ("h5", 6)})
        self.assertEqual(versions, {9}, log[-3000:])
        log, versions = self.farm_with_models("reload-h5", {"model-9.pt": ("good", 9), "model-12.h5": ("h5", 12)})
        self.assertEqual(versions, {12}, log[-3000:])

    def test_a_linked_pt_in_the_models_directory_is_never_followed(self):
        linked = os.path.join(self.tmp, "linked")
        os.makedirs(linked)
        zf_test_models.main(linked, "connect4", ["good"], version=30)
        out = os.path.join(self.tmp, "reload-link")
        os.makedirs(os.path.join(out, "models"), mode=0o755)
        os.symlink(os.path.join(linked, "good.pt"), os.path.join(out, "models", "model-30.pt"))
        log, versions = self.farm_with_models("reload-link", {"model-9.pt": ("good", 9)})
        self.assertEqual(versions, {9}, log[-3000:])

    def test_hot_reload_keeps_the_old_model_when_a_pt_is_refused(self):
        # A newer model present at start would make --weights refused (issue 72): the NaN
        # model-9.pt is published (written aside, renamed in) once the farm's writer is up.
        out = os.path.join(self.tmp, "reload-nan")
        models_dir = os.path.join(out, "models")
        os.makedirs(models_dir, mode=0o755)
        aside = os.path.join(self.tmp, "reload-nan-aside")
        os.makedirs(aside)
        zf_test_models.main(aside, "connect4", ["nan"], version=9)
        log_path = os.path.join(self.tmp, "reload-nan.log")
        with open(log_path, "w") as output:
            farm = subprocess.Popen([zftest.binary(), "run", *SMALL_FARM, "--duration", "15", "--weights",
                                     self.model("good"), "--out", out], stdout=output, stderr=subprocess.STDOUT)
        try:
            for _ in range(1200):  # an evaluator serves once the start checks are behind
                with open(log_path) as f:
                    if "serving workers" in f.read() or farm.poll() is not None:
                        break
                time.sleep(0.1)
            os.rename(os.path.join(aside, "nan.pt"), os.path.join(models_dir, "model-9.pt"))
            self.assertEqual(farm.wait(timeout=300), 0)
        finally:
            if farm.poll() is None:
                farm.kill()
        with open(log_path) as f:
            log = f.read()
        versions = set()
        for path in zf_shards.iter_shards(out):
            m = zf_shards.read_meta(path)
            versions |= {int(m["model_version_min"]), int(m["model_version_max"])}
        self.assertIn("refused " + os.path.join(self.tmp, "reload-nan", "models", "model-9.pt"), log)
        self.assertIn("keeping model version 7", log)
        self.assertIn("not finite", log)
        self.assertEqual(versions, {7}, log[-3000:])


@requires_torch
class SaveTorchScriptTest(unittest.TestCase):
    """save_torchscript scripts (docs/models.md, "Make one"): a model with an `if` on its input
    stays exact; a trace of it, asked for or after scripting failed, is compared with the module
    on the positions of a real farm's shards and refused in one line, with no file written."""

    @classmethod
    def setUpClass(cls):
        if zftest.binary() is None:
            raise unittest.SkipTest("ZF_BINARY is not set")
        cls.tmp = tempfile.mkdtemp(prefix="zf_save_ts_")
        cls.run_dir = os.path.join(cls.tmp, "run")
        zftest.run_farm(cls.run_dir)
        cls.torch, cls.zw = zf_test_models.torch, zf_test_models.zw
        cls.positions = cls.torch.from_numpy(zf_shards.load_run(cls.run_dir)["features"]).float()
        cls.args = tuple(zf_shards.GAME_SHAPES["connect4"][k] for k in ("planes", "height", "width", "actions"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def largest_difference(self, a, b, x):
        with self.torch.no_grad():
            return max(float((p - q).abs().max()) for p, q in zip(a(x), b(x)))

    def refused(self, net, name, **kwargs):
        """The one line save_torchscript refuses `net` with; no file (nor a temporary one) left."""
        path = os.path.join(self.tmp, name)
        with self.assertRaises(self.zw.TraceMismatch) as caught:
            self.zw.save_torchscript(net, path, "connect4", 3, run=self.run_dir, **kwargs)
        line = str(caught.exception)
        self.assertEqual(len(line.splitlines()), 1, line)
        self.assertIn(path + ": not written: the trace of", line)
        self.assertRegex(line, r"differs from the module by [0-9.e+-]+ \(max abs, limit 0.0001\) on \d+ "
                               r"positions of " + re.escape(self.run_dir))
        self.assertEqual([f for f in os.listdir(self.tmp) if f.startswith(name)], [])
        return line

    def test_a_model_with_an_if_on_its_input_is_scripted_and_stays_exact(self):
        net = zf_test_models.BranchOnInput(*self.args).eval()
        path = os.path.join(self.tmp, "branch.pt")
        self.zw.save_torchscript(net, path, "connect4", 3, run=self.run_dir)
        saved = self.torch.jit.load(path)
        self.assertEqual(self.largest_difference(saved, net, self.positions), 0.0)
        self.assertEqual(self.largest_difference(saved, net, self.torch.zeros_like(self.positions[:2])), 0.0)
        # Both branches taken: what a trace would have lost.
        with self.torch.no_grad():
            turned = float((net(self.positions)[0] + 3 * net.inner(self.positions)[0]).abs().max())
        self.assertLess(turned, 1e-5)

    def test_a_trace_asked_for_that_diverges_is_refused_in_one_line(self):
        line = self.refused(zf_test_models.BranchOnInput(*self.args), "branch-traced.pt", trace=True)
        self.assertIn("(trace=True)", line)

    def test_a_model_that_does_not_script_is_traced_and_checked(self):
        net = zf_test_models.NoScript(*self.args)
        path = os.path.join(self.tmp, "noscript.pt")
        with self.assertWarnsRegex(UserWarning, "NoScript does not script"):
            self.zw.save_torchscript(net, path, "connect4", 3, run=self.run_dir)
        self.assertLessEqual(self.largest_difference(self.torch.jit.load(path), net.eval(), self.positions), 1e-6)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the warning is asserted above
            line = self.refused(zf_test_models.NoScript(*self.args, branch=True), "noscript-branch.pt")
        self.assertIn("torch.jit.script failed", line)

    def test_the_cli_traces_on_a_runs_positions_and_exits_3_for_a_divergent_trace(self):
        h5 = os.path.join(zftest.REPO, "data", "connect4-4x32.h5")
        out = os.path.join(self.tmp, "cli.pt")
        p = zftest.run_tool(os.path.join(zftest.TOOLS, "zf_weights_torch.py"), "to-torchscript", h5, out,
                            "--trace", "--run", self.run_dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("traced, equal to the module on real positions", p.stdout)
        # The same command on a net with an `if`: zf_weights_torch.main with that net in place of the .h5's.
        script = (f"import sys; sys.path[:0] = [{zftest.TOOLS!r}, {zftest.HERE!r}]\n"
                  "import zf_shards, zf_test_models as m, zf_weights_torch as zw\n"
                  "net = m.BranchOnInput(3, 6, 7, 7); net.version = 1\n"
                  "net.config = dict(zf_shards.GAME_SHAPES['connect4'], game='connect4')\n"
                  "zw.load_zerofarm_weights = lambda path: net\n"
                  f"sys.exit(zw.main(['to-torchscript', 'x.h5', {out + '2'!r}, '--trace', '--run', "
                  f"{self.run_dir!r}]))\n")
        p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("zf_weights_torch to-torchscript: " + out + "2: not written", p.stderr)
        self.assertFalse(os.path.exists(out + "2"))


@requires_torch
class EveryCommandTest(unittest.TestCase):
    """data/connect4-4x32.h5 as TorchScript (to-torchscript) in every command that runs a network:
    the same numbers as the .h5 where both run fp32, every CPU precision, fp16 refused as for .h5."""

    @classmethod
    def setUpClass(cls):
        if zftest.binary() is None:
            raise unittest.SkipTest("ZF_BINARY is not set")
        cls.tmp = tempfile.mkdtemp(prefix="zf_every_")
        cls.h5 = os.path.join(zftest.REPO, "data", "connect4-4x32.h5")
        cls.pt = os.path.join(cls.tmp, "c4.pt")
        convert = os.path.join(zftest.TOOLS, "zf_weights_torch.py")
        zftest.run([sys.executable, convert, "to-torchscript", cls.h5, cls.pt])
        cls.go_pt = os.path.join(cls.tmp, "go.pt")  # gtp plays Go only: a small conv net for 9x9 Go
        go = dict(planes=3, height=9, width=9, actions=82)
        zf_test_models.zw.save_torchscript(zf_test_models.torch.jit.script(zf_test_models.TinyConv(*go.values())),
                                           cls.go_pt, "go", 3, shape=go)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def zf(self, *args, stdin=None):
        """zerofarm ARGS (stdin: its input): stdout and stderr, failing the test unless it exits 0."""
        p = subprocess.run([zftest.binary(), *args], input=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=300)
        self.assertEqual(p.returncode, 0, f"{args}: {p.stdout[-3000:]}")
        return p.stdout

    def test_eval_gives_the_h5s_move_error_and_plays_an_arena(self):
        pons = os.path.join(zftest.REPO, "data", "reference", "connect4", "Test_L1_R1")
        def move_error(weights):
            out = self.zf("eval", "--weights", weights, "--pons", pons, "--limit", "40", "--simulations", "16",
                          "--no-status", "--cache-dir", self.tmp)
            m = json.loads([x for x in out.splitlines() if '"kind":"move_error"' in x][0])
            return m["model_version"], m["network_alone"], m["mcts"], m["value_head"]
        self.assertEqual(move_error(self.pt), move_error(self.h5))
        arena = self.zf("eval", "--weights", self.pt, "--against", self.h5, "--games", "2", "--simulations", "8",
                        "--no-status")
        self.assertIn('"games":2', arena)

    def test_selfplay_bench_tune_and_gtp_run_a_pt(self):
        self.zf("selfplay", "--weights", self.pt, "--games", "2", "--simulations", "8", "--out",
                os.path.join(self.tmp, "selfplay"))
        shard = zf_shards.read_meta(os.path.join(self.tmp, "selfplay", "selfplay-000000.h5"))
        self.assertEqual(int(shard["model_version_max"]), 1501)  # connect4-4x32.h5's version
        bench = self.zf("bench", "--weights", self.pt, "--parts", "bound", "--runs", "1", "--bound-batches", "8")
        self.assertIn('"bench":"bound"', bench)
        self.assertIn("weights " + self.pt, bench)
        tune = self.zf("tune", "--weights", self.pt, "--quick", "--seconds", "2", "--out", os.path.join(self.tmp, "tune"))
        self.assertIn("TorchScript", tune)
        gtp = self.zf("gtp", "--weights", self.go_pt, "--simulations", "4", stdin="boardsize 9\ngenmove b\nquit\n")
        self.assertRegex(gtp, r"= ([a-hjA-HJ][1-9]|pass)")

    def test_every_cpu_precision_runs_a_pt_and_fp16_is_refused_as_for_h5(self):
        def farm_precision(precision, weights):
            out = os.path.join(self.tmp, "run-" + precision + os.path.splitext(weights)[1])
            log = self.zf("run", *SMALL_FARM, "--games", "2", "--precision", precision, "--weights", weights,
                          "--out", out)
            self.assertTrue(zf_shards.iter_shards(out), (precision, log[-2000:]))
            return re.search(r"LibTorch CPU (\w+)", log).group(1)
        self.assertEqual(farm_precision("fp32", self.pt), "fp32")
        self.assertEqual(farm_precision("bf16", self.pt), "bf16")
        self.assertEqual(farm_precision("auto", self.pt), farm_precision("auto", self.h5))  # one rule for both
        for weights in (self.pt, self.h5):
            p = subprocess.run([zftest.binary(), "run", *SMALL_FARM, "--games", "2", "--precision", "fp16",
                                "--weights", weights, "--out", os.path.join(self.tmp, "run-fp16")],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("fp16 needs a GPU", p.stderr)


@requires_torch
class TrainTorchLoopTest(unittest.TestCase):
    """[slow] A farm and examples/train_torch.py together: the shards' model versions advance."""

    def test_the_loop_closes_in_pytorch(self):
        if zftest.binary() is None:
            raise unittest.SkipTest("ZF_BINARY is not set")
        tmp = tempfile.mkdtemp(prefix="zf_loop_")
        try:
            out = os.path.join(tmp, "run")
            log_path = os.path.join(tmp, "farm.log")
            with open(log_path, "w") as log_file:  # a file, not a pipe nobody reads while it runs
                farm = subprocess.Popen([zftest.binary(), "run", *SMALL_FARM, "--duration", "240", "--blocks", "1",
                                         "--filters", "8", "--shard-positions", "200", "--out", out],
                                        stdout=log_file, stderr=subprocess.STDOUT)
            trainer = subprocess.run([sys.executable, os.path.join(zftest.REPO, "examples", "train_torch.py"), out,
                                      "--models", "2", "--steps", "20", "--batch", "64", "--min-positions", "300"],
                                     capture_output=True, text=True, timeout=400)
            self.assertEqual(trainer.returncode, 0, trainer.stderr[-3000:])
            seen = 0
            deadline = time.monotonic() + 200
            while farm.poll() is None and time.monotonic() < deadline:
                seen = max([int(zf_shards.read_meta(p)["model_version_max"]) for p in zf_shards.iter_shards(out)]
                           + [0])
                if seen >= 2:
                    break
                time.sleep(2)
            farm.send_signal(signal.SIGINT)
            farm.wait(timeout=120)
            with open(log_path) as f:
                log = f.read()
            self.assertGreaterEqual(seen, 2, log[-3000:])
            for p in zf_shards.iter_shards(out):
                self.assertEqual(zf_shards.check_shard(p), [], p)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_train_torch_continues_the_start_models_architecture_and_weights(self):
        """Without a farm: a .pt (TinyConv) and a .h5 (a 1 x 8 ZeroNet) continued on synthetic shards."""
        tmp = tempfile.mkdtemp(prefix="zf_start_")
        try:
            run = os.path.join(tmp, "run")
            os.makedirs(os.path.join(run, "shards", "h"))
            os.makedirs(os.path.join(run, "models"), mode=0o755)  # as a farm makes it
            for i in range(2):
                zftest.write_synthetic_shard(os.path.join(run, "shards", "h", f"s-{i}.h5"), games=20, seed=i,
                                             shard_index=i, first_game_id=100 * i)
            zf_test_models.main(tmp, "connect4", ["good"], version=7)
            h5 = os.path.join(tmp, "start.h5")
            zftest.run([sys.executable, os.path.join(zftest.TOOLS, "zf_weights_torch.py"), "init", h5, "--game",
                        "connect4", "--blocks", "1", "--filters", "8", "--version", "11"])
            torch, zw = zf_test_models.torch, zf_test_models.zw
            def trained(start, env):
                p = subprocess.run([sys.executable, os.path.join(zftest.REPO, "examples", "train_torch.py"), run,
                                    "--models", "1", "--steps", "3", "--batch", "16", "--min-positions", "10",
                                    *start], env=dict(os.environ, **env), capture_output=True, text=True,
                                   timeout=300)
                self.assertEqual(p.returncode, 0, p.stderr[-3000:])
                return p.stdout
            out = trained([], {"ZF_START_MODEL": os.path.join(tmp, "good.pt")})
            self.assertIn("(model version 7)", out)
            good, model8 = (torch.jit.load(path) for path in (os.path.join(tmp, "good.pt"),
                                                              os.path.join(run, "models", "model-8.pt")))
            self.assertEqual({n: t.shape for n, t in model8.named_parameters()},
                             {n: t.shape for n, t in good.named_parameters()})
            self.assertFalse(torch.equal(model8.conv.weight, good.conv.weight))  # trained, not copied
            # model 8 is TinyConv's weights trained three steps, not a fresh net's.
            self.assertLess(float((model8.conv.weight - good.conv.weight).abs().max()), 0.05)
            out = trained(["--start-model", h5], {"ZF_START_MODEL": ""})
            self.assertIn("(model version 11)", out)
            model12 = torch.jit.load(os.path.join(run, "models", "model-12.pt"))
            self.assertEqual({n: tuple(t.shape) for n, t in model12.named_parameters()},
                             {n: tuple(t.shape) for n, t in zw.load_zerofarm_weights(h5).named_parameters()})
            p = subprocess.run([sys.executable, os.path.join(zftest.REPO, "examples", "train_torch.py"), run,
                                "--start-model", os.path.join(tmp, "missing.pt")], capture_output=True, text=True,
                               timeout=300)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertIn("cannot continue " + os.path.join(tmp, "missing.pt"), p.stderr)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_loop_runs_the_farm_on_a_pt_beside_a_trainer_command(self):
        if zftest.binary() is None:
            raise unittest.SkipTest("ZF_BINARY is not set")
        tmp = tempfile.mkdtemp(prefix="zf_loop_cmd_")
        try:
            zf_test_models.main(tmp, "connect4", ["good"], version=7)
            loop = [zftest.binary(), "loop", *SMALL_FARM[:-1], "--shard-positions", "200", "--weights",
                    os.path.join(tmp, "good.pt"), "--eval-every", "10", "--eval-positions", "20",
                    "--eval-simulations", "8", "--eval-solver-simulations", "0"]
            # The trainer: examples/train_torch.py for two models, then until the farm's shards show one of
            # them, then exit 0, which ends the loop (no race with the loop's end).
            trainer = os.path.join(tmp, "trainer.py")
            with open(trainer, "w") as f:
                f.write(f"""#!{sys.executable}
import subprocess, sys, time
sys.path.insert(0, {zftest.TOOLS!r})
import zf_shards
run = sys.argv[-1]
subprocess.run([sys.executable, {os.path.join(zftest.REPO, "examples", "train_torch.py")!r}, run, "--models", "2",
                "--steps", "20", "--batch", "64", "--min-positions", "300"], check=True)
for _ in range(300):
    if max([int(zf_shards.read_meta(p)["model_version_max"]) for p in zf_shards.iter_shards(run)] + [0]) > 7:
        sys.exit(0)
    time.sleep(1)
sys.exit(3)
""")
            os.chmod(trainer, 0o755)
            out = os.path.join(tmp, "run")
            p = subprocess.run(loop + ["--trainer-command", trainer, "--hours", "0.15", "--out", out],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
            # The trainer command's exit 0 ends the loop, exit 0.
            self.assertEqual(p.returncode, 0, p.stdout[-3000:])
            self.assertIn("the trainer command finished", p.stdout)
            # Numbered above the start's version 7: the farm loads them.
            models = os.listdir(os.path.join(out, "models"))
            self.assertTrue(models and all(m.endswith(".pt") and int(m[6:-3]) > 7 for m in models), models)
            # The trainer was told the start (ZF_START_MODEL) and went on with its architecture and
            # weights: every model has good.pt's parameters (TinyConv's, not train_torch.py's Net's).
            start = os.path.join(tmp, "good.pt")
            self.assertIn(f"continuing {start} (model version 7)", p.stdout)
            torch = zf_test_models.torch
            def shapes(path):
                return {n: tuple(t.shape) for n, t in torch.jit.load(path).named_parameters()}
            for m in models:
                self.assertEqual(shapes(os.path.join(out, "models", m)), shapes(start), m)
            # The start is the curve's first point, then the models trained from it.
            with open(os.path.join(out, "eval", "curve.csv")) as f:
                rows = f.read().splitlines()
            column = rows[0].split(",").index("model_version")
            versions = [int(r.split(",")[column]) for r in rows[1:]]
            self.assertEqual(versions[0], 7, rows)
            self.assertGreater(max(versions), 7, rows)
            self.assertIn(" start v7 ", p.stdout)
            # Resumed, the trainer is told the run's newest model.
            told = os.path.join(tmp, "told.txt")
            teller = os.path.join(tmp, "teller.sh")
            with open(teller, "w") as f:
                f.write(f"#!/bin/sh\nprintf '%s' \"$ZF_START_MODEL\" > {told}\n")
            os.chmod(teller, 0o755)
            p = subprocess.run(loop[:loop.index("--weights")] + loop[loop.index("--weights") + 2:] +
                               ["--trainer-command", teller, "--hours", "0.1", "--out", out],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stdout[-3000:])
            newest = max(models, key=lambda m: int(m[6:-3]))
            with open(told) as f:
                self.assertEqual(f.read(), os.path.join(out, "models", newest))
            # One killed by the loop's SIGTERM (no handler, as a plain Python script) stopped cleanly.
            sleeper = os.path.join(tmp, "sleeper.sh")
            with open(sleeper, "w") as f:
                f.write("#!/bin/sh\nexec sleep 600\n")
            os.chmod(sleeper, 0o755)
            p = subprocess.run(loop + ["--trainer-command", sleeper, "--hours", "0.003", "--out",
                                       os.path.join(tmp, "run-sleep")],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stdout[-3000:])
            self.assertNotIn("did not stop cleanly", p.stdout)
            # zerofarm train's warning, not this one's (the farm, on a loaded machine, may still be starting).
            self.assertNotIn("the trainer command was stopped before it could catch SIGTERM", p.stdout)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
