// The evaluator's view of the models directory (proc/model_watcher.h, a private
// header): newest first, and a link planted there is never offered.
#include "model_watcher.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
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
// What `poll` logs (ZF_LOG writes to fd 2), through the file `capture`.
template <class F>
std::string LoggedBy(const std::string& capture, F poll) {
  const int saved = ::dup(2);
  const int fd = ::open(capture.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE((saved >= 0 && fd >= 0));
  ::dup2(fd, 2);
  ::close(fd);
  poll();
  ::dup2(saved, 2);
  ::close(saved);
  return Read(capture);
}
size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
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

TEST_CASE("model watcher: a file that appears at or below the loaded N is logged once, never loaded",
          "[proc][reload]") {
  zerofarm::testing::ScratchDir dir("zf-watch-ignored");
  const std::string d = dir / "models", capture = dir / "stderr";
  std::filesystem::create_directories(d);
  for (const char* name : {"model-1.h5", "model-2.h5", "model-5.h5"}) Write(d + "/" + name, name);
  ModelWatcher watcher(d);
  std::string log = LoggedBy(capture, [&] {
    REQUIRE(watcher.Poll(true) == d + "/model-5.h5");
    watcher.Loaded(d + "/model-5.h5");
    CHECK_FALSE(watcher.Poll(true).has_value());
  });
  CHECK(Count(log, "ignoring") == 0);  // the run's history: there at the first look

  Write(d + "/model-3.h5", "published late");
  Write(d + "/model-6.h5", "six");
  Write(d + "/model-6.pt", "six too");  // the same N: one of the two is loaded
  log = LoggedBy(capture, [&] {
    const std::optional<std::string> six = watcher.Poll(true);
    REQUIRE(six.has_value());
    watcher.Loaded(*six);
    for (int i = 0; i < 3; ++i) CHECK_FALSE(watcher.Poll(true).has_value());
  });
  INFO(log);
  CHECK(Count(log, "ignoring " + d +
                       "/model-3.h5: hot reload loads only a model-N numbered above model-5, "
                       "the last loaded") == 1);
  CHECK(Count(log, "ignoring ") == 2);  // model-3 and the other model-6, once each
  CHECK(Count(log, "numbered above model-6, the last loaded") == 1);

  Write(d + "/model-3.h5", "published again, changed");
  log = LoggedBy(capture, [&] {
    CHECK_FALSE(watcher.Poll(true).has_value());
    CHECK_FALSE(watcher.Poll(true).has_value());
  });
  CHECK(Count(log, "ignoring " + d + "/model-3.h5") == 1);
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
