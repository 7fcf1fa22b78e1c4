// Fuzz target: TorchScript model archives read without LibTorch
// (io::ReadWeights of a "*.pt": the size bound, the zip's end record, zip64
// records and central directory, each entry's bounds, then zerofarm.json),
// and the metadata parser alone on the same bytes (ParseModelMetadata, for
// inputs that are JSON text). Seeds (corpus/model/): a real torch.jit.save
// archive of a tiny scripted module with its zerofarm.json, and a
// zerofarm.json with nested values.
#include <cstdint>

#include "fuzz_input.h"
#include "zerofarm/eval/weights.h"
#include "zerofarm/game/connect4.h"
#include "zerofarm/io/torchscript_file.h"
#include "zerofarm/io/weights_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace zf = zerofarm;
  if (size > (1u << 20)) return -1;
  const std::string& path = zf::fuzz::InputFile(data, size, ".pt");
  zf::fuzz::ExpectOnlyErrors([&] {
    const zf::eval::WeightSet w = zf::io::ReadWeights(path);
    if (!w.config.scripted || w.script.size() != size) std::abort();  // the bytes LibTorch would get
    zf::eval::NetConfig any_tower = zf::eval::GameNetConfig(zf::game::Connect4Game{}, 0, 0, 0);
    zf::io::CheckWeightsMatch(w, any_tower, path);
  });
  zf::fuzz::ExpectOnlyErrors([&] {
    zf::eval::WeightSet w;
    zf::io::ParseModelMetadata(zf::fuzz::Text(data, size), "fuzz.pt", &w);
  });
  return 0;
}
