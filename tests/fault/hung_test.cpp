// Hung children (issue #21, point 4): a worker, evaluator or writer that stops
// beating (SIGSTOP) is killed and restarted like a dead one, counted in the
// summary and metrics.prom; a writer that dies or hangs during the final
// drain is restarted and drains (point 5). Real processes, real shm, real
// HDF5. Only this (parent) process asserts; every check is on facts (counts,
// files), not on timing, with generous timeouts for a loaded machine.
#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <sstream>
#include <thread>

#include "farm_check.h"
#include "test_paths.h"
#include "zerofarm/core/exit_codes.h"

using namespace zerofarm;
using namespace zerofarm::testing;

namespace {

// Occurrences of `text` in `s`.
int Count(const std::string& s, const std::string& text) {
  int n = 0;
  for (size_t at = s.find(text); at != std::string::npos; at = s.find(text, at + 1)) ++n;
  return n;
}

// Seconds of the day of each log line containing `text` ("L HH:MM:SS.mmm [...").
std::vector<double> Stamps(const std::string& log, const std::string& text) {
  std::vector<double> out;
  std::istringstream is(log);
  for (std::string line; std::getline(is, line);)
    if (line.size() > 14 && line.find(text) != std::string::npos)
      out.push_back(std::stoi(line.substr(2, 2)) * 3600.0 + std::stoi(line.substr(5, 2)) * 60.0 +
                    std::stod(line.substr(8, 6)));
  return out;
}

// Summary and shards agree: every finished game written once, every shard valid.
void CheckNothingLost(const std::string& out, const std::string& summary) {
  const long long finished = NumberBefore(summary, " games finished");
  const long long written = NumberBefore(summary, " written in ");
  CHECK(finished > 0);
  CHECK(written == finished);  // no finished game lost
  const ShardCheck check = CheckShards(HostDir(out));
  CHECK(check.duplicate_ids == 0);
  CHECK(static_cast<long long>(check.games) == written);
  CHECK(FilesWithSuffix(out, ".tmp").empty());
}

// A farm's end after SIGINT: its exit code, summary (stdout) and stderr.
struct Ended {
  int code;
  std::string summary, err;
  std::string ErrTail() const { return err.substr(err.size() > 6000 ? err.size() - 6000 : 0); }
};
Ended StopAndWait(Spawned& farm) {
  farm.Signal(SIGINT);
  const int code = farm.Wait(180);
  return {code, farm.Stdout(), farm.Stderr()};
}

// A farm writing to DIR/run with `args`, once its evaluators serve and it has played 2 s.
std::unique_ptr<Spawned> ServingFarm(const ScratchDir& dir, const std::vector<std::string>& args) {
  auto farm = std::make_unique<Spawned>(FarmArgs(dir / "run", args), dir / "farm");
  REQUIRE(WaitFor([&]() { return farm->Stderr().find("serving workers") != std::string::npos; }, 120));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  return farm;
}

}  // namespace

TEST_CASE(
    "a SIGSTOPped worker and evaluator and writer are each killed as hung and restarted with no finished "
    "game lost",
    "[multiprocess][fault][hung][slow]") {
  ScratchDir dir("zf-hung");
  const std::string out = dir / "run";
  Spawned farm(FarmArgs(out, {"--hang-timeout", "6", "--shard-positions", "300"}), dir / "farm");
  REQUIRE(WaitFor([&]() { return farm.Stderr().find("serving workers") != std::string::npos; }, 120));
  for (const std::string role : {"zf-worker-1", "zf-eval-0", "zf-writer"}) {
    pid_t victim = -1;
    REQUIRE(WaitFor([&]() { return (victim = ChildNamed(farm.pid(), role)) > 0; }, 60));
    std::this_thread::sleep_for(std::chrono::seconds(2));  // let it work a little
    INFO(role << " pid " << victim);
    REQUIRE(kill(victim, SIGSTOP) == 0);
    // The supervisor notices the stale heartbeat, kills it (SIGKILL works on
    // a stopped process) and starts a new one.
    CHECK(WaitFor([&]() { return !ProcessAlive(victim); }, 90));
    pid_t successor = -1;
    CHECK(
        WaitFor([&]() { return (successor = ChildNamed(farm.pid(), role)) > 0 && successor != victim; }, 60));
    const std::string err = farm.Stderr();
    CHECK_THAT(err, Catch::Contains("(pid " + std::to_string(victim) + ") is hung"));
  }
  std::this_thread::sleep_for(std::chrono::seconds(3));  // the farm goes on
  const Ended end = StopAndWait(farm);
  const std::string &err = end.err, &summary = end.summary;
  INFO(summary);
  INFO(end.ErrTail());
  REQUIRE(end.code == 0);
  // Each victim was killed and restarted (above). A stall of the machine may
  // make another child look hung too: at least the three, not exactly.
  CHECK(Count(err, ") is hung") >= 3);
  CHECK(NumberAfter(summary, "restarts ") >= 3);
  CHECK_THAT(summary, Catch::Contains(" hung children killed and restarted"));
  CHECK_THAT(summary, Catch::Contains("1 workers, 1 evaluators, 1 writers"));
  const std::string final_prom = Slurp(HostDir(out) + "/metrics.prom");
  for (const char* role : {"worker", "evaluator", "writer"})
    CHECK(NumberAfter(final_prom, std::string("zerofarm_hung_kills_total{role=\"") + role + "\"} ") >= 1);
  CheckNothingLost(out, summary);
  CHECK(SegmentsOf(farm.pid()).empty());
}

TEST_CASE("a farm frozen whole for longer than --hang-timeout wakes without killing its children",
          "[multiprocess][fault][hung]") {
  ScratchDir dir("zf-frozen");
  const auto owned = ServingFarm(dir, {"--hang-timeout", "4", "--shard-positions", "300"});
  Spawned& farm = *owned;
  // The machine freezes (a VM paused or starved by its host): every process of
  // the farm stops at once, for 2.5 x --hang-timeout. The supervisor wakes
  // first, its children a second later: the order in which an unfrozen
  // scheduler may run them, and the one that tempts it to call them hung.
  REQUIRE(kill(-farm.pid(), SIGSTOP) == 0);
  std::this_thread::sleep_for(std::chrono::seconds(10));
  REQUIRE(kill(farm.pid(), SIGCONT) == 0);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  REQUIRE(kill(-farm.pid(), SIGCONT) == 0);
  std::this_thread::sleep_for(std::chrono::seconds(4));  // a whole --hang-timeout of watching after it
  const Ended end = StopAndWait(farm);
  const std::string &err = end.err, &summary = end.summary;
  INFO(summary);
  INFO(end.ErrTail());
  REQUIRE(end.code == 0);
  // The freeze itself is logged (the last such line: a slow start may log one of its own).
  const size_t logged = err.rfind("the supervisor itself did not run for ");
  REQUIRE(logged != std::string::npos);
  CHECK(std::stod(err.substr(logged + std::string("the supervisor itself did not run for ").size())) >= 9.0);
  CHECK(Count(err, ") is hung") == 0);
  CHECK(NumberAfter(summary, "restarts ") == 0);
  CheckNothingLost(dir / "run", summary);
}

TEST_CASE("a writer that dies or hangs during the final drain is restarted and drains every finished game",
          "[multiprocess][fault][hung]") {
  for (const bool hang : {false, true}) {
    ScratchDir dir("zf-drain");
    const std::string out = dir / "run";
    // A big shard size: every game waits for the final drain.
    Spawned farm(FarmArgs(out, {"--hang-timeout", "4", "--shard-positions", "1000000"}), dir / "farm");
    REQUIRE(WaitFor([&]() { return farm.Stderr().find("serving workers") != std::string::npos; }, 120));
    std::this_thread::sleep_for(std::chrono::seconds(4));  // some finished games in the queues
    const pid_t writer = ChildNamed(farm.pid(), "zf-writer");
    REQUIRE(writer > 0);
    REQUIRE(kill(writer, SIGSTOP) == 0);  // it cannot drain
    farm.Signal(SIGINT);                  // the supervisor stops the workers, then asks for the drain
    REQUIRE(WaitFor([&]() { return farm.Stderr().find("stopping: ") != std::string::npos; }, 60));
    std::this_thread::sleep_for(std::chrono::seconds(1));
    if (!hang) kill(writer, SIGKILL);  // dies during the drain; else hangs until killed as hung
    const int code = farm.Wait(180);
    const std::string err = farm.Stderr(), summary = farm.Stdout();
    INFO((hang ? "hung" : "killed") << "\n" << summary);
    INFO(err.substr(err.size() > 6000 ? err.size() - 6000 : 0));
    REQUIRE(code == 0);
    CHECK_THAT(err, Catch::Contains("died while draining"));
    CHECK_THAT(err, Catch::Contains("to finish the drain"));
    if (hang) CHECK_THAT(err, Catch::Contains("is hung while draining"));
    // Restarted, at least once: under a stalled machine its successor may be
    // killed as hung too (4 s is a short --hang-timeout).
    CHECK(NumberAfter(summary, "restarts ") >= 1);
    CheckNothingLost(out, summary);
  }
}

TEST_CASE("at stop the children that do not stop are waited for all at once and not one by one",
          "[multiprocess][fault][hung]") {
  ScratchDir dir("zf-parallel-stop");
  const auto owned = ServingFarm(dir, {"--workers", "3", "--hang-timeout", "0"});
  Spawned& farm = *owned;
  std::vector<pid_t> stopped;
  for (const std::string role : {"zf-worker-0", "zf-worker-1", "zf-worker-2"}) {
    const pid_t pid = ChildNamed(farm.pid(), role);
    REQUIRE(pid > 0);
    REQUIRE(kill(pid, SIGSTOP) == 0);
    stopped.push_back(pid);
  }
  farm.Signal(SIGINT);
  const int code = farm.Wait(180);
  const std::string err = farm.Stderr();
  INFO(err.substr(err.size() > 4000 ? err.size() - 4000 : 0));
  CHECK(code == 0);
  CHECK(Count(err, "did not stop in 10 s; killing it") == 3);
  // All at once: the three kills come after one 10 s wait, in the same
  // instant of the supervisor's log; one by one, each would wait its own 10 s
  // (20 s and more between the first and the last). Read from the log's own
  // stamps, not from this test's clock (hang_bound.h): only a supervisor
  // stalled for 10 s between two lines crosses the bound.
  const std::vector<double> kills = Stamps(err, "did not stop in 10 s; killing it");
  REQUIRE(kills.size() == 3);
  CHECK(*std::max_element(kills.begin(), kills.end()) - *std::min_element(kills.begin(), kills.end()) < 10.0);
  CheckNothingLost(dir / "run", farm.Stdout());
}
