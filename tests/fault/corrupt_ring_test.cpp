// A ring whose counters are impossible (a worker gone wrong, or a hostile
// process with access to the segment) is refused by the evaluator at run time:
// it logs it once, stops serving that ring and goes on serving the others,
// and marks the ring refused, so that its worker stops the run (exit 1) rather
// than wait, still beating, for answers that never come. The test plays the hostile process: it maps the
// farm's own segment, stops worker 0 and writes a head more than a ring's worth ahead of done.
#include <signal.h>

#include <catch2/catch.hpp>
#include <thread>

#include "farm_check.h"
#include "test_paths.h"
#include "zerofarm/shm/layout.h"
#include "zerofarm/shm/segment.h"

using namespace zerofarm;
using namespace zerofarm::testing;

TEST_CASE(
    "the evaluator refuses a ring with impossible counters at run time, serves the others, and its worker "
    "stops the run",
    "[fault][ring]") {
  ScratchDir dir("zf-corrupt");
  const std::string out = dir / "run";
  Spawned farm(FarmArgs(out, {}), dir / "farm");
  REQUIRE(WaitForLog(farm, "serving workers", 60));
  const std::vector<std::string> segments = SegmentsOf(farm.pid());
  REQUIRE(segments.size() == 1);
  shm::ShmView view(segments[0].substr(std::string("/dev/shm").size()));
  shm::SegmentMap map(view.data(), view.size());
  shm::LeafRingControl& ring0 = map.Ring(0);
  shm::LeafRingControl& ring1 = map.Ring(1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((ring0.done.load() == 0 || ring1.done.load() == 0) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(ring1.done.load() > 0);  // both workers are being served

  const pid_t worker0 = ChildNamed(farm.pid(), "zf-worker-0");
  REQUIRE(worker0 > 0);
  REQUIRE(kill(worker0, SIGSTOP) == 0);    // the worker must not rewrite head
  REQUIRE(WaitUntilStopped(worker0, 30));  // SIGSTOP lands asynchronously
  // Impossible whatever the evaluator still completes of worker 0's leaves in
  // flight (at most a ring's worth): more than a ring's worth ahead of any done.
  ring0.head.store(ring0.done.load() + 3 * ring0.slots);
  const bool refused =
      WaitForLog(farm, "the ring of worker 0 has impossible counters; no longer serving it", 30);
  INFO(Slurp(dir / "farm.err").substr(0, 6000));
  CHECK(refused);

  // Worker 1's leaves are still evaluated; worker 0's ring is left alone
  // (after the batch that was running when it was refused).
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const uint64_t done0 = ring0.done.load(), done1 = ring1.done.load();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  CHECK(ring1.done.load() > done1);
  CHECK(ring0.done.load() == done0);
  CHECK(ProcessAlive(ChildNamed(farm.pid(), "zf-eval-0")));

  // Let worker 0 go on: it must not wait for answers that never come (it kept
  // beating, so nothing else would ever notice) but stop the run, exit 1.
  REQUIRE(kill(worker0, SIGCONT) == 0);
  const int code = farm.Wait(120);
  INFO(farm.Stdout());
  INFO(Slurp(dir / "farm.err").substr(0, 6000));
  CHECK(code == 1);
  CHECK_THAT(Slurp(dir / "farm.err"), Catch::Contains("the evaluator no longer serves this worker's ring"));
  CHECK_THAT(Slurp(dir / "farm.err"), Catch::Contains("worker-0 failed"));
  const ShardCheck shards = CheckShards(HostDir(out));  // every position replays
  CHECK(shards.duplicate_ids == 0);
}
