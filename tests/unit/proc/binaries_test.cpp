// Which binary a process starts its children with, when its own file was
// replaced while it ran (a rebuild during a long `zerofarm loop`).
#include "zerofarm/proc/binaries.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "test_paths.h"
#include "zerofarm/core/error.h"
#include "zerofarm/proc/options.h"

using namespace zerofarm;
using zerofarm::testing::ScratchDir;

namespace {
// A file at PATH with mode MODE (replacing any there: unlinked, then written anew, as a linker does).
void WriteFile(const std::string& path, mode_t mode) {
  ::unlink(path.c_str());
  std::ofstream(path) << "#!/bin/sh\n";
  REQUIRE(::chmod(path.c_str(), mode) == 0);
}

// What the kernel's link for an open file reads, as /proc/PID/exe does for a binary.
std::string LinkOf(int fd) {
  return std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(fd)).string();
}
}  // namespace

TEST_CASE("a binary replaced while it runs starts its children from the new file at its path", "[proc]") {
  ScratchDir dir("zf-bin");
  const std::string bin = dir / "zerofarm";
  WriteFile(bin, 0755);
  const int fd = ::open(bin.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  CHECK(proc::RunnablePath(LinkOf(fd)) == bin);  // not replaced: the path itself

  WriteFile(bin, 0755);  // the rebuild
  const std::string link = LinkOf(fd);
  CHECK(link == bin + " (deleted)");  // the kernel's form, which exec cannot use
  CHECK(proc::RunnablePath(link) == bin);

  WriteFile(bin, 0644);  // a file there that cannot run: the link as it was
  CHECK(proc::RunnablePath(LinkOf(fd)) == bin + " (deleted)");
  ::unlink(bin.c_str());  // nothing there
  CHECK(proc::RunnablePath(LinkOf(fd)) == bin + " (deleted)");
  ::close(fd);

  CHECK(proc::RunnablePath(" (deleted)") == " (deleted)");
  CHECK(proc::RunnablePath("/usr/bin/x") == "/usr/bin/x");
  CHECK(proc::SelfBinary() == std::filesystem::read_symlink("/proc/self/exe").string());
}

TEST_CASE("a command handed over by a binary of another build is refused, in one line", "[proc]") {
  unsetenv(proc::kHandOverEnv);
  proc::CheckHandOver("loop");  // not handed over: nothing to check
  proc::MarkHandOver();         // what the binary that hands over does
  REQUIRE(std::getenv(proc::kHandOverEnv) != nullptr);
  CHECK(std::string(std::getenv(proc::kHandOverEnv)) == proc::OptionTableFingerprint());
  proc::CheckHandOver("loop");                        // the same build: accepted
  CHECK(std::getenv(proc::kHandOverEnv) == nullptr);  // and not passed on to children

  setenv(proc::kHandOverEnv, "0123456789abcdef", 1);  // another build's options
  try {
    proc::CheckHandOver("loop");
    FAIL("a hand-over from another build was accepted");
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Contains("handed 'loop' over") && Catch::Contains("different builds") &&
                         Catch::Contains("rebuild both"));
    CHECK(what.find('\n') == std::string::npos);
  }
  CHECK(std::getenv(proc::kHandOverEnv) == nullptr);
}
