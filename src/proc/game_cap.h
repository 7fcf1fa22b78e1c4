#pragma once
// How many games a worker keeps in play at once (issue 82; docs/running.md,
// "Games per worker"). K games search side by side, so the first of them
// ends after about K x (leaves a game takes) / (leaves a second the worker
// gets answered): on a slow evaluator (a 6x64 net on 2 cores answers some
// 3,400 leaves/s) the default K = 256 kept the first finished game minutes
// away, and a short run dropped most of its work at its stop.
//
// So with --games-per-worker at its default the cap is sized from the
// evaluator's measured speed: a worker starts kStartGames games, and every
// second it measures the leaves answered (by its evaluator and the cache) and
// raises the cap to the number of games whose next one still ends within
// kFirstGameSeconds, at most doubling a second, never above K. The cap only
// grows: no game is ever dropped for it. A K given on the command line (any
// other value) is used as given. Used by the worker's one thread.
#include <algorithm>
#include <cstdint>

namespace zerofarm::proc {

class GameCap {
 public:
  static constexpr int kStartGames = 16;
  static constexpr double kFirstGameSeconds = 60;

  // `k`: --games-per-worker; `sized`: whether it was left at its default;
  // `leaves_per_game`: the guess until a game has finished (simulations x
  // half the game's longest length); `simulations`: a move's search.
  GameCap(int k, bool sized, double leaves_per_game, double simulations)
      : k_(k),
        sized_(sized),
        cap_(sized ? std::min(k, kStartGames) : k),
        leaves_per_game_(leaves_per_game),
        simulations_(simulations) {}

  int cap() const { return cap_; }
  // `n` leaves were answered (by the evaluator or the cache).
  void Answered(uint64_t n) { answered_ += n; }
  // A game of `plies` moves finished: games' real length replaces the guess.
  void Finished(int plies) {
    plies_ += static_cast<uint64_t>(plies);
    ++games_;
  }
  // Called often with the time (ns); true when a second's window closed
  // (the cap may have changed).
  bool Update(uint64_t now_ns) {
    if (!sized_ || cap_ >= k_) return false;
    if (window_start_ns_ == 0 || now_ns < window_start_ns_) {
      window_start_ns_ = now_ns;
      answered_ = 0;
      return false;
    }
    const double seconds = static_cast<double>(now_ns - window_start_ns_) * 1e-9;
    if (seconds < 1.0) return false;
    rate_ = static_cast<double>(answered_) / seconds;
    const double fits = rate_ * kFirstGameSeconds / std::max(1.0, LeavesPerGame());
    const int wanted = static_cast<int>(std::min<double>(fits, k_));
    settled_ = wanted <= cap_;  // the evaluator, not the cap, bounds the leaves answered
    cap_ = std::clamp(wanted, cap_, std::min(k_, 2 * cap_));
    window_start_ns_ = now_ns;
    answered_ = 0;
    return true;
  }
  // Whether the last window left the cap where it was, below K: where it stays.
  bool Settled() const { return settled_ && cap_ < k_; }
  double rate() const { return rate_; }  // leaves/s of the last window
  double LeavesPerGame() const {
    return games_ > 0 ? simulations_ * static_cast<double>(plies_) / static_cast<double>(games_)
                      : leaves_per_game_;
  }

 private:
  const int k_;
  const bool sized_;
  int cap_;
  const double leaves_per_game_, simulations_;
  uint64_t answered_ = 0, window_start_ns_ = 0, plies_ = 0, games_ = 0;
  double rate_ = 0;
  bool settled_ = false;
};

}  // namespace zerofarm::proc
