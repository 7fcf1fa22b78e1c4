// WriteWeights, ReadWeights, CheckWeightsMatch.
#include "zerofarm/io/weights_file.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "skip.h"
#include "test_paths.h"
#include "zerofarm/io/h5.h"

namespace zerofarm::io {
namespace {

using testing::ScratchDir;

eval::NamedTensor FloatTensor(const std::string& name, std::vector<int64_t> shape, std::mt19937& rng) {
  eval::NamedTensor t;
  t.name = name;
  t.shape = std::move(shape);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t i = 0; i < t.Elements(); ++i) t.data.push_back(normal(rng));
  return t;
}

eval::WeightSet Connect4Weights() {
  std::mt19937 rng(7);
  eval::WeightSet w;
  w.config = {"connect4", 3, 6, 7, 7, 2, 8, 16};
  w.version = 12;
  w.tensors.push_back(FloatTensor("stem.conv.weight", {8, 3, 3, 3}, rng));
  w.tensors.push_back(FloatTensor("stem.bn.running_mean", {8}, rng));
  eval::NamedTensor tracked;
  tracked.name = "stem.bn.num_batches_tracked";  // a 0-d int64 buffer
  tracked.int_data = {123456789012345};
  w.tensors.push_back(tracked);
  w.tensors.push_back(FloatTensor("blocks.0.conv1.weight", {8, 8, 3, 3}, rng));
  w.tensors.push_back(FloatTensor("policy_head.fc.weight", {7, 84}, rng));
  w.tensors.push_back(FloatTensor("value_head.fc2.bias", {1}, rng));
  w.tensors.push_back(FloatTensor("a.scalar", {}, rng));  // 0-d float
  return w;
}

TEST_CASE("weights round trip exactly", "[io]") {
  ScratchDir dir("zf-io");
  const std::string path = dir / "weights.h5";
  const eval::WeightSet w = Connect4Weights();
  WriteWeights(path, w);
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
  const eval::WeightSet r = ReadWeights(path);
  CHECK(r.config.SameShape(w.config));
  CHECK(r.version == 12);
  REQUIRE(r.tensors.size() == w.tensors.size());
  for (size_t i = 0; i < w.tensors.size(); ++i) {
    const eval::NamedTensor& a = w.tensors[i];
    const eval::NamedTensor& b = r.tensors[i];  // same order as written
    INFO(a.name);
    CHECK(a.name == b.name);
    CHECK(a.shape == b.shape);
    CHECK(a.is_int() == b.is_int());
    CHECK(a.int_data == b.int_data);
    REQUIRE(a.data.size() == b.data.size());
    CHECK((a.data.empty() || std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)) == 0));
  }
  CHECK(r.Find("stem.bn.num_batches_tracked")->int_data[0] == 123456789012345);

  // Rewriting replaces the file atomically.
  eval::WeightSet w2 = w;
  w2.version = 13;
  WriteWeights(path, w2);
  CHECK(ReadWeights(path).version == 13);
}

TEST_CASE("WriteWeights rejects bad tensors", "[io]") {
  ScratchDir dir("zf-io");
  eval::WeightSet w = Connect4Weights();
  w.tensors[0].data.pop_back();
  CHECK_THROWS_WITH(WriteWeights(dir / "w.h5", w), Catch::Contains("stem.conv.weight has 215 values"));
  w = Connect4Weights();
  w.tensors.push_back(w.tensors[1]);
  CHECK_THROWS_WITH(WriteWeights(dir / "w.h5", w), Catch::Contains("duplicate tensor"));
  w = Connect4Weights();
  w.tensors[1].name = "a/b";
  CHECK_THROWS_WITH(WriteWeights(dir / "w.h5", w), Catch::Contains("invalid tensor name 'a/b'"));
  CHECK_FALSE(std::filesystem::exists(dir / "w.h5"));
  CHECK_THROWS_WITH(WriteWeights(dir / "nodir/w.h5", Connect4Weights()),
                    dir / "nodir/w.h5.tmp: create: No such file or directory");
}

TEST_CASE("bad weights files give one-line errors", "[io]") {
  ScratchDir dir("zf-io");
  const std::string missing = dir / "missing.h5";
  CHECK_THROWS_WITH(ReadWeights(missing), missing + ": No such file or directory");
  CHECK_THROWS_WITH(ReadWeights(dir.path()), dir.path() + ": Is a directory");

  const std::string text = dir / "text.h5";
  std::ofstream(text) << "not hdf5";
  CHECK_THROWS_WITH(ReadWeights(text), text + ": not an HDF5 file or truncated");

  const std::string good = dir / "good.h5";
  WriteWeights(good, Connect4Weights());
  const std::string half = dir / "half.h5";
  std::filesystem::copy_file(good, half);
  std::filesystem::resize_file(half, std::filesystem::file_size(good) / 2);
  CHECK_THROWS_WITH(ReadWeights(half), half + ": not an HDF5 file or truncated");

  const std::string plain = dir / "plain.h5";
  { H5File f = CreateFile(plain); }
  CHECK_THROWS_WITH(ReadWeights(plain), plain + ": not a zerofarm weights file");
  {
    H5File f = OpenFile(plain, /*writable=*/true);
    WriteStringAttr(f.id(), "format", kWeightsFormat);
    WriteScalarAttr<int32_t>(f.id(), "format_version", 1);
  }
  CHECK_THROWS_WITH(ReadWeights(plain), plain + ": not a zerofarm weights file (missing attribute game)");
  {
    H5File f = OpenFile(good, /*writable=*/true);
    WriteScalarAttr<int32_t>(f.id(), "format_version", 4);
  }
  CHECK_THROWS_WITH(ReadWeights(good), good + ": weights format version 4; this zerofarm reads up to 3");
  {  // version 3 (a value head of several channels) without its value_channels
    H5File f = OpenFile(good, /*writable=*/true);
    WriteScalarAttr<int32_t>(f.id(), "format_version", 3);
  }
  CHECK_THROWS_WITH(ReadWeights(good),
                    good + ": not a zerofarm weights file (missing attribute value_channels)");
  {  // version 2 (a score head) without its score_plies
    H5File f = OpenFile(good, /*writable=*/true);
    WriteScalarAttr<int32_t>(f.id(), "format_version", 2);
  }
  CHECK_THROWS_WITH(ReadWeights(good),
                    good + ": not a zerofarm weights file (missing attribute score_plies)");
}

TEST_CASE("CheckWeightsMatch names both configs", "[io]") {
  eval::WeightSet w;
  w.config = {"connect4", 3, 6, 7, 7, 6, 64, 64};
  eval::NetConfig same = w.config;
  CHECK_NOTHROW(CheckWeightsMatch(w, same, "weights.h5"));

  eval::NetConfig ttt{"tictactoe", 3, 3, 3, 9, 6, 64, 64};
  CHECK_THROWS_AS(CheckWeightsMatch(w, ttt, "weights.h5"), ConfigError);
  CHECK_THROWS_WITH(CheckWeightsMatch(w, ttt, "weights.h5"),
                    "weights.h5 is for connect4 3x6x7 (6 blocks x 64 filters) but this run "
                    "plays tictactoe 3x3x3");

  eval::NetConfig more_actions = w.config;
  more_actions.actions = 8;
  CHECK_THROWS_WITH(CheckWeightsMatch(w, more_actions, "w.h5"),
                    "w.h5 is for connect4 3x6x7 with 7 actions (6 blocks x 64 filters) but this "
                    "run plays connect4 3x6x7 with 8 actions");

  eval::NetConfig bigger = w.config;
  bigger.blocks = 10;
  bigger.filters = 128;
  CHECK_THROWS_WITH(CheckWeightsMatch(w, bigger, "w.h5"),
                    "w.h5 has 6 blocks x 64 filters (value head 64) but this run expects 10 "
                    "blocks x 128 filters (value head 64)");
  eval::NetConfig channels = w.config;  // only the value head's channels differ: named
  channels.value_channels = 32;
  CHECK_THROWS_WITH(CheckWeightsMatch(w, channels, "w.h5"),
                    "w.h5 has 6 blocks x 64 filters (value head 64) but this run expects 6 blocks x 64 "
                    "filters (value head 64 of 32 channels)");
  eval::NetConfig any_tower = bigger;
  any_tower.blocks = any_tower.filters = any_tower.value_hidden = any_tower.value_channels = 0;
  CHECK_NOTHROW(CheckWeightsMatch(w, any_tower, "w.h5"));
  w.config.value_channels = 32;
  CHECK_NOTHROW(CheckWeightsMatch(w, any_tower, "w.h5"));  // 0: the file decides
}

int RunCommand(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_CASE("weights files written by tools/h5_weights.py and by C++ agree", "[io]") {
  if (RunCommand("/usr/bin/python3 -c 'import h5py, numpy' >/dev/null 2>&1") != 0)
    ZF_SKIP("/usr/bin/python3 with h5py and numpy not found");
  ScratchDir dir("zf-io");
  const std::string tools = testing::SourceDir() + "/tools";
  const std::string from_py = dir / "py.h5";
  const std::string script =
      "import sys; sys.path.insert(0, '" + tools +
      "'); import numpy as np, h5_weights; "
      "cfg = dict(game='connect4', planes=3, height=6, width=7, actions=7, blocks=2, filters=8, "
      "value_hidden=16); "
      "h5_weights.save_weights('" +
      from_py +
      "', {'z.w': np.arange(6, dtype=np.float64)"
      ".reshape(2, 3) / 4, 'a.num_batches_tracked': np.array(5)}, cfg, 9)";
  REQUIRE(RunCommand("/usr/bin/python3 -c \"" + script + "\"") == 0);
  const eval::WeightSet w = ReadWeights(from_py);
  CHECK(w.config.SameShape(eval::NetConfig{"connect4", 3, 6, 7, 7, 2, 8, 16}));
  CHECK(w.version == 9);
  REQUIRE(w.tensors.size() == 2);
  CHECK(w.tensors[0].name == "z.w");  // creation order, not name order
  CHECK(w.tensors[0].shape == std::vector<int64_t>{2, 3});
  CHECK(w.tensors[0].data == std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1, 1.25f});
  CHECK(w.tensors[1].int_data == std::vector<int64_t>{5});
  CHECK(w.tensors[1].shape.empty());

  const std::string from_cpp = dir / "cpp.h5";
  WriteWeights(from_cpp, Connect4Weights());
  CHECK(RunCommand("/usr/bin/python3 " + tools + "/h5_weights.py --show " + from_cpp + " >/dev/null") == 0);
}

// ---- issue 21: a weights file cannot run code or exhaust the machine -------------

// A complete, valid net of `config` (NetTensors), without LibTorch.
eval::WeightSet FullNet(const eval::NetConfig& config) {
  std::mt19937 rng(3);
  eval::WeightSet w;
  w.config = config;
  w.version = 5;
  for (const TensorSpec& spec : NetTensors(config)) {
    if (spec.is_int) {
      eval::NamedTensor t;
      t.name = spec.name;
      t.int_data = {0};
      w.tensors.push_back(t);
    } else {
      w.tensors.push_back(FloatTensor(spec.name, spec.shape, rng));
    }
  }
  return w;
}

eval::NamedTensor* TensorOf(eval::WeightSet* w, const std::string& name) {
  for (auto& t : w->tensors)
    if (t.name == name) return &t;
  return nullptr;
}

const eval::NetConfig kSmallC4{"connect4", 3, 6, 7, 7, 1, 8, 16};

// Writes `w`, reads it back and checks it as the farm does.
void Load(const std::string& path, const eval::WeightSet& w) {
  WriteWeights(path, w);
  CheckNetWeights(ReadWeights(path), path);
}

// Writes a full net of `config` to `path`, then sets its root attribute `name` to `value`.
void WriteWithAttr(const std::string& path, const eval::NetConfig& config, const char* name, int32_t value) {
  WriteWeights(path, FullNet(config));
  H5File f = OpenFile(path, /*writable=*/true);
  WriteScalarAttr<int32_t>(f.id(), name, value);
}

TEST_CASE("NetTensors lists exactly what a net of that config holds", "[io]") {
  const std::vector<TensorSpec> specs = NetTensors(kSmallC4);
  CHECK(specs.size() == 6 + 12 + 8 + 10);  // stem, 1 block, policy head, value head
  CHECK(specs.front().name == "stem.conv.weight");
  CHECK(specs.front().shape == std::vector<int64_t>{8, 3, 3, 3});
  ScratchDir dir("zf-io");
  CHECK_NOTHROW(Load(dir / "ok.h5", FullNet(kSmallC4)));
  // The shipped net (written by the trainer through LibTorch) passes too.
  const std::string shipped = testing::SourceDir() + "/data/connect4-4x32.h5";
  CHECK_NOTHROW(CheckNetWeights(ReadWeights(shipped), shipped));
}

TEST_CASE("a net with a score head round-trips as format version 2, and a bad score_plies is refused",
          "[io]") {
  ScratchDir dir("zf-io");
  eval::NetConfig config = kSmallC4;
  config.score_plies = 42;
  const std::vector<TensorSpec> specs = NetTensors(config);
  CHECK(specs.back().name == "value_head.fc2.bias");
  CHECK(specs.back().shape == std::vector<int64_t>{85});  // wins and losses at 1..42 plies, and the draw
  CHECK(specs[specs.size() - 2].shape == std::vector<int64_t>{85, 16});
  const std::string path = dir / "score.h5";
  CHECK_NOTHROW(Load(path, FullNet(config)));
  CHECK(ReadWeights(path).config.score_plies == 42);
  CHECK(ReadWeights(path).config.SameShape(config));
  {
    H5File f = OpenFile(path);
    CHECK(ReadScalarAttr<int32_t>(f.id(), "format_version") == 2);
  }
  // A scalar head stays format version 1, readable by every zerofarm before the score head.
  WriteWeights(dir / "scalar.h5", FullNet(kSmallC4));
  {
    H5File f = OpenFile(dir / "scalar.h5");
    CHECK(ReadScalarAttr<int32_t>(f.id(), "format_version") == 1);
    CHECK_FALSE(HasAttr(f.id(), "score_plies"));
    CHECK_FALSE(HasAttr(f.id(), "value_channels"));  // one channel: nothing a version 1 reader lacks
  }
  CHECK(ReadWeights(dir / "scalar.h5").config.score_plies == 0);
  CHECK(ReadWeights(dir / "scalar.h5").config.value_channels == 1);
  // The scalar head's tensors under a score head's attributes, and the reverse: one line each.
  eval::WeightSet scalar_tensors = FullNet(kSmallC4);
  scalar_tensors.config.score_plies = 42;
  CHECK_THROWS_WITH(
      Load(dir / "mixed.h5", scalar_tensors),
      Catch::Contains("tensor value_head.fc2.weight has shape [1, 16]") && Catch::Contains("needs [85, 16]"));
  for (int32_t bad : {0, -3, 5000}) {
    WriteWithAttr(path, config, "score_plies", bad);
    INFO(bad);
    CHECK_THROWS_AS(ReadWeights(path), ConfigError);
  }
  CHECK_THROWS_WITH(ReadWeights(path), path + ": score_plies = 5000 is out of range 0..1024");
}

TEST_CASE("a value head of several channels round-trips as format version 3, and a bad count is refused",
          "[io]") {
  ScratchDir dir("zf-io");
  eval::NetConfig config = kSmallC4;
  config.value_channels = 4;
  const std::vector<TensorSpec> specs = NetTensors(config);
  const auto shape_of = [&](const std::string& name) {
    for (const TensorSpec& s : specs)
      if (s.name == name) return s.shape;
    return std::vector<int64_t>{};
  };
  CHECK(shape_of("value_head.conv.weight") == std::vector<int64_t>{4, 8, 1, 1});
  CHECK(shape_of("value_head.bn.running_var") == std::vector<int64_t>{4});
  CHECK(shape_of("value_head.fc1.weight") == std::vector<int64_t>{16, 4 * 42});
  const std::string path = dir / "channels.h5";
  CHECK_NOTHROW(Load(path, FullNet(config)));
  CHECK(ReadWeights(path).config.value_channels == 4);
  CHECK(ReadWeights(path).config.SameShape(config));
  CHECK_FALSE(ReadWeights(path).config.SameShape(kSmallC4));
  {
    H5File f = OpenFile(path);
    CHECK(ReadScalarAttr<int32_t>(f.id(), "format_version") == 3);
    CHECK(ReadScalarAttr<int32_t>(f.id(), "value_channels") == 4);
    CHECK_FALSE(HasAttr(f.id(), "score_plies"));  // version 3 names score_plies only with a score head
  }
  // With a score head as well: version 3, both attributes.
  config.score_plies = 42;
  CHECK_NOTHROW(Load(dir / "both.h5", FullNet(config)));
  CHECK(ReadWeights(dir / "both.h5").config.SameShape(config));
  // One channel stays format 1 or 2, without value_channels: the score head's test above.
  // One channel's tensors under four channels' attributes: one line.
  eval::WeightSet one = FullNet(kSmallC4);
  one.config.value_channels = 4;
  CHECK_THROWS_WITH(Load(dir / "mixed.h5", one), Catch::Contains("tensor value_head.conv.weight has shape "
                                                                 "[1, 8, 1, 1]") &&
                                                     Catch::Contains("needs [4, 8, 1, 1]"));
  // The count is checked before any tensor is read.
  config.score_plies = 0;
  for (int32_t bad : {0, -1, 5000}) {
    WriteWithAttr(path, config, "value_channels", bad);
    INFO(bad);
    CHECK_THROWS_WITH(ReadWeights(path),
                      path + ": value_channels = " + std::to_string(bad) + " is out of range 1..1024");
  }
}

TEST_CASE("weights with a wrong shape or a missing or extra tensor or NaN or Inf are refused in one line",
          "[io]") {
  ScratchDir dir("zf-io");
  eval::WeightSet w = FullNet(kSmallC4);
  TensorOf(&w, "value_head.fc1.weight")->shape = {16, 43};
  TensorOf(&w, "value_head.fc1.weight")->data.resize(16 * 43);
  CHECK_THROWS_AS(Load(dir / "shape.h5", w), ConfigError);
  CHECK_THROWS_WITH(Load(dir / "shape.h5", w), dir / "shape.h5" +
                                                   ": tensor value_head.fc1.weight has shape [16, 43]; "
                                                   "a 1 x 8 net needs [16, 42]");
  w = FullNet(kSmallC4);
  w.tensors.erase(w.tensors.begin() + 3);
  CHECK_THROWS_WITH(Load(dir / "missing.h5", w), Catch::Contains("tensor stem.bn.running_mean is missing"));
  w = FullNet(kSmallC4);
  w.tensors.push_back(w.tensors[0]);
  w.tensors.back().name = "blocks.1.conv1.weight";
  CHECK_THROWS_WITH(Load(dir / "extra.h5", w), Catch::Contains("unexpected tensor blocks.1.conv1.weight"));
  w = FullNet(kSmallC4);
  TensorOf(&w, "blocks.0.bn1.running_var")->data[3] = std::nanf("");
  CHECK_THROWS_WITH(Load(dir / "nan.h5", w),
                    Catch::Contains("blocks.0.bn1.running_var has a non-finite value (nan) at 3"));
  w = FullNet(kSmallC4);
  TensorOf(&w, "policy_head.fc.bias")->data[6] = -INFINITY;
  CHECK_THROWS_WITH(Load(dir / "inf.h5", w),
                    Catch::Contains("policy_head.fc.bias has a non-finite value (inf) at 6"));
}

TEST_CASE("tower attributes out of range are refused before any tensor is read", "[io]") {
  ScratchDir dir("zf-io");
  const std::string path = dir / "w.h5";
  struct Case {
    const char* attr;
    int32_t value;
    const char* says;
  };
  for (const Case& c : {Case{"filters", 1000000, "filters = 1000000 is out of range 1..1024"},
                        Case{"filters", -5, "filters = -5 is out of range 1..1024"},
                        Case{"blocks", 2000000000, "blocks = 2000000000 is out of range 1..80"},
                        Case{"value_hidden", 0, "value_hidden = 0 is out of range 1..4096"},
                        Case{"height", 100000, "height = 100000 is out of range 1..64"}}) {
    WriteWithAttr(path, kSmallC4, c.attr, c.value);
    INFO(c.attr << " = " << c.value);
    CHECK_THROWS_AS(ReadWeights(path), ConfigError);
    CHECK_THROWS_WITH(ReadWeights(path), path + ": " + c.says);
  }
}

TEST_CASE("a dataset declared bigger than the file is refused before it is read", "[io]") {
  if (RunCommand("/usr/bin/python3 -c 'import h5py, numpy' >/dev/null 2>&1") != 0)
    ZF_SKIP("/usr/bin/python3 with h5py and numpy not found");
  ScratchDir dir("zf-io");
  const std::string path = dir / "huge.h5";
  WriteWeights(path, FullNet(kSmallC4));
  // h5py declares a 10^6 x 10^6 float32 dataset (4 TB) without writing it:
  // the file stays a few KiB.
  const std::string script =
      "import h5py; f = h5py.File('" + path +
      "', 'a'); del f['value_head.fc1.weight']; "
      "f.create_dataset('value_head.fc1.weight', shape=(10**6, 10**6), dtype='f4'); f.close()";
  REQUIRE(RunCommand("/usr/bin/python3 -c \"" + script + "\"") == 0);
  REQUIRE(std::filesystem::file_size(path) < (1 << 20));
  CHECK_THROWS_AS(ReadWeights(path), ConfigError);
  CHECK_THROWS_WITH(ReadWeights(path),
                    Catch::Contains("dataset value_head.fc1.weight declares 1000000 x 1000000 "
                                    "elements, more than the file's"));
}

TEST_CASE("MeanOfWeightsFiles averages every float tensor, keeps the counters, takes the last version",
          "[io]") {
  ScratchDir dir("zf-io");
  std::vector<std::string> paths;
  std::vector<eval::WeightSet> nets;
  for (int i = 0; i < 3; ++i) {
    eval::WeightSet w = FullNet(kSmallC4);
    w.version = static_cast<uint32_t>(7 + i);
    for (auto& t : w.tensors) {
      for (float& x : t.data) x = static_cast<float>(i) * 0.5f + x;  // file i: its own values
      for (int64_t& n : t.int_data) n = 100 + i;
    }
    paths.push_back(dir / ("model-" + std::to_string(7 + i) + ".h5"));
    WriteWeights(paths.back(), w);
    nets.push_back(w);
  }
  const eval::WeightSet mean = MeanOfWeightsFiles(paths);
  CHECK(mean.version == 9);
  CHECK(mean.config.SameShape(kSmallC4));
  REQUIRE(mean.tensors.size() == nets[0].tensors.size());
  for (const eval::NamedTensor& t : mean.tensors) {
    INFO(t.name);
    const eval::NamedTensor* first = nets[0].Find(t.name);
    REQUIRE(first);
    CHECK(t.int_data == first->int_data);  // num_batches_tracked: the first file's
    REQUIRE(t.data.size() == first->data.size());
    for (size_t k = 0; k < t.data.size(); ++k) {
      const double want = (static_cast<double>(nets[0].Find(t.name)->data[k]) +
                           nets[1].Find(t.name)->data[k] + nets[2].Find(t.name)->data[k]) /
                          3.0;
      CHECK(t.data[k] == Approx(want).margin(1e-6));
    }
  }
  // One file is its own mean.
  const eval::WeightSet one = MeanOfWeightsFiles({paths[1]});
  CHECK(one.version == 8);
  CHECK(one.Find("stem.conv.weight")->data == nets[1].Find("stem.conv.weight")->data);
}

TEST_CASE("MeanOfWeightsFiles refuses no files, another net, and a bad file in one line", "[io]") {
  ScratchDir dir("zf-io");
  CHECK_THROWS_WITH(MeanOfWeightsFiles({}), "the mean of no weights files");
  WriteWeights(dir / "a.h5", FullNet(kSmallC4));
  eval::NetConfig wider = kSmallC4;
  wider.filters = 16;
  WriteWeights(dir / "b.h5", FullNet(wider));
  CHECK_THROWS_AS(MeanOfWeightsFiles({dir / "a.h5", dir / "b.h5"}), ConfigError);
  CHECK_THROWS_WITH(MeanOfWeightsFiles({dir / "a.h5", dir / "b.h5"}),
                    Catch::StartsWith(dir / "b.h5" + ": another net than " + dir / "a.h5" + "'s (") &&
                        Catch::Contains("16 filters against"));
  std::ofstream(dir / "junk.h5") << "not hdf5";
  CHECK_THROWS_WITH(MeanOfWeightsFiles({dir / "a.h5", dir / "junk.h5"}),
                    dir / "junk.h5" + ": not an HDF5 file or truncated");
  eval::WeightSet nan = FullNet(kSmallC4);
  TensorOf(&nan, "policy_head.fc.bias")->data[2] = std::nanf("");
  WriteWeights(dir / "nan.h5", nan);
  CHECK_THROWS_WITH(MeanOfWeightsFiles({dir / "a.h5", dir / "nan.h5"}),
                    Catch::Contains("nan.h5: tensor policy_head.fc.bias has a non-finite value (nan) at 2"));
}

// Issue 82, point 4: a model is checked as a plugin is (io::OpenOwnCodeFile).
TEST_CASE("a weights file under a directory others may write into is refused, naming a link's target",
          "[io]") {
  ScratchDir dir("zf-io");
  const std::string open = dir / "open";
  REQUIRE(::mkdir(open.c_str(), 0777) == 0);
  REQUIRE(::chmod(open.c_str(), 0777) == 0);
  WriteWeights(open + "/weights.h5", Connect4Weights());
  CHECK_THROWS_AS(ReadWeights(open + "/weights.h5"), ConfigError);
  CHECK_THROWS_WITH(
      ReadWeights(open + "/weights.h5"),
      Catch::Contains("its directory " + open + " is writable by others without the sticky bit") &&
          Catch::EndsWith("; refusing to load it"));
  REQUIRE(::symlink((open + "/weights.h5").c_str(), (dir / "link.h5").c_str()) == 0);
  CHECK_THROWS_WITH(ReadWeights(dir / "link.h5"), Catch::StartsWith(dir / "link.h5" + " (a link to " + open +
                                                                    "/weights.h5): its directory"));
  REQUIRE(::chmod(open.c_str(), 01777) == 0);
  CHECK(ReadWeights(dir / "link.h5").version == 12);
}

}  // namespace
}  // namespace zerofarm::io
