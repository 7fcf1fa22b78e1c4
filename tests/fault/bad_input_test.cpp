// Bad input and a hostile environment: each gets one clear line and an exit
// code, and nothing already finished is lost or left half-written.
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "farm_check.h"
#include "model_zip.h"
#include "skip.h"
#include "test_paths.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/io/weights_file.h"

using namespace zerofarm;
using namespace zerofarm::testing;

namespace {

// ERROR lines of a log.
std::vector<std::string> ErrorLines(const std::string& log) {
  std::vector<std::string> out;
  std::istringstream is(log);
  std::string line;
  while (std::getline(is, line))
    if (line.rfind("E ", 0) == 0) out.push_back(line);
  return out;
}

eval::NetConfig SmallNet(const std::string& game, int planes, int h, int w, int actions) {
  eval::NetConfig c;
  c.game = game;
  c.planes = planes;
  c.height = h;
  c.width = w;
  c.actions = actions;
  c.blocks = 1;
  c.filters = 8;
  return c;
}

// A tmpfs of `bytes` mounted on `dir` for the test's lifetime (root only).
class SmallDisk {
 public:
  SmallDisk(const std::string& dir, size_t bytes) : dir_(dir) {
    std::filesystem::create_directories(dir);
    const std::string opts = "size=" + std::to_string(bytes);
    mounted_ = mount("tmpfs", dir.c_str(), "tmpfs", 0, opts.c_str()) == 0;
  }
  ~SmallDisk() {
    if (mounted_) umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }

 private:
  std::string dir_;
  bool mounted_ = false;
};

}  // namespace

TEST_CASE("weights that are truncated, not HDF5, or for another game fail at start with one line",
          "[multiprocess][fault]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  ScratchDir dir("zf-bad-weights");
  io::WriteWeights(dir / "ttt.h5", eval::RandomWeights(SmallNet("tictactoe", 3, 3, 3, 9), 1));
  io::WriteWeights(dir / "c4.h5", eval::RandomWeights(SmallNet("connect4", 3, 6, 7, 7), 1));
  std::filesystem::copy_file(dir / "c4.h5", dir / "cut.h5");
  std::filesystem::resize_file(dir / "cut.h5", std::filesystem::file_size(dir / "c4.h5") / 3);
  std::ofstream(dir / "text.h5") << "these are not weights\n";
  for (const std::string name : {"ttt.h5", "cut.h5", "text.h5", "missing.h5"}) {
    Spawned p(FarmArgs(dir / ("run-" + name), {"--weights", dir / name, "--games", "2"}), dir / "p");
    CheckUsageError(p, 120, Catch::Contains(name), name);
  }
  // And the right file works.
  Spawned ok(FarmArgs(dir / "run-ok", {"--weights", dir / "c4.h5", "--games", "4"}), dir / "ok");
  CHECK(ok.Wait(300) == 0);
}

TEST_CASE("a full output disk stops the writer cleanly and every finished shard stays intact",
          "[multiprocess][fault]") {
  ScratchDir dir("zf-enospc");
  const std::string out = dir / "disk";
  SmallDisk disk(out, 160 * 1024);
  if (!disk.mounted()) ZF_SKIP("cannot mount a small tmpfs here (needs root)");
  Spawned farm(FarmArgs(out + "/run", {"--shard-positions", "60", "--compression", "0", "--duration", "120"}),
               dir / "farm");
  const int code = farm.Wait(300);
  const std::string err = farm.Stderr(), summary = farm.Stdout();
  INFO(err);
  INFO(summary);
  CHECK(code == kExitNoSpace);
  CHECK_THAT(err, Catch::Contains("No space left on device"));
  CHECK_THAT(summary, Catch::Contains("were NOT written"));
  const auto shards = io::ListShards(HostDir(out + "/run"));
  CHECK(shards.size() >= 1);
  const ShardCheck check = CheckShards(HostDir(out + "/run"));  // each complete shard opens and is valid
  CHECK(check.duplicate_ids == 0);
  const auto leftovers = FilesWithSuffix(out, ".tmp");
  for (const auto& f : leftovers) INFO("left behind: " << f);
  CHECK(leftovers.empty());
  CHECK(SegmentsOf(farm.pid()).empty());
}

TEST_CASE("rings too big for /dev/shm fail at start with one line and leave no segment",
          "[multiprocess][fault]") {
  ScratchDir dir("zf-shm");
  Spawned p(FarmArgs(dir / "run", {"--workers", "1024", "--ring-slots", "1000000"}), dir / "p");
  const int code = p.Wait(120);
  const std::string err = p.Stderr();
  INFO(err);
  CHECK(code == kExitFailure);
  const auto errors = ErrorLines(err);
  CHECK(CountNewlines(err) == 1);
  CHECK_THAT(err, Catch::Contains("/dev/shm"));
  CHECK(SegmentsOf(p.pid()).empty());
}

TEST_CASE("an output directory that cannot be written fails at start with one line",
          "[multiprocess][fault]") {
  ScratchDir dir("zf-unwritable");
  std::ofstream(dir / "file") << "x";
  Spawned p(FarmArgs(dir / "file/run", {}), dir / "p");
  const int code = p.Wait(60);
  const std::string err = p.Stderr();
  INFO(err);
  CHECK(code != 0);
  CHECK(CountNewlines(err) == 1);
  CHECK_THAT(err, Catch::Contains(dir / "file/run"));
  // A directory the user may not write: run as user nobody when root (root
  // writes anywhere), under a root-owned, read-only ro/ that nobody can reach.
  REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
  std::filesystem::create_directories(dir / "ro");
  REQUIRE(::chmod((dir / "ro").c_str(), 0555) == 0);
  Spawned q(FarmArgs(dir / "ro/run", {}), dir / "q", /*unprivileged=*/true);
  const int ro_code = q.Wait(60);
  const std::string ro_err = q.Stderr();
  INFO(ro_err);
  CHECK(ro_code != 0);
  CHECK(ro_code != 125);  // the child did become nobody
  CHECK(CountNewlines(ro_err) == 1);
  CHECK_THAT(ro_err, Catch::Contains("Permission denied"));
  CHECK_FALSE(std::filesystem::exists(dir / "ro/run"));
}

TEST_CASE("a crash loop is bounded: the run stops with a clear error", "[multiprocess][fault]") {
  ScratchDir dir("zf-storm");
  setenv("ZF_FAULT_CRASH", "worker-1", 1);
  Spawned p(FarmArgs(dir / "run", {}), dir / "p");
  unsetenv("ZF_FAULT_CRASH");
  const int code = p.Wait(120);
  const std::string err = p.Stderr();
  INFO(err);
  CHECK(code == kExitFailure);
  CHECK_THAT(err, Catch::Contains("worker-1 died 10 times in 30 s; giving up"));
  CHECK(SegmentsOf(p.pid()).empty());
  CHECK(FilesWithSuffix(dir / "run", ".tmp").empty());
}

TEST_CASE("two runs never share an output directory", "[multiprocess][fault]") {
  ScratchDir dir("zf-lock");
  Spawned first(FarmArgs(dir / "run", {"--duration", "30"}), dir / "first");
  std::this_thread::sleep_for(std::chrono::seconds(2));
  Spawned second(FarmArgs(dir / "run", {"--games", "1"}), dir / "second");
  CHECK(second.Wait(60) == kExitUsage);
  CHECK_THAT(second.Stderr(), Catch::Contains("another zerofarm run"));
  first.Signal(SIGINT);
  CHECK(first.Wait(120) == 0);
}

TEST_CASE("after a SIGKILLed supervisor: children exit, the next run cleans up and continues numbering",
          "[multiprocess][fault]") {
  ScratchDir dir("zf-killed");
  const std::string out = dir / "run";
  Spawned first(FarmArgs(out, {"--shard-positions", "60"}), dir / "first");
  // Wait for a few shards, then kill the supervisor outright.
  for (int i = 0;
       i < 600 && (!std::filesystem::exists(HostDir(out)) || io::ListShards(HostDir(out)).size() < 2); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto children = ChildPids(first.pid());
  REQUIRE(children.size() >= 4);
  const auto segments = SegmentsOf(first.pid());
  REQUIRE(segments.size() == 1);
  first.Signal(SIGKILL);
  first.Wait(30);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  for (pid_t c : children) CHECK_FALSE(ProcessAlive(c));  // PR_SET_PDEATHSIG

  // What a killed run leaves: its segment, perhaps a .tmp shard. Plant one.
  std::ofstream(HostDir(out) + "/shard-999999.h5.tmp") << "half a shard";
  const auto before = io::ListShards(HostDir(out));
  std::map<std::string, uintmax_t> sizes;
  for (const auto& s : before) sizes[s] = std::filesystem::file_size(s);

  Spawned second(FarmArgs(out, {"--games", "10", "--shard-positions", "60"}), dir / "second");
  REQUIRE(second.Wait(300) == 0);
  CHECK(std::filesystem::exists(segments[0]) == false);  // the dead run's segment is gone
  CHECK(FilesWithSuffix(out, ".tmp").empty());           // the partial shard is gone
  const auto after = io::ListShards(HostDir(out));
  CHECK(after.size() > before.size());
  for (const auto& s : before) CHECK(std::filesystem::file_size(s) == sizes[s]);  // nothing overwritten
  const ShardCheck check = CheckShards(HostDir(out));
  CHECK(check.duplicate_ids == 0);
}

TEST_CASE("zerofarm without zerofarm-torch beside it says so in one line for the commands that need it",
          "[multiprocess][fault]") {
  if (!eval::TorchBuilt()) ZF_SKIP("built without LibTorch: zerofarm runs everything itself");
  ScratchDir dir("zf-no-torch-binary");
  const std::string lone = dir / "zerofarm";
  std::filesystem::copy_file(ZF_BINARY, lone);
  std::filesystem::permissions(lone, std::filesystem::perms::owner_all);
  const std::vector<std::vector<std::string>> cases = {
      {lone, "run", "--game", "connect4", "--workers", "1", "--gpus", "0", "--games", "1", "--out",
       dir / "run", "--no-status"},
      {lone, "train", "--run", dir / "run", "--steps", "1"},
      {lone, "selfplay", "--games", "1"},
  };
  for (const auto& args : cases) {
    Spawned p(args, dir / "p");
    const int code = p.Wait(120);
    const std::string err = p.Stderr();
    INFO(args[1] << ": " << err);
    CHECK(code == kExitFailure);
    CHECK(CountNewlines(err) == 1);
    CHECK_THAT(err, Catch::Contains("zerofarm-torch"));
  }
  // The run made no shards, left no segment and no half-written file.
  CHECK(!std::filesystem::exists(dir / "run/shards"));
  // inspect needs no network: it runs in zerofarm alone (here, on nothing).
  Spawned inspect({lone, "inspect", dir / "nothing"}, dir / "inspect");
  CHECK(inspect.Wait(60) == kExitFailure);  // no such file, said by inspect itself
  CHECK_THAT(inspect.Stderr(), !Catch::Contains("zerofarm-torch"));
}

// ---- issue 21: hostile input (points 2 and 8) ---------------------------------------

namespace {
// A valid 1 x 8 Connect Four net, changed by `edit` and written to `path`.
void WriteEditedNet(const std::string& path, const std::function<void(eval::WeightSet*)>& edit) {
  eval::WeightSet w = eval::RandomWeights(SmallNet("connect4", 3, 6, 7, 7), 1);
  edit(&w);
  io::WriteWeights(path, w);
}

eval::NamedTensor* Tensor(eval::WeightSet* w, const std::string& name) {
  for (auto& t : w->tensors)
    if (t.name == name) return &t;
  return nullptr;
}

// True when `text` holds no control byte but newlines (nothing echoed raw).
bool Printable(const std::string& text) {
  for (unsigned char c : text)
    if ((c < 0x20 && c != '\n') || c == 0x7f) return false;
  return true;
}
}  // namespace

TEST_CASE("hostile weights files are refused at start with one line before any child starts",
          "[multiprocess][fault]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  ScratchDir dir("zf-hostile-weights");
  WriteEditedNet(dir / "nan.h5",
                 [](eval::WeightSet* w) { Tensor(w, "blocks.0.conv1.weight")->data[5] = NAN; });
  WriteEditedNet(dir / "inf.h5",
                 [](eval::WeightSet* w) { Tensor(w, "value_head.fc2.bias")->data[0] = INFINITY; });
  WriteEditedNet(dir / "shape.h5", [](eval::WeightSet* w) {
    eval::NamedTensor* t = Tensor(w, "policy_head.fc.bias");
    t->shape = {6};
    t->data.resize(6);
  });
  WriteEditedNet(dir / "missing.h5", [](eval::WeightSet* w) { w->tensors.pop_back(); });
  WriteEditedNet(dir / "filters.h5", [](eval::WeightSet* w) { w->config.filters = 1000000; });
  for (const std::string name : {"nan.h5", "inf.h5", "shape.h5", "missing.h5", "filters.h5"}) {
    const std::string out = dir / ("run-" + name);
    Spawned p(FarmArgs(out, {"--weights", dir / name, "--games", "2"}), dir / "p");
    const int code = p.Wait(120);
    const std::string err = p.Stderr();
    INFO(name << ": " << err);
    CHECK(code == kExitUsage);
    CHECK(CountNewlines(err) == 1);
    CHECK_THAT(err, Catch::Contains(name));
    CHECK_FALSE(std::filesystem::exists(out + "/shards"));  // before any directory, segment or child
    CHECK(SegmentsOf(p.pid()).empty());
  }
}

TEST_CASE("non-HDF5 weights exit 2 in every command that takes weights", "[multiprocess][fault]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  ScratchDir dir("zf-text-weights");
  std::ofstream(dir / "text.h5") << "these are not weights\n";
  io::WriteWeights(dir / "c4.h5", eval::RandomWeights(SmallNet("connect4", 3, 6, 7, 7), 1));
  const std::vector<std::vector<std::string>> cases = {
      {ZF_BINARY, "selfplay", "--game", "connect4", "--games", "1", "--weights", dir / "text.h5"},
      {ZF_BINARY, "eval", "--weights", dir / "c4.h5", "--against", dir / "text.h5", "--games", "2"},
      {ZF_BINARY, "eval", "--weights", dir / "text.h5", "--against", dir / "c4.h5", "--games", "2"},
      {ZF_BINARY, "loop", "--out", dir / "loop", "--pons", ReferenceFile("connect4/Test_L3_R1"),
       "--eval-positions", "4", "--run-args", "--weights " + dir / "text.h5" + " --host-id " + kTestHost},
  };
  for (const auto& args : cases) {
    Spawned p(args, dir / "p");
    const int code = p.Wait(180);
    const std::string err = p.Stderr();
    INFO(args[1] << " " << args[3] << ": " << err);
    CHECK(code == kExitUsage);
    CHECK_THAT(err, Catch::Contains("text.h5: not an HDF5 file or truncated"));
  }
}

TEST_CASE("bad command lines and config files get one line that names the culprit and exit 2",
          "[multiprocess][fault]") {
  ScratchDir dir("zf-bad-cli");
  std::filesystem::create_directories(dir / "confdir");
  std::ofstream(dir / "binary.conf") << "workers = 2\n\x01\x02\x1b[2J\xff\xfe garbage\n";
  std::ofstream(dir / "value.conf") << "workers = \x1b[31mred\n";
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  std::vector<Case> cases = {
      {FarmArgs("", {}), "--out \"\" names no directory"},
      {FarmArgs(dir / "run", {"--config", dir / "confdir"}), "is a directory"},
      {FarmArgs(dir / "run", {"--workers", "abc"}), "--workers: bad value 'abc' (an integer)"},
      {FarmArgs(dir / "run", {"--duration=soon"}), "--duration: bad value 'soon' (a number)"},
      {FarmArgs(dir / "run", {"--config", dir / "binary.conf"}),
       "binary.conf:2: expected key = value, got '\\x01"},
      {FarmArgs(dir / "run", {"--config", dir / "value.conf"}), "bad value '\\x1b[31mred'"},
  };
  if (eval::TorchAvailable())  // said by the trainer before it waits for data
    cases.push_back({{ZF_BINARY, "train", "--run", dir / "run", "--device", "cpu", "--cuda-graph"},
                     "--cuda-graph needs the trainer on a GPU, in fp32"});
  cases.push_back({{ZF_BINARY, "train", "--run", dir / "run", "--cuda-graph=maybe"},
                   "--cuda-graph must be auto, on or off, not 'maybe'"});
  for (const auto& c : cases) {
    Spawned p(c.args, dir / "p");
    const std::string err = CheckUsageError(p, 60, Catch::Contains(c.says), c.says);
    INFO(c.says << ": " << err);
    CHECK(Printable(err));
  }
  CHECK_FALSE(std::filesystem::exists(dir / "run"));
}

TEST_CASE("an output disk full before the run starts exits 4 and leaves no tmp file",
          "[multiprocess][fault]") {
  ScratchDir dir("zf-full-at-start");
  const std::string disk_dir = dir / "disk";
  SmallDisk disk(disk_dir, 64 * 1024);
  if (!disk.mounted()) ZF_SKIP("cannot mount a small tmpfs here (needs root)");
  {  // fill it up
    std::ofstream fill(disk_dir + "/fill", std::ios::binary);
    const std::string block(4096, 'x');
    for (int i = 0; i < 64 && fill; ++i) fill << block << std::flush;
  }
  Spawned p(FarmArgs(disk_dir + "/run", {"--games", "2"}), dir / "p");
  const int code = p.Wait(120);
  const std::string err = p.Stderr();
  INFO(err);
  CHECK(code == kExitNoSpace);
  CHECK(CountNewlines(err) == 1);
  CHECK_THAT(err, Catch::Contains("No space left on device"));
  CHECK(FilesWithSuffix(disk_dir, ".tmp").empty());
  CHECK(SegmentsOf(p.pid()).empty());
}

// ---- issue 75: files that crash libhdf5 --------------------------------------------

namespace {
// How a command refuses a file that crashed the HDF5 checker (io/h5_check.h).
const char* const kCrashed = ": refused: reading it crashed libhdf5 (";

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("weights and shards that crash libhdf5 are refused in one line and never crash the command",
          "[multiprocess][fault]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  ScratchDir dir("zf-h5-crash");
  // Weights: at start, exit 2, nothing made.
  WriteEditedNet(dir / "crash.h5", [](eval::WeightSet*) {});
  BreakGlobalHeapReference(dir / "crash.h5");
  Spawned run(FarmArgs(dir / "run-w", {"--weights", dir / "crash.h5", "--games", "2"}), dir / "w");
  CheckUsageError(run, 120, Catch::Contains("crash.h5" + std::string(kCrashed)), "run --weights");
  CHECK_FALSE(std::filesystem::exists(dir / "run-w/shards"));
  // Shards: a real run's, one of them copied and broken.
  Spawned farm(FarmArgs(dir / "run", {"--games", "16"}), dir / "farm");
  REQUIRE(farm.Wait(300) == 0);
  const std::vector<std::string> shards = FilesWithSuffix(dir / "run/shards", ".h5");
  REQUIRE_FALSE(shards.empty());
  const std::string broken = dir / "run/shards/broken.h5";  // a top-level shard: trainers read it
  std::filesystem::copy_file(shards[0], broken);
  BreakGlobalHeapReference(broken);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{ZF_BINARY, "inspect", broken},
        std::vector<std::string>{ZF_BINARY, "export", broken, "--format", "jsonl"}}) {
    Spawned p(args, dir / "p");
    const int code = p.Wait(120);
    const std::string err = p.Stderr();
    INFO(args[1] << ": " << err);
    CHECK(code == kExitFailure);  // as for any file that is not a shard
    CHECK(CountNewlines(err) == 1);
    CHECK_THAT(err, Catch::Contains(broken + kCrashed));
  }
  // The trainer skips it with one line (as any unreadable shard) and trains on the others.
  Spawned train({ZF_BINARY, "train", "--run", dir / "run", "--steps", "2", "--batch", "16", "--blocks", "1",
                 "--filters", "8", "--min-positions", "10", "--replay", "0", "--no-wait"},
                dir / "train");
  const int code = train.Wait(300);
  const std::string err = train.Stderr();
  INFO(err);
  CHECK(code == 0);
  CHECK(Occurrences(err, "skipping shard: " + broken + kCrashed) == 1);
}

// Issue 86: the farm's own recovery reads (the writer's manifest repair and last shard, the
// supervisor's .tmp shards) go through the checker too: a shard that crashes libhdf5 there
// is refused in one line and set aside as NAME.refused, and the farm starts and runs.
TEST_CASE("a shard that crashes libhdf5 in the farm's recovery is refused in one line and kept aside",
          "[multiprocess][fault]") {
  ScratchDir dir("zf-h5-recovery");
  const std::string out = dir / "run", host = HostDir(out);
  const auto farm = [&](const std::string& name) {
    Spawned p(FarmArgs(out, {"--games", "6", "--shard-positions", "16"}), dir / name);
    const int code = p.Wait(300);
    const std::string err = p.Stderr();
    INFO(name << ": " << err);
    CHECK(code == 0);
    return err;
  };
  farm("first");
  std::vector<std::string> shards = FilesWithSuffix(host, ".h5");
  REQUIRE(shards.size() >= 2);
  const std::string broken = dir / "broken.h5";
  std::filesystem::copy_file(shards[0], broken);
  BreakGlobalHeapReference(broken);
  const std::string crafted = Slurp(broken);
  const auto next_name = [&](const std::string& suffix) {
    const std::string last = FilesWithSuffix(host, ".h5").back();  // shard-NNNNNN.h5
    const int n = std::stoi(last.substr(last.size() - 9, 6)) + 1;
    char name[32];
    std::snprintf(name, sizeof name, "shard-%06d.h5", n);
    return host + "/" + name + suffix;
  };
  // Where it is planted (each after the runs before), and how the line that refuses it begins.
  for (int where = 0; where < 3; ++where) {
    const std::string path = where == 0   ? next_name("")      // renamed, never listed: the writer's repair
                             : where == 1 ? next_name(".tmp")  // a killed writer's: the supervisor's
                                          : FilesWithSuffix(host, ".h5").back();  // the newest listed one
    const std::string why = where == 0   ? "not listing " + path + " in "
                            : where == 1 ? "not finishing the shard .tmp of an earlier run: "
                                         : "not skipping by the last shard: ";  // the writer rereads it
    const std::vector<std::string> before = FilesWithSuffix(host, ".h5");
    std::ofstream(path, std::ios::binary | std::ios::trunc) << crafted;
    const std::string err = farm(path.substr(path.rfind('/') + 1));
    INFO(path << ": " << err);
    CHECK(Occurrences(err, path + kCrashed) == 1);
    CHECK(Occurrences(err, why) == 1);
    CHECK(Occurrences(err, "kept as " + path + ".refused") == 1);
    CHECK_FALSE(std::filesystem::exists(path));
    CHECK(Slurp(path + ".refused") == crafted);  // kept, byte for byte
    size_t written = 0;                          // and the farm went on: shards of names it had not before
    for (const std::string& shard : FilesWithSuffix(host, ".h5"))
      written += std::find(before.begin(), before.end(), shard) == before.end();
    CHECK(written > 0);
  }
  CHECK(FilesWithSuffix(host, ".refused").size() == 3);
}

// Issue 85: a model whose load hangs (ZF_FAULT_PROBE_HANG: the probe and a
// child of its own never return) is refused in one line once the probe's
// deadline passes, before any child of the farm starts, and the probe's
// whole process group is gone.
TEST_CASE("a model whose probe hangs is refused in one line at its deadline, its processes killed",
          "[multiprocess][fault]") {
  if (!eval::TorchBuilt()) ZF_SKIP("built without LibTorch");
  ScratchDir dir("zf-probe-hang");
  // A .pt that io::ReadWeights takes (its archive and metadata); the probe is never reached further.
  std::ofstream(dir / "hang.pt", std::ios::binary)
      << Zip({{"m/data.pkl", "x"}, {"m/extra/zerofarm.json", ModelMetadata("connect4")}});
  const std::string pids = dir / "probe-pids";
  setenv("ZF_FAULT_PROBE_HANG", pids.c_str(), 1);
  setenv("ZF_MODEL_PROBE_SECONDS", "30", 1);  // ample for the hook to run, even on a loaded machine
  Spawned p(FarmArgs(dir / "run", {"--weights", dir / "hang.pt", "--games", "2"}), dir / "p");
  unsetenv("ZF_FAULT_PROBE_HANG");
  unsetenv("ZF_MODEL_PROBE_SECONDS");
  CheckUsageError(
      p, 120, Catch::Contains(dir / "hang.pt" + ": loading and probing the model did not finish in 30 s"));
  CHECK_FALSE(std::filesystem::exists(dir / "run/shards"));
  std::ifstream in(pids);
  int n = 0;
  for (pid_t pid; in >> pid; ++n) {
    // Gone, or a zombie no one has reaped yet: never still running.
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (std::getline(stat, line)) CHECK(line.substr(line.rfind(')') + 2, 1) == "Z");
  }
  CHECK(n == 2);  // the probe and its child both ran the hook
}
