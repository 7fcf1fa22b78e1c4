// The evaluator's view of the models directory (proc/model_watcher.h, a private
// header): newest first, and a link planted there is never offered.
#include "model_watcher.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "test_paths.h"

using zerofarm::proc::ModelStager;
using zerofarm::proc::ModelWatcher;

namespace {
void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
std::string Read(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
}  // namespace

TEST_CASE("model watcher: offers the newest regular model file, never a link", "[proc][reload]") {
  zerofarm::testing::ScratchDir dir("zf-watch");
  const std::string d = dir.path();
  ModelWatcher watcher(d);
  CHECK_FALSE(watcher.Poll(true).has_value());  // nothing yet

  Write(d + "/model-1.h5", "one");
  Write(d + "/model-2.h5.tmp", "a copy in progress");
  std::filesystem::create_symlink(d + "/model-1.h5", d + "/model-7.h5");  // planted: never followed
  std::filesystem::create_symlink("/etc/hostname", d + "/model-8.h5");
  REQUIRE(watcher.Poll(true) == d + "/model-1.h5");
  watcher.Loaded(d + "/model-1.h5");
  CHECK_FALSE(watcher.Poll(true).has_value());  // only links above version 1

  Write(d + "/model-3.h5", "three");
  REQUIRE(watcher.Poll(true) == d + "/model-3.h5");
  watcher.Refused(d + "/model-3.h5");
  CHECK_FALSE(watcher.Poll(true).has_value());  // refused and unchanged
  Write(d + "/model-3.h5", "three, now complete");
  CHECK(watcher.Poll(true) == d + "/model-3.h5");  // changed: offered again
}

TEST_CASE("model stager: each new model copied once in steps and never through a link", "[proc][reload]") {
  zerofarm::testing::ScratchDir dir("zf-stage");
  const std::string from = dir / "models", to = dir / "stage";
  std::filesystem::create_directories(from);
  std::filesystem::create_directories(to);
  std::filesystem::create_symlink("/etc/hostname", from + "/model-9.h5");  // planted: never read
  ModelStager stager(from, to);
  stager.StageNow();
  CHECK(stager.Copies() == 0);

  const std::string big(100'000, 'w');
  Write(from + "/model-1.h5", big);
  CHECK(stager.Step(40'000, true));  // a copy in steps: under way after 40 kB
  CHECK_FALSE(std::filesystem::exists(to + "/model-1.h5"));
  CHECK(std::filesystem::exists(to + "/.model-1.h5.tmp"));
  CHECK(stager.Step(40'000));
  CHECK_FALSE(stager.Step(40'000));  // done: renamed into place
  CHECK(Read(to + "/model-1.h5") == big);
  CHECK_FALSE(std::filesystem::exists(to + "/.model-1.h5.tmp"));
  CHECK(std::filesystem::last_write_time(to + "/model-1.h5") ==
        std::filesystem::last_write_time(from + "/model-1.h5"));
  stager.StageNow();
  CHECK(stager.Copies() == 1);  // staged once
  CHECK(stager.BytesCopied() == big.size());

  // A restarted supervisor finds it staged already: nothing read again.
  ModelStager again(from, to);
  again.StageNow();
  CHECK(again.Copies() == 0);

  // Newer ones: the newest two kept; a planted link at the temporary name is replaced, not followed.
  const std::string victim = dir / "victim";
  Write(victim, "victim");
  std::filesystem::create_symlink(victim, to + "/.model-2.h5.tmp");
  Write(from + "/model-2.h5", "two");
  stager.StageNow();
  Write(from + "/model-3.pt", "three");
  stager.StageNow();
  CHECK(Read(victim) == "victim");
  CHECK(Read(to + "/model-2.h5") == "two");
  CHECK(Read(to + "/model-3.pt") == "three");
  CHECK_FALSE(std::filesystem::exists(to + "/model-1.h5"));
  CHECK(stager.Copies() == 3);
  ModelWatcher watcher(to);  // the evaluators' view: the staged copy
  CHECK(watcher.Poll(true) == to + "/model-3.pt");
}
