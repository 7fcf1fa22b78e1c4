// The eval backend without LibTorch (zf_eval_none): linked into `zerofarm`,
// the supervisor's binary, which hands every command that runs a network to
// zerofarm-torch; and into every binary of a build without LibTorch
// (ZF_WITH_TORCH=OFF), whose farm then runs on RandomEvaluator. Asking it for
// the network says why not.
#include <string>

#include "zerofarm/core/error.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/eval/trainer.h"

namespace zerofarm::eval {
namespace {
constexpr const char* kNoTorch =
    "this zerofarm binary has no LibTorch (zerofarm-torch has; a ZF_WITH_TORCH=OFF build has none)";
}  // namespace

bool TorchAvailable() { return false; }
int CudaDeviceCount() { return 0; }

WeightSet RandomWeights(const NetConfig&, uint64_t) { throw Error(kNoTorch); }

std::unique_ptr<Evaluator> MakeTorchEvaluator(const WeightSet&, const TorchOptions&) {
  throw Error(kNoTorch);
}

struct Trainer::Impl {};
Trainer::Trainer(const WeightSet&, const TrainerOptions&) {
  throw Error(std::string(kNoTorch) + ": it cannot train");
}
Trainer::~Trainer() = default;
TrainStepLoss Trainer::Step(const TrainBatch&) { return {}; }
WeightSet Trainer::Export(uint32_t) const { return {}; }
WeightSet Trainer::ExportMomentum() const { return {}; }
void Trainer::ImportMomentum(const WeightSet&) {}
WeightSet Trainer::ExportHeads(uint32_t) const { return {}; }
void Trainer::ImportHeads(const WeightSet&) {}
bool Trainer::HasOwnershipHead() const { return false; }
void Trainer::SetLearningRate(double) {}
bool TrainerCudaAvailable() { return false; }
bool TrainerCudaGraphCanRun(const TrainerOptions&) { return false; }
void CheckTrainerOptions(const TrainerOptions&) { throw Error(std::string(kNoTorch) + ": it cannot train"); }
const NetConfig& Trainer::Config() const {
  static const NetConfig none;
  return none;
}

}  // namespace zerofarm::eval
