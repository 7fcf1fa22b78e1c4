// Fuzz target: the GTP command stream of `zerofarm gtp` (GtpEngine::Handle,
// one line at a time, as the command reads stdin), on 7x7 Go with a random
// network and a 4-simulation search. Any command line, however malformed,
// gets an answer ("=..." or "?...", ending in a blank line) or, for an empty
// or comment line, nothing: no exception may leave Handle (it would end the
// engine under a GUI's feet), and no sanitizer may fire.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "fuzz_input.h"
#include "zerofarm/eval/evaluator.h"
#include "zerofarm/eval/weights.h"
#include "zerofarm/game/go.h"
#include "zerofarm/learn/gtp.h"

namespace {
bool Answer(const std::string& r) {
  if (r.empty()) return true;
  return (r[0] == '=' || r[0] == '?') && r.size() >= 3 && r.compare(r.size() - 2, 2, "\n\n") == 0;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace zf = zerofarm;
  if (size > 4096) return -1;  // a few hundred commands: longer streams only repeat them
  static const zf::game::GoGame game(7, 4.5);
  static const std::unique_ptr<zf::eval::Evaluator> net =
      zf::eval::MakeRandomEvaluator(zf::eval::GameNetConfig(game, 1, 4, 8), 1);
  zf::mcts::SearchConfig search;
  search.simulations = 4;
  zf::learn::GtpEngine engine(*net, 7, 4.5, search, 1);
  std::istringstream in(zf::fuzz::Text(data, size));
  bool quit = false;
  for (std::string line; !quit && std::getline(in, line);)
    if (!Answer(engine.Handle(line, &quit))) std::abort();
  return 0;
}
