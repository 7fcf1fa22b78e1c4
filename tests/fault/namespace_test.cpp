// Stale-segment cleanup across PID namespaces (issue #21, point 6): a farm
// started in a new PID namespace (a container sharing /dev/shm) cannot see
// another farm's supervisor pid, yet must not remove its live segment; a
// dead run's segment is still removed. Decided by the flock every live
// segment's creator holds (shm/segment.h), not by kill(pid, 0).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "farm_check.h"
#include "skip.h"
#include "test_paths.h"
#include "zerofarm/shm/segment.h"

using namespace zerofarm;
using namespace zerofarm::testing;

namespace {

bool WaitForLog(const Spawned& p, const std::string& text, int times, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string s = p.Stderr();
    int n = 0;
    for (size_t at = s.find(text); at != std::string::npos; at = s.find(text, at + 1)) ++n;
    if (n >= times) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// A segment whose creator was SIGKILLed: its name stays, its lock is gone.
std::string DeadRunsSegment() {
  int fd[2];
  REQUIRE(pipe(fd) == 0);
  const pid_t child = fork();
  if (child == 0) {
    close(fd[0]);
    shm::ShmSegment segment = shm::ShmSegment::Create("run", 4096);
    const std::string name = segment.name() + "\n";
    if (write(fd[1], name.data(), name.size()) < 0) _exit(1);
    pause();
    _exit(0);
  }
  close(fd[1]);
  char buf[256] = {0};
  const ssize_t n = read(fd[0], buf, sizeof buf - 1);
  close(fd[0]);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  REQUIRE(n > 1);
  return std::string("/dev/shm") + std::string(buf, static_cast<size_t>(n - 1));
}

}  // namespace

TEST_CASE(
    "a farm in another PID namespace never removes a live farm's segment and still removes a dead one's",
    "[multiprocess][fault][namespace]") {
  if (std::system("unshare --pid --fork --mount-proc true >/dev/null 2>&1") != 0)
    ZF_SKIP(
        "unshare --pid --fork --mount-proc fails here: it needs root and a real root filesystem (not a "
        "chroot)");
  ScratchDir dir("zf-pidns");
  Spawned live(FarmArgs(dir / "live", {}), dir / "live");
  REQUIRE(WaitForLog(live, "serving workers", 1, 120));
  const auto segments = SegmentsOf(live.pid());
  REQUIRE(segments.size() == 1);
  // The repro's premise: inside a new PID namespace the live supervisor's pid
  // is not there, so kill(pid, 0) would call its run dead.
  const std::string probe =
      "unshare --pid --fork --mount-proc sh -c 'kill -0 " + std::to_string(live.pid()) + "' >/dev/null 2>&1";
  CHECK(std::system(probe.c_str()) != 0);
  const std::string dead = DeadRunsSegment();
  REQUIRE(std::filesystem::exists(dead));
  std::this_thread::sleep_for(std::chrono::seconds(3));  // older than RemoveIfStale's minimum age

  std::vector<std::string> args = {"/usr/bin/unshare", "--pid", "--fork", "--mount-proc"};
  for (const auto& a : FarmArgs(dir / "other", {"--games", "2"})) args.push_back(a);
  Spawned other(args, dir / "other");
  const int code = other.Wait(300);
  INFO(other.Stderr());
  CHECK(code == 0);
  CHECK(std::filesystem::exists(segments[0]));  // the live farm's segment is still there
  CHECK_FALSE(std::filesystem::exists(dead));   // the dead run's is gone
  CHECK_THAT(other.Stderr(), Catch::Contains("removed the segment " + dead.substr(8)));

  // And the live farm still works: a restarted evaluator opens the segment by name.
  pid_t eval = -1;
  for (pid_t pid : ChildPids(live.pid()))
    if (Slurp("/proc/" + std::to_string(pid) + "/comm") == "zf-eval-0\n") eval = pid;
  REQUIRE(eval > 0);
  kill(eval, SIGKILL);
  CHECK(WaitForLog(live, "serving workers", 2, 120));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  live.Signal(SIGINT);
  CHECK(live.Wait(180) == 0);
  const std::string summary = live.Stdout();
  INFO(summary);
  CHECK(NumberBefore(summary, " written in ") == NumberBefore(summary, " games finished"));
  CHECK(NumberBefore(summary, " games finished") > 0);
}
