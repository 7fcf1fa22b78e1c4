// zerofarm selfplay: single-process self-play, K games batched into one
// evaluator, through the same leaf API as the farm. Optionally writes one shard.
#include <filesystem>
#include <iostream>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/log.h"
#include "zerofarm/eval/inprocess_selfplay.h"
#include "zerofarm/io/shard.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::cli {

int SelfplayCommand(int argc, char** argv) {
  cxxopts::Options options("zerofarm selfplay", "Single-process self-play with batched evaluation.");
  AddTableOptions(options, proc::kSelfplay);
  // selfplay's own options (command_options.cpp): --games here is a count to
  // play, where run's --games is a limit with 0 = none, so it is not the table's.
  AddCommandOptions(options, proc::kSelfplay);
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  proc::FarmConfig c = ReadTableOptions(r, proc::kSelfplay);
  const SelfplayConfig own = ReadCommandOptions(r, proc::kSelfplay).selfplay;  // each in its range
  c.out = own.out.empty() ? "." : own.out;
  c.gpus = 0;
  c.Validate();
  eval::SelfPlayOptions sp;
  sp.total_games = own.games;
  sp.concurrent_games = own.concurrent;
  sp.max_batch = c.max_batch;
  sp.seed = c.seed;
  if (sp.max_batch < c.search.leaves_per_round)
    throw ConfigError("--max-batch must be >= --leaves-per-round");

  const auto game = game::MakeGame(c.game);
  auto evaluator = proc::MakeEvaluatorFor(*game, c);
  std::unique_ptr<io::ShardWriter> writer;
  if (!own.out.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(c.out, ec);
    if (ec) throw Error("cannot create " + c.out + ": " + ec.message());
    io::ShardMeta meta = io::ShardMetaForGame(*game);
    meta.search = c.search.Describe();
    meta.config = c.ToText();
    meta.run_id = "selfplay";
    writer = std::make_unique<io::ShardWriter>(c.out, "selfplay", meta);
  }
  int wins[3] = {0, 0, 0};
  int64_t full = 0, resigned = 0, checks = 0, false_resigns = 0;
  const auto stats = eval::RunInProcessSelfPlay(*game, *evaluator, c.search, sp, [&](mcts::GameRecord&& g) {
    wins[g.winner + 1] += 1;
    for (uint8_t f : g.full_search) full += f;
    resigned += g.resigned >= 0;
    checks += g.would_resign >= 0;
    false_resigns += g.FalseResignation();
    if (writer) writer->Add(g);
  });
  std::string shard;
  if (writer) shard = writer->Flush(io::NextShardIndex(c.out, "selfplay"), {});
  std::printf(
      "zerofarm selfplay: %lld games (%d first-player wins, %d second-player wins, %d draws), %lld positions "
      "in "
      "%.1f s: %.1f positions/s, %.0f leaf evals/s, mean batch %.1f%s%s\n",
      static_cast<long long>(stats.games), wins[1], wins[2], wins[0], static_cast<long long>(stats.positions),
      stats.seconds, stats.positions / stats.seconds, stats.leaves / stats.seconds, stats.MeanBatch(),
      shard.empty() ? "" : "; wrote ", shard.c_str());
  std::printf(
      "zerofarm selfplay: %.2f leaf evals per position, %lld full searches, %lld games resigned, %lld false "
      "resignations of %lld checked\n",
      stats.positions ? static_cast<double>(stats.leaves) / stats.positions : 0.0,
      static_cast<long long>(full), static_cast<long long>(resigned), static_cast<long long>(false_resigns),
      static_cast<long long>(checks));
  return 0;
}

}  // namespace zerofarm::cli
