#pragma once
// Helpers of the multi-process farm tests: the arguments of a small farm, and
// checks of what a run left behind (shards, segments, temporary files).
// Only the test's own (parent) process calls them.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "spawn.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/game/game.h"
#include "zerofarm/io/shard.h"
#include "zerofarm/proc/farm_config.h"

namespace zerofarm::testing {

// The --host-id of the test farms: their shards go to OUT/shards/test.
inline const std::string kTestHost = "test";
inline std::string HostDirOf(const std::string& out, const std::string& host) {
  return out + "/shards/" + host;
}
inline std::string HostDir(const std::string& out) { return HostDirOf(out, kTestHost); }

inline std::vector<std::string> FarmArgs(const std::string& out, std::vector<std::string> extra) {
  std::vector<std::string> args = {ZF_BINARY,
                                   "run",
                                   "--game",
                                   "connect4",
                                   "--workers",
                                   "2",
                                   "--gpus",
                                   "0",
                                   "--cpu-evaluators",
                                   "1",  // one evaluator, as before issue #23 (CI time)
                                   "--games-per-worker",
                                   "8",
                                   "--simulations",
                                   "12",
                                   "--out",
                                   out,
                                   "--no-status",
                                   "--seed",
                                   "11",
                                   "--host-id",
                                   kTestHost};
  // A small random net, unless a model file brings its own shape (the farm
  // refuses --blocks beside --weights).
  if (std::find(extra.begin(), extra.end(), "--weights") == extra.end())
    args.insert(args.end(), {"--blocks", "1", "--filters", "8"});
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// Names of /dev/shm segments created by process `pid`.
inline std::vector<std::string> SegmentsOf(pid_t pid) {
  std::vector<std::string> out;
  const std::string prefix = "zf-" + std::to_string(pid) + "-";
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm"))
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path().string());
  return out;
}

inline std::vector<std::string> FilesWithSuffix(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string p = e.path().string();
    if (p.size() >= suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Process names (comm) of the children of `parent` (ChildPids is below).
inline std::vector<pid_t> ChildPids(pid_t parent);
inline std::multiset<std::string> ChildNames(pid_t parent) {
  std::multiset<std::string> names;
  for (pid_t pid : ChildPids(parent)) {
    std::string comm = Slurp("/proc/" + std::to_string(pid) + "/comm");
    if (!comm.empty() && comm.back() == '\n') comm.pop_back();
    if (!comm.empty()) names.insert(comm);
  }
  return names;
}

struct ShardCheck {
  std::set<uint64_t> game_ids;
  uint64_t games = 0, positions = 0, duplicate_ids = 0;
  uint64_t opening_moves = 0;  // moves without rows (random openings), all games
};

// Reads every shard and checks every position's targets against a replay.
// A game may open with up to `max_opening` moves that have no rows
// (--random-opening-plies, the farm's default): they replay legally and do not end it.
inline ShardCheck CheckShards(const std::string& dir,
                              int max_opening = proc::SelfPlaySearch().random_opening_plies) {
  ShardCheck out;
  auto g = game::MakeGame("connect4");
  const size_t fb = g->Shape().FeatureBytes();
  std::vector<uint8_t> features(fb);
  std::vector<int> legal;
  for (const auto& path : io::ListShards(dir)) {
    io::ShardReader shard(path);
    REQUIRE(shard.meta().game == "connect4");
    const auto games = shard.ReadGames();
    const auto rows = shard.ReadAllPositions();
    out.games += games.size();
    out.positions += rows.count;
    for (const auto& game : games) {
      if (!out.game_ids.insert(game.game_id).second) ++out.duplicate_ids;
      auto state = g->NewInitialState();
      const int opening = game.length - game.position_count;
      REQUIRE(opening >= 0);
      REQUIRE(opening <= max_opening);
      for (int i = 0; i < opening; ++i) {
        REQUIRE(state->IsLegal(game.moves[i]));
        state->Apply(game.moves[i]);
        REQUIRE_FALSE(state->IsTerminal());
      }
      out.opening_moves += static_cast<uint64_t>(opening);
      for (int i = opening; i < game.length; ++i) {
        const size_t row = game.first_position + (i - opening);
        REQUIRE(rows.game_id[row] == game.game_id);
        REQUIRE(rows.ply[row] == i);
        state->EncodeFeatures(features.data());
        REQUIRE(std::equal(features.begin(), features.end(), rows.features.begin() + row * fb));
        state->LegalActions(&legal);
        float sum = 0;
        for (int a = 0; a < g->ActionCount(); ++a) {
          const float p = rows.policy[row * g->ActionCount() + a];
          if (std::find(legal.begin(), legal.end(), a) == legal.end()) REQUIRE(p == 0.0f);
          sum += p;
        }
        REQUIRE(sum == Approx(1.0f).epsilon(1e-4));
        const int mover = state->CurrentPlayer();
        const float z = game.result < 0 ? 0.0f : (game.result == mover ? 1.0f : -1.0f);
        REQUIRE(rows.z[row] == z);
        REQUIRE(state->IsLegal(game.moves[i]));
        state->Apply(game.moves[i]);
      }
      REQUIRE(state->IsTerminal());
      REQUIRE(state->Winner() == game.result);
    }
  }
  return out;
}

}  // namespace zerofarm::testing

namespace zerofarm::testing {

// Pids of the children of `parent` (from /proc/*/stat).
inline std::vector<pid_t> ChildPids(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = e.path().filename().string();
    if (!std::all_of(pid.begin(), pid.end(), ::isdigit)) continue;
    const std::string stat = Slurp(e.path().string() + "/stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state;
    pid_t ppid;
    rest >> state >> ppid;
    if (ppid == parent && state != 'Z') out.push_back(static_cast<pid_t>(std::stoi(pid)));
  }
  return out;
}

inline bool ProcessAlive(pid_t pid) {
  const std::string stat = Slurp("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return false;
  const auto close = stat.rfind(')');
  return close != std::string::npos && stat[close + 2] != 'Z';
}

// Newlines in `text`: the lines of a log or of stderr.
inline int CountNewlines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// Waits up to `seconds` for `p` and checks the documented answer to bad input:
// exit code 2 and exactly one line on stderr, matching `says`. Returns stderr.
template <typename Matcher>
std::string CheckUsageError(Spawned& p, double seconds, const Matcher& says,
                            const std::string& context = "") {
  const int code = p.Wait(seconds);
  const std::string err = p.Stderr();
  INFO(context << (context.empty() ? "" : ": ") << err);
  CHECK(code == kExitUsage);
  CHECK(CountNewlines(err) == 1);
  CHECK_THAT(err, says);
  return err;
}

// Polls `done` every 50 ms for up to `seconds`; true once it holds.
inline bool WaitFor(const std::function<bool()>& done, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Waits up to `seconds` for `text` in the stderr of `p`.
inline bool WaitForLog(const Spawned& p, const std::string& text, double seconds) {
  return WaitFor([&]() { return p.Stderr().find(text) != std::string::npos; }, seconds);
}

// The pid of the farm's child named `comm` ("zf-writer", "zf-eval-0", "zf-worker-1"), or -1.
inline pid_t ChildNamed(pid_t farm, const std::string& comm) {
  for (pid_t pid : ChildPids(farm)) {
    std::string c = Slurp("/proc/" + std::to_string(pid) + "/comm");
    if (!c.empty() && c.back() == '\n') c.pop_back();
    if (c == comm) return pid;
  }
  return -1;
}

// Waits up to `seconds` for process `pid` to be stopped (state T in /proc):
// SIGSTOP lands asynchronously.
inline bool WaitUntilStopped(pid_t pid, double seconds) {
  return WaitFor(
      [&]() {
        const std::string stat = Slurp("/proc/" + std::to_string(pid) + "/stat");
        const auto close = stat.rfind(')');
        return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'T';
      },
      seconds);
}

// A number that follows `label` in `text` ("50 games finished" -> 50 for
// label " games finished" read backwards): the integer just before it.
inline long long NumberBefore(const std::string& text, const std::string& label) {
  const auto at = text.find(label);
  if (at == std::string::npos) return -1;
  size_t begin = at;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(text[begin - 1]))) --begin;
  return begin == at ? -1 : std::stoll(text.substr(begin, at - begin));
}

// The number just after `label` ("restarts 31" -> 31).
inline long long NumberAfter(const std::string& text, const std::string& label) {
  const auto at = text.find(label);
  if (at == std::string::npos) return -1;
  size_t end = at + label.size();
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  return end == at + label.size() ? -1 : std::stoll(text.substr(at + label.size(), end - at - label.size()));
}

// Points the file's first global heap reference (a string attribute's) at
// object 0x7fffff00 of a collection that holds a few. libhdf5 1.10.8 indexes
// its object table with it unchecked: a SEGV in H5HG_read, the crash the fuzz
// runs found first (docs/results/fuzz-2026-12-04/). With an HDF5 that checks
// it, commands say that HDF5's error instead of "crashed libhdf5", and the
// tests that expect the crash fail: they test the checker no more.
inline void BreakGlobalHeapReference(const std::string& path) {
  std::string bytes = Slurp(path);
  const size_t gcol = bytes.find("GCOL");
  REQUIRE(gcol != std::string::npos);
  std::string address(8, '\0');  // the collection's file address, little-endian
  for (int i = 0; i < 8; ++i) address[static_cast<size_t>(i)] = static_cast<char>((gcol >> (8 * i)) & 0xff);
  const size_t ref = bytes.find(address);  // {address, object index} in the attribute's data
  REQUIRE(ref != std::string::npos);
  REQUIRE(ref + 12 <= bytes.size());
  for (int i = 0; i < 4; ++i)
    bytes[ref + 8 + static_cast<size_t>(i)] = static_cast<char>((0x7fffff00u >> (8 * i)) & 0xff);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace zerofarm::testing
