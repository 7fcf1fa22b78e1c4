#include "zerofarm/proc/child_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>

namespace zerofarm::proc {

TEST_CASE("WaitAll waits for children at once then kills the ones left (stopped ones too)", "[proc]") {
  ChildProcess quick = ChildProcess::Fork("quick", []() { return 7; });
  ChildProcess slow = ChildProcess::Fork("slow", []() {
    sleep(60);
    return 0;
  });
  ChildProcess stopped = ChildProcess::Fork("stopped", []() {
    sleep(60);
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
  CHECK(secs < 30);  // one 0.5 s wait for all, not one per child (each would sleep 60 s)
}

}  // namespace zerofarm::proc
