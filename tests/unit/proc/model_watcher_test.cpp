// The evaluator's view of the models directory (proc/model_watcher.h, a private
// header): newest first, and a link planted there is never offered.
#include "model_watcher.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "test_paths.h"

using zerofarm::proc::ModelWatcher;

namespace {
void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
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
