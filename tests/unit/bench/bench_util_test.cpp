// The arithmetic behind `zerofarm bench`'s farm efficiency (bench_util.h)
// and `zerofarm tune`'s decision (tune.h).
#include "zerofarm/bench/bench_util.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "zerofarm/bench/tune.h"

namespace zerofarm::bench {
namespace {

TEST_CASE("BoundAt interpolates the bound in log2 of the batch and clamps at the ends", "[cli][bench]") {
  const std::map<int, double> bound = {{1, 1000}, {2, 1800}, {8, 5000}, {64, 12000}};
  SECTION("a measured size gives its own rate") {
    CHECK(BoundAt(bound, 1) == 1000);
    CHECK(BoundAt(bound, 2) == 1800);
    CHECK(BoundAt(bound, 8) == 5000);
    CHECK(BoundAt(bound, 64) == 12000);
  }
  SECTION("between two sizes: linear in log2(batch), not in batch") {
    CHECK(BoundAt(bound, 4) == Approx(3400));                    // halfway from 2 to 8 in log2
    CHECK(BoundAt(bound, std::sqrt(8.0 * 64)) == Approx(8500));  // 22.6: halfway from 8 to 64
    CHECK(BoundAt(bound, 1.5) == Approx(1000 + 800 * std::log2(1.5)));
    CHECK(BoundAt(bound, 32) == Approx(5000 + 7000 * 2.0 / 3.0));
  }
  SECTION("outside the measured sizes: the nearest end") {
    CHECK(BoundAt(bound, 0.5) == 1000);
    CHECK(BoundAt(bound, 1000) == 12000);
  }
  SECTION("nothing measured") { CHECK(std::isnan(BoundAt({}, 16))); }
  SECTION("the peak is the best rate of any size") {
    CHECK(PeakBound(bound) == 12000);
    CHECK(PeakBound({{1, 5}, {4, 9}, {16, 7}}) == 9);
    CHECK(PeakBound({}) == 0);
  }
}

}  // namespace
}  // namespace zerofarm::bench

namespace zerofarm::bench {
namespace {

// Issue 24 point 8: JSON lines go through nlohmann-json; 64-bit game ids and
// counts above 2^53 (where a double loses the last digits) round-trip exactly.
// Issue 72: tune recommends a setting only when its rounds beat the runner-up's
// every time; crafted positions/s, no farm.
TEST_CASE("tune's verdict names a clear winner only when the spread does not cover the difference",
          "[cli][bench][tune]") {
  SECTION("every round of the best beat every round of the runner-up") {
    const SweepVerdict v = JudgeSweep({{90, 92, 91}, {100, 102, 101}, {80, 99, 85}});
    CHECK(v.best == 1);
    CHECK(v.runner_up == 0);
    CHECK(v.clear);
    CHECK(v.best_stats.median == 101);
    CHECK(v.best_stats.min == 100);
    CHECK(v.runner_up_stats.max == 92);
  }
  SECTION("a higher median whose spread overlaps the runner-up's: no clear winner") {
    const SweepVerdict v = JudgeSweep({{100, 110, 105}, {95, 108, 99}});
    CHECK(v.best == 0);
    CHECK(v.runner_up == 1);
    CHECK_FALSE(v.clear);
    CHECK(v.best_stats.median == 105);
    CHECK(v.runner_up_stats.median == 99);
    CHECK(v.runner_up_stats.max == 108);
  }
  SECTION("touching ranges are not clear either") { CHECK_FALSE(JudgeSweep({{100, 101}, {99, 100}}).clear); }
  SECTION("equal medians: no clear winner, the earlier one first") {
    const SweepVerdict v = JudgeSweep({{50, 50}, {50, 50}});
    CHECK(v.best == 0);
    CHECK(v.runner_up == 1);
    CHECK_FALSE(v.clear);
  }
  SECTION("a candidate whose runs failed is left out") {
    const SweepVerdict v = JudgeSweep({{}, {10, 11}, {20, 21}});
    CHECK(v.best == 2);
    CHECK(v.runner_up == 1);
    CHECK(v.clear);
  }
  SECTION("one candidate is its own winner; none gives no best") {
    const SweepVerdict one = JudgeSweep({{}, {7}});
    CHECK(one.best == 1);
    CHECK(one.runner_up == -1);
    CHECK(one.clear);
    CHECK(JudgeSweep({{}, {}}).best == -1);
    CHECK(JudgeSweep({}).best == -1);
  }
}

TEST_CASE("JsonLine keeps 64-bit ids and counts above 2^53 exact", "[cli][json]") {
  const uint64_t game_id = (1ull << 53) + 1;  // 9007199254740993: no double holds it
  const uint64_t count = ~0ull;               // 18446744073709551615
  const int64_t negative = -(1ll << 62) - 3;
  const std::string text = JsonLine()
                               .Add("game_id", game_id)
                               .Add("count", count)
                               .Add("delta", negative)
                               .Add("name", "a \"quoted\"\nname")
                               .Add("rate", 0.1)
                               .str();
  CHECK(text.find("9007199254740993") != std::string::npos);
  CHECK(text.find("18446744073709551615") != std::string::npos);
  CHECK(text.find('\n') == std::string::npos);  // one line: the newline in a string is escaped
  const auto parsed = nlohmann::json::parse(text);
  CHECK(parsed["game_id"].get<uint64_t>() == game_id);
  CHECK(parsed["count"].get<uint64_t>() == count);
  CHECK(parsed["delta"].get<int64_t>() == negative);
  CHECK(parsed["name"].get<std::string>() == "a \"quoted\"\nname");
  CHECK(parsed["rate"].get<double>() == 0.1);
  CHECK(JsonLine().Add("nan", std::nan("")).str() == "{\"nan\":null}");
}

}  // namespace
}  // namespace zerofarm::bench

TEST_CASE("farm efficiency is against the smaller of the search alone and the evaluator alone, cache counted",
          "[cli][bench]") {
  using zerofarm::bench::AgainstTwoBounds;
  zerofarm::bench::FarmProbe farm;
  farm.evals_per_s = 600;
  farm.cache_hit_rate = 0.25;  // the search consumed 800 leaves/s
  REQUIRE(farm.LeavesPerS() == Approx(800));

  // The evaluator answers 1000 evals/s: with a quarter of the leaves from the
  // cache, it lets the search consume 1333 leaves/s; the search alone makes 1000.
  auto two = AgainstTwoBounds(farm, 1000, 1000);
  CHECK(two.evaluator_leaves == Approx(1000 / 0.75));
  CHECK(two.binding == "search");
  CHECK(two.smaller == Approx(1000));
  CHECK(two.efficiency == Approx(0.8));

  // A slower evaluator binds: 700 evals/s -> 933 leaves/s, below the search's 2000.
  two = AgainstTwoBounds(farm, 700, 2000);
  CHECK(two.binding == "evaluator");
  CHECK(two.efficiency == Approx(800 / (700 / 0.75)));

  // Without the search bound (or a finite evaluator bound) there is no efficiency.
  two = AgainstTwoBounds(farm, 700, std::nan(""));
  CHECK(std::isnan(two.efficiency));
  CHECK(two.binding.empty());
  CHECK(std::isnan(AgainstTwoBounds(farm, std::nan(""), 2000).efficiency));
  farm.cache_hit_rate = 1;  // every leaf from the cache: no rate of leaves to compare
  CHECK(std::isnan(AgainstTwoBounds(farm, 700, 2000).efficiency));
}
