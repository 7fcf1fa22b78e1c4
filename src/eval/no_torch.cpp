// Built instead of torch_evaluator.cpp when LibTorch is off (ZF_WITH_TORCH=OFF):
// the farm then runs on RandomEvaluator, and asking for the network says why not.
#include "zerofarm/core/error.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/eval/trainer.h"

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

struct Trainer::Impl {};
Trainer::Trainer(const WeightSet&, const TrainerOptions&) {
  throw Error("this zerofarm was built without LibTorch (ZF_WITH_TORCH=OFF): it cannot train");
}
Trainer::~Trainer() = default;
TrainStepLoss Trainer::Step(const TrainBatch&) { return {}; }
WeightSet Trainer::Export(uint32_t) const { return {}; }
WeightSet Trainer::ExportMomentum() const { return {}; }
void Trainer::ImportMomentum(const WeightSet&) {}
void Trainer::SetLearningRate(double) {}
const NetConfig& Trainer::Config() const {
  static const NetConfig none;
  return none;
}

}  // namespace zerofarm::eval
