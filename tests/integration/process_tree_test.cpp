// TreeCpuSeconds: the CPU time of a process tree, live and reaped
// descendants alike (the loop's CPU clock). Only the parent asserts.
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>

#include "zerofarm/proc/child_process.h"

using namespace zerofarm;

namespace {

// Burns `seconds` of this process's CPU time (not wall time).
void Spin(double seconds) {
  timespec t{};
  volatile uint64_t sink = 0;
  do {
    for (int i = 0; i < 100000; ++i) sink = sink + static_cast<uint64_t>(i);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  } while (t.tv_sec + t.tv_nsec * 1e-9 < seconds);
}

}  // namespace

TEST_CASE("TreeCpuSeconds counts a tree's live processes and the ones they reaped", "[multiprocess][proc]") {
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The child: a grandchild burns 0.4 s and is reaped; then 0.2 s of its own.
    const pid_t grandchild = fork();
    if (grandchild == 0) {
      Spin(0.4);
      _exit(0);
    }
    int status = 0;
    waitpid(grandchild, &status, 0);
    Spin(0.2);
    const char byte = 1;
    if (write(ready[1], &byte, 1) != 1) _exit(1);
    pause();  // until the parent kills it
    _exit(0);
  }
  close(ready[1]);
  char byte = 0;
  REQUIRE(read(ready[0], &byte, 1) == 1);
  close(ready[0]);
  const double tree = proc::TreeCpuSeconds(child);
  const double mine = proc::TreeCpuSeconds(getpid());
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  CHECK(tree >= 0.55);  // 0.6 s, less a tick of rounding each
  CHECK(tree < 5.0);
  CHECK(mine >= tree);  // this process's tree contains the child's
  // Reaped, the child's time moves into this process's children's times.
  CHECK(proc::TreeCpuSeconds(getpid()) >= tree);
  CHECK(proc::TreeCpuSeconds(child) == 0.0);  // gone
}
