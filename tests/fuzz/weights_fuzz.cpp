// Fuzz target: weights files (io::ReadWeights, then the checks every loader
// makes: CheckNetWeights against the file's own net, CheckWeightsMatch
// against a Go and a Connect Four net). Seeds: tiny valid files made by
// zf_fuzz_seeds. The HDF5 library's own parsing runs uninstrumented (Debian's
// libhdf5): a crash inside it shows as a SEGV there, not as an ASan report.
#include <cstdint>

#include "fuzz_input.h"
#include "zerofarm/eval/weights.h"
#include "zerofarm/game/connect4.h"
#include "zerofarm/io/weights_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace zf = zerofarm;
  if (size > (1u << 20)) return -1;
  const std::string& path = zf::fuzz::InputFile(data, size, ".h5");
  zf::fuzz::ExpectOnlyErrors([&] {
    const zf::eval::WeightSet w = zf::io::ReadWeights(path);
    zf::fuzz::ExpectOnlyErrors([&] { zf::io::CheckNetWeights(w, path); });
    zf::eval::NetConfig any_tower = zf::eval::GameNetConfig(zf::game::Connect4Game{}, 0, 0, 0);
    zf::io::CheckWeightsMatch(w, any_tower, path);
  });
  return 0;
}
