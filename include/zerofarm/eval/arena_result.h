#pragma once
// The score of a match between two players (learn/strength.h's Arena, the
// GTP referee's arena in proc/gtp.h), seen from the first player.
#include <utility>

namespace zerofarm::eval {

struct ArenaResult {
  int games = 0;
  int wins = 0, draws = 0, losses = 0;  // of the first network
  double Score() const { return games ? (wins + 0.5 * draws) / games : 0.0; }
  // The 95 % interval of Score(): Wilson's score interval for a proportion
  // (well-behaved at 0 and 1; treating draws as half a win makes it a
  // little wider than needed, never narrower).
  std::pair<double, double> Interval95() const;
  // The Elo difference Score() implies (+-inf at 1 or 0 are clamped to +-800).
  double Elo() const { return EloOf(Score()); }
  // The Elo difference a score in [0, 1] implies, clamped to +-800.
  static double EloOf(double score);
};

}  // namespace zerofarm::eval
