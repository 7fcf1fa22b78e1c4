// TorchScript model files (docs/models.md): the built-in net exported gives
// the native path's numbers; a model that breaks the contract is refused in
// one line at load; a forward that fails later gives NaN, not a crash.
// The models are made by tests/python/zf_test_models.py and
// tools/zf_weights_torch.py with Debian's python3-torch.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "model_zip.h"
#include "skip.h"
#include "test_paths.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/rng.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/game/game.h"
#include "zerofarm/io/weights_file.h"

using namespace zerofarm;
using Catch::Matchers::Contains;

namespace {

int RunCommand(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool HaveTorchPython() { return RunCommand("/usr/bin/python3 -c 'import torch, h5py' >/dev/null 2>&1") == 0; }

// `n` positions of `game` from random playouts (a new game when one ends), encoded.
std::vector<uint8_t> Positions(const game::Game& g, int n, uint64_t seed) {
  Rng rng(seed);
  auto s = g.NewInitialState();
  const size_t fb = g.Shape().FeatureBytes();
  std::vector<uint8_t> f(n * fb);
  std::vector<int> legal;
  for (int i = 0; i < n; ++i) {
    if (s->IsTerminal()) s = g.NewInitialState();
    s->EncodeFeatures(f.data() + i * fb);
    s->LegalActions(&legal);
    s->Apply(legal[rng.Below(legal.size())]);
  }
  return f;
}

struct Outputs {
  std::vector<float> policy, value;
};

Outputs Evaluate(eval::Evaluator& e, const std::vector<uint8_t>& features, int n) {
  const eval::NetConfig& c = e.Config();
  Outputs o{std::vector<float>(static_cast<size_t>(n) * c.actions), std::vector<float>(n)};
  const int batch = 256;
  const size_t fb = static_cast<size_t>(c.planes) * c.height * c.width;
  for (int at = 0; at < n; at += batch) {
    eval::LeafChunk chunk{features.data() + at * fb, o.policy.data() + static_cast<size_t>(at) * c.actions,
                          o.value.data() + at, std::min(batch, n - at)};
    e.Evaluate(&chunk, 1);
  }
  return o;
}

float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  float most = 0;
  for (size_t i = 0; i < a.size(); ++i) most = std::max(most, std::abs(a[i] - b[i]));
  return most;
}

std::string ModelsFor(const testing::ScratchDir& dir, const std::string& game) {
  const std::string out = dir / game;
  REQUIRE(RunCommand("mkdir -p " + out + " && /usr/bin/python3 " + testing::SourceDir() +
                     "/tests/python/zf_test_models.py " + out + " " + game) == 0);
  return out;
}

eval::TorchOptions Fp32(int probe_batch = 64) {
  eval::TorchOptions o;
  o.probe_batch = probe_batch;
  return o;
}

}  // namespace

TEST_CASE("the built-in net as TorchScript gives the native outputs on 1,000 positions of every game",
          "[io][torch][torchscript]") {
  if (!HaveTorchPython()) ZF_SKIP("/usr/bin/python3 with torch and h5py not found");
  testing::ScratchDir dir("zf-ts");
  for (const std::string& name : game::GameNames()) {
    CAPTURE(name);
    const auto g = game::MakeGame(name);
    const eval::WeightSet native = eval::RandomWeights(eval::GameNetConfig(*g, 2, 16, 32), 5);
    const std::string h5 = dir / (name + ".h5"), pt = dir / (name + ".pt");
    io::WriteWeights(h5, native);
    REQUIRE(RunCommand("/usr/bin/python3 " + testing::SourceDir() +
                       "/tools/zf_weights_torch.py to-torchscript " + h5 + " " + pt + " >/dev/null") == 0);
    const eval::WeightSet scripted = io::ReadWeights(pt);
    CHECK(scripted.config.scripted);
    CHECK(scripted.config.game == name);
    auto a = eval::MakeTorchEvaluator(native, Fp32());
    auto b = eval::MakeTorchEvaluator(scripted, Fp32());
    const std::vector<uint8_t> f = Positions(*g, 1000, 11);
    const Outputs x = Evaluate(*a, f, 1000), y = Evaluate(*b, f, 1000);
    CHECK(MaxAbsDiff(x.policy, y.policy) <= 1e-5f);
    CHECK(MaxAbsDiff(x.value, y.value) <= 1e-5f);
  }
}

TEST_CASE("a TorchScript model that breaks the contract is refused in one line naming what",
          "[io][torch][torchscript]") {
  if (!HaveTorchPython()) ZF_SKIP("/usr/bin/python3 with torch and h5py not found");
  testing::ScratchDir dir("zf-ts");
  const std::string models = ModelsFor(dir, "connect4");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not_zip", "not a zip archive"},
      {"truncated", "not a zip archive"},
      {"zip_bomb", "a zip bomb"},
      {"no_metadata", "no extra file zerofarm.json"},
      {"metadata_types", "\"planes\" must be an integer"},
      {"metadata_json", "not one JSON object"},
      {"nan", "not finite"},
      {"throws", "its forward failed on a probe batch of 1"},
      {"policy_shape", "policy must be [batch, actions] = [1, 7]; it is [1, 6]"},
      {"value_range", "outside [-1, 1]"},
      {"three_outputs", "forward must return two tensors (policy, value); it returned 3"},
      {"int_policy", "policy and value must be floating point"},
  };
  for (const auto& [kind, message] : cases) {
    CAPTURE(kind);
    const std::string path = models + "/" + kind + ".pt";
    const auto load = [&] {
      const eval::WeightSet w = io::ReadWeights(path);
      eval::MakeTorchEvaluator(w, Fp32());
    };
    CHECK_THROWS_AS(load(), ConfigError);
    CHECK_THROWS_WITH(load(), Contains(message) && Contains(path) && !Contains("\n"));
  }
  // The probe runs at the farm's largest batch too, not only at 1.
  const eval::WeightSet good = io::ReadWeights(models + "/good.pt");
  CHECK(good.version == 7);
  CHECK_NOTHROW(eval::MakeTorchEvaluator(good, Fp32(1024)));
  CHECK_NOTHROW(eval::MakeTorchEvaluator(io::ReadWeights(models + "/transformer.pt"), Fp32(256)));
}

TEST_CASE("a .pt2 package is refused in one line by a build without LibTorch 2.x, checked by one with it",
          "[io][torch][torchscript]") {
  if (!HaveTorchPython()) ZF_SKIP("/usr/bin/python3 with torch and h5py not found");
  testing::ScratchDir dir("zf-pt2");
  // A package's layout (its model under data/aotinductor/, zerofarm.json at its top), and a
  // TorchScript archive misnamed .pt2.
  const std::string pt2 = dir / "model.pt2", misnamed = dir / "misnamed.pt2";
  const std::string make = R"(/usr/bin/python3 -c 'import json, sys, zipfile
z = zipfile.ZipFile(sys.argv[1], "w")
z.writestr("data/aotinductor/model/m.so", b"x" * 64)
z.writestr("zerofarm.json", json.dumps(dict(game="connect4", planes=3, height=6, width=7, actions=7, version=5)))
z.close()' )";
  REQUIRE(RunCommand(make + pt2) == 0);
  REQUIRE(RunCommand("/usr/bin/python3 " + testing::SourceDir() + "/tests/python/zf_test_models.py " +
                     std::string(dir / "") + " connect4 good && mv " + (dir / "good.pt") + " " + misnamed) ==
          0);
  if (!eval::AotiBuilt()) {
    for (const std::string& path : {pt2, misnamed})
      CHECK_THROWS_WITH(io::ReadWeights(path), Contains("needs a zerofarm built with LibTorch 2.x") &&
                                                   Contains(path) && Contains(eval::TorchVersionBuilt()) &&
                                                   !Contains("\n"));
    return;
  }
  const eval::WeightSet w = io::ReadWeights(pt2);  // a LibTorch 2.x build: read as a package
  CHECK(w.package);
  CHECK(w.version == 5);
  CHECK(w.config.game == "connect4");
  CHECK_THROWS_WITH(io::ReadWeights(misnamed), Contains("not an AOTInductor package"));
  CHECK_THROWS_WITH(eval::MakeTorchEvaluator(w, Fp32()),
                    Contains("cannot load it as an AOTInductor package"));
}

TEST_CASE("a TorchScript model whose forward fails on real positions gives NaN outputs, not a crash",
          "[io][torch][torchscript]") {
  if (!HaveTorchPython()) ZF_SKIP("/usr/bin/python3 with torch and h5py not found");
  testing::ScratchDir dir("zf-ts");
  const std::string models = ModelsFor(dir, "connect4");
  const auto g = game::MakeGame("connect4");
  const std::vector<uint8_t> f = Positions(*g, 8, 3);
  for (const char* kind : {"throws_later", "nan_later"}) {
    CAPTURE(kind);
    auto e =
        eval::MakeTorchEvaluator(io::ReadWeights(models + "/" + kind + ".pt"), Fp32());  // the probe passes
    const Outputs o = Evaluate(*e, f, 8);
    CHECK(std::isnan(o.value[1]));
  }
  auto good = eval::MakeTorchEvaluator(io::ReadWeights(models + "/good.pt"), Fp32());
  const Outputs o = Evaluate(*good, f, 8);
  for (float v : o.value) CHECK(std::abs(v) <= 1.0f);
  CHECK(good->Describe().find("TorchScript") != std::string::npos);
  CHECK(good->ModelVersion() == 7);
}

namespace {
using testing::Zip;

std::string Metadata(const std::string& game) { return testing::ModelMetadata(game); }
}  // namespace

// The model fuzz target's first finding (tests/fuzz/model_fuzz.cpp): an entry
// name with a newline was echoed raw, a message of two lines.
TEST_CASE("a model archive's entry names and game are shown escaped and never raw", "[io][torchscript]") {
  testing::ScratchDir dir("zf-ts-names");
  const auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir / name, std::ios::binary) << bytes;
    return dir / name;
  };
  const std::string good =
      write("good.pt", Zip({{"m/data.pkl", "x"}, {"m/extra/zerofarm.json", Metadata("connect4")}}));
  const eval::WeightSet w = io::ReadWeights(good);  // the archive as made here is read
  CHECK(w.config.game == "connect4");
  CHECK(w.version == 1);
  const std::string name = write("name.pt", Zip({{"m/data.pkl\n\x1b[31m", "x"}}, 9));
  CHECK_THROWS_AS(io::ReadWeights(name), ConfigError);
  CHECK_THROWS_WITH(io::ReadWeights(name),
                    Contains("entry m/data.pkl\\x0a\\x1b[31m has compression method 9") && !Contains("\n"));
  const std::string game =
      write("game.pt", Zip({{"m/data.pkl", "x"}, {"m/extra/zerofarm.json", Metadata("con\\nnect4")}}));
  CHECK_THROWS_WITH(
      io::ReadWeights(game),
      Contains("zerofarm.json: game \"con\\x0anect4\" is not a game's name") && !Contains("\n"));
  // The same for a weights file's game attribute.
  eval::NetConfig c{"con\nnect4", 3, 6, 7, 7, 1, 8, 64};
  io::WriteWeights(dir / "game.h5", eval::RandomWeights(c, 1));
  CHECK_THROWS_WITH(io::ReadWeights(dir / "game.h5"),
                    Contains("game.h5: game \"con\\x0anect4\" is not a game's name") && !Contains("\n"));
}

TEST_CASE("a zip64 locator in a file too short for its record is refused and never read past",
          "[io][torchscript]") {
  testing::ScratchDir dir("zf-ts-zip64");
  // The model target's second finding: a zip64 locator in a file shorter than
  // a zip64 record (56 bytes), whose bound then underflowed, and the record
  // was read at its offset, 2^40.
  std::string zip64(20 + 22, '\0');
  zip64.replace(0, 4, "PK\x06\x07");
  zip64[8 + 5] = 1;  // the locator's record offset, little-endian: 2^40
  zip64.replace(20, 4, "PK\x05\x06");
  zip64.replace(20 + 16, 4, "\xff\xff\xff\xff");  // the directory's offset: "see the zip64 record"
  std::ofstream(dir / "zip64.pt", std::ios::binary) << zip64;
  CHECK_THROWS_WITH(io::ReadWeights(dir / "zip64.pt"),
                    Contains("not a zip archive") && Contains("(bad zip64 record)"));
}

TEST_CASE("a zip bomb's refusal names the limit that tripped: one entry's ratio or the total",
          "[io][torchscript]") {
  testing::ScratchDir dir("zf-ts-bomb");
  // One entry of 1 KiB that would inflate to 100 MiB: past 1032 times its bytes.
  std::ofstream(dir / "ratio.pt", std::ios::binary)
      << Zip({{"m/data.pkl", std::string(1024, 'x')}}, 8, 100 << 20);
  CHECK_THROWS_WITH(
      io::ReadWeights(dir / "ratio.pt"),
      Contains("entry m/data.pkl inflates to 104857600 bytes from 1024, more than 1032 times") &&
          !Contains("in all"));
  // Three entries of 2 MiB, each within the ratio (1 GiB: 512 times), 3 GiB in all.
  const std::string two_mib(2 << 20, 'x');
  std::ofstream(dir / "total.pt", std::ios::binary)
      << Zip({{"m/data/0", two_mib}, {"m/data/1", two_mib}, {"m/data/2", two_mib}}, 8, uint64_t{1} << 30);
  CHECK_THROWS_WITH(io::ReadWeights(dir / "total.pt"),
                    Contains("its entries inflate to 3221225472 bytes up to entry m/data/2, more than the "
                             "2147483648 a model may hold in all") &&
                        !Contains("times its bytes"));
}
