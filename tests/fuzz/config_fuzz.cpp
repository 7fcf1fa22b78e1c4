// Fuzz target: config files. A user's `--config FILE` (FarmConfig::FromFile,
// where the supervisor's keys are ignored) and a run's own config.txt as the
// evaluators read it back (FarmConfig::FromText), each then validated as
// `zerofarm run` does (Validate) and written out again (ToText), which must
// read back to the same text.
#include <cstdint>
#include <cstdlib>

#include "fuzz_input.h"
#include "zerofarm/proc/farm_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using zerofarm::proc::FarmConfig;
  if (size > (1u << 16)) return -1;  // FromFile takes up to 1 MiB; longer inputs find nothing new
  const std::string& path = zerofarm::fuzz::InputFile(data, size, ".conf");
  zerofarm::fuzz::ExpectOnlyErrors([&] {
    const FarmConfig c = FarmConfig::FromFile(path);
    const std::string text = c.ToText();
    if (FarmConfig::FromText(text).ToText() != text) std::abort();  // the effective config round-trips
    c.Validate();
  });
  zerofarm::fuzz::ExpectOnlyErrors(
      [&] { FarmConfig::FromText(zerofarm::fuzz::Text(data, size)).Validate(); });
  return 0;
}
