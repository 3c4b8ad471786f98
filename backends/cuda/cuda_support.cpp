// The cuda backend implements the GPU kernel matrix shared with the other GPU backend.
#include "backends/gpu/support.h"
#include "backends/cuda/cuda_ops.h"

namespace hal::cuda {

Support supports_call(const OpCall& call) { return gpu_supports_call("cuda", call); }

}  // namespace hal::cuda
