// The arithmetic behind `zerofarm bench`'s farm efficiency (bench_util.h).
#include "zerofarm/bench/bench_util.h"

#include <catch2/catch.hpp>
#include <cmath>

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
