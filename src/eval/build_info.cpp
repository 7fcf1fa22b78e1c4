// Facts of the build, the same in every binary whichever eval backend it links
// (src/CMakeLists.txt sets ZF_TORCH_BUILT, ZF_CUDA_BUILT, ZF_AOTI_BUILT and
// ZF_TORCH_VERSION on zf_eval).
#include "zerofarm/eval/torch_evaluator.h"

namespace zerofarm::eval {

bool TorchBuilt() { return ZF_TORCH_BUILT; }
bool CudaBuilt() { return ZF_CUDA_BUILT; }
bool AotiBuilt() { return ZF_AOTI_BUILT; }
std::string TorchVersionBuilt() { return ZF_TORCH_VERSION; }

}  // namespace zerofarm::eval
