// Fuzz target: Pons files (`zerofarm eval --pons FILE`, "moves score" lines:
// ReadPonsFile) and verdict files ("moves score rating" lines: the cache and
// the shipped DATA/connect4/*.rated, read by RatePositions). The positions
// read are not rated here: the solver's time is not the parser's.
#include <cstdint>
#include <vector>

#include "fuzz_input.h"
#include "zerofarm/learn/strength.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace learn = zerofarm::learn;
  if (size > (1u << 16)) return -1;
  const std::string& path = zerofarm::fuzz::InputFile(data, size, ".pons");
  zerofarm::fuzz::ExpectOnlyErrors([&] { learn::ReadPonsFile(path, 0); });
  zerofarm::fuzz::ExpectOnlyErrors([&] { learn::ReadPonsFile(path, 3); });
  zerofarm::fuzz::ExpectOnlyErrors([&] {
    std::vector<learn::PonsPosition> none;
    learn::RatePositions(&none, "", {path});
  });
  return 0;
}
