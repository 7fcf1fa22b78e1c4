// Built instead of torch_evaluator.cpp when LibTorch is off (ZF_WITH_TORCH=OFF):
// the farm then runs on RandomEvaluator, and asking for the network says why not.
#include "zerofarm/core/error.h"
#include "zerofarm/eval/torch_evaluator.h"

namespace zerofarm::eval {

bool TorchAvailable() { return false; }
bool CudaBuilt() { return false; }
int CudaDeviceCount() { return 0; }

WeightSet RandomWeights(const NetConfig&, uint64_t) {
  throw Error("this zerofarm was built without LibTorch (ZF_WITH_TORCH=OFF)");
}

std::unique_ptr<Evaluator> MakeTorchEvaluator(const WeightSet&, const TorchOptions&) {
  throw Error("this zerofarm was built without LibTorch (ZF_WITH_TORCH=OFF)");
}

}  // namespace zerofarm::eval
