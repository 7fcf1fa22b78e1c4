// --precision and --fixed-wait as FarmConfig fields: validation, the text
// form evaluators read back, and what `auto` resolves to.
#include <catch2/catch.hpp>

#include "zerofarm/core/error.h"
#include "zerofarm/eval/cpu_features.h"
#include "zerofarm/proc/farm_config.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::proc {
namespace {

FarmConfig Base() {
  FarmConfig c;
  c.out = "/tmp/zf-precision-test";
  c.gpus = 0;
  return c;
}

TEST_CASE("precision: auto is bf16 exactly where AutoPrefersBf16 says it pays", "[proc]") {
  FarmConfig c = Base();
  REQUIRE(c.precision == "auto");
  CHECK(TorchOptionsFor(c, false).bf16 == eval::AutoPrefersBf16());
  CHECK_FALSE(TorchOptionsFor(c, true).bf16);  // GPUs stay fp32 unless asked
  c.precision = "fp32";
  CHECK_FALSE(TorchOptionsFor(c, false).bf16);
  c.precision = "bf16";
  CHECK(TorchOptionsFor(c, false).bf16);
  c.precision = "auto";
  c.bf16 = true;  // --bf16 still works
  CHECK(TorchOptionsFor(c, false).bf16);
}

TEST_CASE("precision: bad values and contradictions are ConfigErrors", "[proc]") {
  FarmConfig c = Base();
  c.Validate();
  c.precision = "fp8";
  CHECK_THROWS_AS(c.Validate(), ConfigError);
  c.precision = "fp32";
  c.bf16 = true;
  CHECK_THROWS_WITH(c.Validate(), Catch::Contains("contradicts"));
  c = Base();
  c.precision = "fp16";  // a CPU evaluator
  CHECK_THROWS_WITH(c.Validate(), Catch::Contains("GPU"));
}

TEST_CASE("precision and adaptive_wait survive the text form", "[proc]") {
  FarmConfig c = Base();
  c.precision = "fp32";
  c.adaptive_wait = false;
  const FarmConfig back = FarmConfig::FromText(c.ToText());
  CHECK(back.precision == "fp32");
  CHECK_FALSE(back.adaptive_wait);
  CHECK(FarmConfig::FromText(Base().ToText()).adaptive_wait);
}

}  // namespace
}  // namespace zerofarm::proc
