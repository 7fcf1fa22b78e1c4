#include "zerofarm/proc/child_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "hang_bound.h"

// No timed assertion here (hang_bound.h): a wait that must end early is
// given a timeout (or the children a sleep) of kLongWaitMs, and checked to
// end before kHangSeconds; a grace that must be waited out is checked from
// below (no load makes it shorter).
namespace zerofarm::proc {

using testing::kHangSeconds;
using testing::kLongWaitMs;
using testing::SecondsSince;

TEST_CASE("WaitAll waits for children at once then kills the ones left (stopped ones too)", "[proc]") {
  ChildProcess quick = ChildProcess::Fork("quick", []() { return 7; });
  ChildProcess slow = ChildProcess::Fork("slow", []() {
    sleep(kLongWaitMs / 1000);
    return 0;
  });
  ChildProcess stopped = ChildProcess::Fork("stopped", []() {
    sleep(kLongWaitMs / 1000);
    return 0;
  });
  stopped.Signal(SIGSTOP);
  int ticks = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<int> st = WaitAll({&quick, &slow, nullptr, &stopped}, 500, [&]() { ++ticks; });
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(st.size() == 4);
  CHECK(WIFEXITED(st[0]));
  CHECK(WEXITSTATUS(st[0]) == 7);
  CHECK(WIFSIGNALED(st[1]));
  CHECK(WTERMSIG(st[1]) == SIGKILL);
  CHECK(st[2] == -1);
  CHECK(WIFSIGNALED(st[3]));
  CHECK(!quick.running());
  CHECK(!slow.running());
  CHECK(!stopped.running());
  CHECK(ticks > 0);
  CHECK(secs < kHangSeconds);  // the 0.5 s grace, then kills: no child slept its kLongWaitMs out
}

// A batch system signals every process of a job at once, in no set order:
// a child killed by SIGTERM or SIGINT counts as part of the stop when the
// supervisor's own signal comes within the grace; other deaths never wait.
TEST_CASE("a child's death by a stop signal waits briefly for the supervisor's own", "[proc]") {
  auto status_of = [](int sig) {
    // The child gets the default action, not Catch's handler (which reports
    // and hangs in a forked copy): set around the fork, so no signal races it.
    struct sigaction dfl = {};
    struct sigaction catch_handler = {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGTERM, &dfl, &catch_handler);
    ChildProcess c = ChildProcess::Fork("victim", []() {
      sleep(60);
      return 0;
    });
    sigaction(SIGTERM, &catch_handler, nullptr);
    kill(c.pid(), sig);
    int st = -1;
    REQUIRE(c.WaitFor(10000, &st));
    return st;
  };
  const int term = status_of(SIGTERM), killed = status_of(SIGKILL);
  std::atomic<int> flag{0};
  // No signal of the supervisor's: false, after the grace for SIGTERM only.
  auto t0 = std::chrono::steady_clock::now();
  CHECK_FALSE(DiedInSignalledStop(term, flag, 100));
  CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(100));  // the grace, waited out
  // Other deaths never wait: a grace of kLongWaitMs is not waited out.
  t0 = std::chrono::steady_clock::now();
  CHECK_FALSE(DiedInSignalledStop(killed, flag, kLongWaitMs));
  CHECK_FALSE(DiedInSignalledStop(0, flag, kLongWaitMs));  // exit code 0
  CHECK(SecondsSince(t0) < kHangSeconds);
  // The supervisor's signal 20 ms after the child's death: true, without the whole grace.
  std::thread late([&flag]() {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    flag.store(SIGTERM, std::memory_order_relaxed);  // relaxed: as the handler stores it
  });
  t0 = std::chrono::steady_clock::now();
  CHECK(DiedInSignalledStop(term, flag, kLongWaitMs));
  CHECK(SecondsSince(t0) < kHangSeconds);
  late.join();
  // Already stopping: any death counts.
  CHECK(DiedInSignalledStop(killed, flag, 0));
}

}  // namespace zerofarm::proc
