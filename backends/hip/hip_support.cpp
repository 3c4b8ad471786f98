// The hip backend implements the GPU kernel matrix shared with the other GPU backend.
#include "backends/gpu/support.h"
#include "backends/hip/hip_ops.h"

namespace hal::hip {

Support supports_call(const OpCall& call) { return gpu_supports_call("hip", call); }

}  // namespace hal::hip
