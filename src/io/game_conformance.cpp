// The shard round trip of the game conformance suite (io/game_conformance.h).
#include "zerofarm/io/game_conformance.h"

#include <algorithm>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "fs_internal.h"
#include "zerofarm/game/symmetry.h"
#include "zerofarm/io/shard.h"
#include "zerofarm/mcts/game_record.h"

namespace zerofarm::io {
namespace {

// A record of one playout as a worker would write it: every ply recorded,
// a uniform policy over the legal moves (with `graded`: over every action,
// each its own weight a + 1, so that a permuted policy differs), z from the
// mover's view.
mcts::GameRecord RecordPlayout(const game::Game& game, const std::vector<int>& moves, uint64_t id,
                               bool graded = false) {
  mcts::GameRecord r;
  r.game_id = id;
  r.seed = id * 7919;
  std::unique_ptr<game::State> state = game.NewInitialState();
  std::vector<int> legal;
  std::vector<uint8_t> features(game.Shape().FeatureBytes());
  std::vector<int> movers;
  for (size_t i = 0; i < moves.size(); ++i) {
    state->EncodeFeatures(features.data());
    r.features.insert(r.features.end(), features.begin(), features.end());
    state->LegalActions(&legal);
    std::vector<float> policy(game.ActionCount(), 0.0f);
    for (int a : legal) policy[a] = 1.0f / static_cast<float>(legal.size());
    const double n = game.ActionCount();
    for (int a = 0; graded && a < game.ActionCount(); ++a)
      policy[a] = static_cast<float>((a + 1) / (n * (n + 1) / 2));
    r.policy.insert(r.policy.end(), policy.begin(), policy.end());
    r.root_value.push_back(0.0f);
    r.ply.push_back(static_cast<int16_t>(i));
    r.model_version.push_back(0);
    r.full_search.push_back(1);
    movers.push_back(state->CurrentPlayer());
    r.moves.push_back(static_cast<int16_t>(moves[i]));
    state->Apply(moves[i]);
  }
  r.winner = state->IsTerminal() ? state->Winner() : -1;
  for (int mover : movers) r.z.push_back(r.winner < 0 ? 0.0f : (r.winner == mover ? 1.0f : -1.0f));
  return r;
}

bool SameRecord(const mcts::GameRecord& a, const mcts::GameRecord& b) {
  return a.game_id == b.game_id && a.seed == b.seed && a.winner == b.winner && a.moves == b.moves &&
         a.features == b.features && a.policy == b.policy && a.z == b.z && a.ply == b.ply;
}

// The moves read back replay to the recorded winner and features.
void CheckReplay(const game::Game& game, const mcts::GameRecord& r, game::ConformanceFailures* failures) {
  const std::string id = "game " + std::to_string(r.game_id);
  std::unique_ptr<game::State> state = game.NewInitialState();
  std::vector<uint8_t> features(game.Shape().FeatureBytes());
  for (size_t i = 0; i < r.moves.size(); ++i) {
    state->EncodeFeatures(features.data());
    if (!std::equal(features.begin(), features.end(), r.features.begin() + i * features.size())) {
      failures->push_back({"shard-round-trip", id + ": the features at ply " + std::to_string(i) +
                                                   " differ from those of the replayed moves"});
      return;
    }
    if (state->IsTerminal() || !state->IsLegal(r.moves[i])) {
      failures->push_back(
          {"shard-round-trip", id + ": move " + std::to_string(i + 1) + " read back is illegal"});
      return;
    }
    state->Apply(r.moves[i]);
  }
  if (!state->IsTerminal() || state->Winner() != r.winner)
    failures->push_back(
        {"shard-round-trip", id + ": the moves read back do not end with the recorded winner"});
}

void CheckMeta(const game::Game& game, const ShardMeta& meta, game::ConformanceFailures* failures) {
  const game::BoardShape shape = game.Shape();
  if (meta.game != game.Name() || meta.planes != shape.planes || meta.height != shape.height ||
      meta.width != shape.width || meta.actions != game.ActionCount())
    failures->push_back({"shard-round-trip", "the shard's meta does not describe the game"});
  if (game.ActionCount() - 1 > std::numeric_limits<int16_t>::max())
    failures->push_back({"shard-round-trip", "ActionCount() does not fit the shard's int16 moves"});
  try {
    const std::unique_ptr<game::Game> rebuilt = game::MakeGame(meta.game);
    const game::BoardShape s = rebuilt->Shape();
    if (s.planes != shape.planes || s.height != shape.height || s.width != shape.width ||
        rebuilt->ActionCount() != game.ActionCount())
      failures->push_back({"shard-round-trip", "MakeGame(\"" + meta.game + "\") has another shape"});
  } catch (const std::exception& e) {
    failures->push_back(
        {"shard-round-trip", "readers cannot rebuild the game from the shard: " + std::string(e.what())});
  }
}

}  // namespace

game::ConformanceFailures CheckShardRoundTrip(const game::Game& game, const std::string& dir,
                                              const game::ConformanceOptions& options) {
  game::ConformanceFailures failures;
  try {
    ShardWriter writer(dir, "conformance", ShardMetaForGame(game));
    std::vector<mcts::GameRecord> written;
    uint64_t id = 1;
    for (const std::vector<int>& playout : game::RandomPlayouts(game, options)) {
      written.push_back(RecordPlayout(game, playout, id++));
      writer.Add(written.back());
    }
    ShardReader reader(writer.Flush(0, {}));
    CheckMeta(game, reader.meta(), &failures);
    const std::vector<mcts::GameRecord> back = reader.ReadGameRecords();
    if (back.size() != written.size()) {
      failures.push_back({"shard-round-trip", "the shard reads back " + std::to_string(back.size()) + " of " +
                                                  std::to_string(written.size()) + " games"});
      return failures;
    }
    for (size_t i = 0; i < back.size(); ++i) {
      if (!SameRecord(written[i], back[i]))
        failures.push_back({"shard-round-trip", "game " + std::to_string(i + 1) + " reads back differently"});
      CheckReplay(game, back[i], &failures);
    }
  } catch (const std::exception& e) {
    failures.push_back({"shard-round-trip", std::string("threw: ") + e.what()});
  }
  if (static_cast<int>(failures.size()) > options.max_failures) failures.resize(options.max_failures);
  return failures;
}

void WriteSymmetrySamples(const game::Game& game, const std::string& dir,
                          const game::ConformanceOptions& options) {
  ShardWriter writer(dir, "symmetry", ShardMetaForGame(game));
  std::vector<uint8_t> features;
  std::vector<float> policy;
  uint64_t id = 1;
  for (const std::vector<int>& playout : game::RandomPlayouts(game, options)) {
    const mcts::GameRecord r = RecordPlayout(game, playout, id++, /*graded=*/true);
    writer.Add(r);
    features.insert(features.end(), r.features.begin(), r.features.end());
    policy.insert(policy.end(), r.policy.begin(), r.policy.end());
  }
  writer.Flush(0, {});
  const game::BoardShape shape = game.Shape();
  const size_t fb = static_cast<size_t>(shape.FeatureBytes()), na = static_cast<size_t>(game.ActionCount());
  const size_t n = features.size() / fb, count = static_cast<size_t>(game.SymmetryCount());
  std::vector<uint8_t> out_features(count * n * fb);
  std::vector<float> out_policy(count * n * na);
  for (size_t s = 0; s < count; ++s)
    for (size_t i = 0; i < n; ++i) {
      game::TransformFeatures(game, static_cast<int>(s), &features[i * fb], &out_features[(s * n + i) * fb]);
      game::TransformPolicy(game, static_cast<int>(s), &policy[i * na], &out_policy[(s * n + i) * na]);
    }
  H5File file = CreateMemoryFile(dir + "/symmetry-samples.h5");
  WriteScalarAttr<int32_t>(file.id(), "symmetries", static_cast<int32_t>(count));
  WriteStringAttr(file.id(), "game", game.Name());
  WriteDataset(file.id(), "features", out_features.data(),
               {count, n, static_cast<uint64_t>(shape.planes), static_cast<uint64_t>(shape.height),
                static_cast<uint64_t>(shape.width)});
  WriteDataset(file.id(), "policy", out_policy.data(), {count, n, na});
  const std::vector<uint8_t> image = FileImage(file.id());
  internal::WriteFileAtomically(dir + "/symmetry-samples.h5", image.data(), image.size());
}

}  // namespace zerofarm::io
