// Facts of the build, the same in every binary whichever eval backend it links
// (src/CMakeLists.txt sets ZF_TORCH_BUILT and ZF_CUDA_BUILT on zf_eval).
#include "zerofarm/eval/torch_evaluator.h"

namespace zerofarm::eval {

bool TorchBuilt() { return ZF_TORCH_BUILT; }
bool CudaBuilt() { return ZF_CUDA_BUILT; }

}  // namespace zerofarm::eval
