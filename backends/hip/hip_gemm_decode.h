#pragma once
// The decode GEMM on HIP (hip/kernels/gemm_decode.hip; plan:
// backends/gpu/gemm_decode_plan.h, shared with CUDA): M <= 64, f16/bf16
// operands contiguous along K, weights streamed once with split K and a
// fixed-order reduction. Never run on a GPU yet: taken only with
// HAL_GPU_UNVERIFIED=1 (backends/gpu/unverified.h).
#include <cstdint>

#include "hal/op.h"
#include "kernel_params/gemm.h"

namespace hal::hip {

class HipStream;

// Launches both passes and returns true when the call qualifies; false (and
// nothing launched) otherwise, for the MFMA / general kernels to take it.
bool try_gemm_decode(HipStream& s, const GemmCall& call, const kernel_params::GemmParams& g);

}  // namespace hal::hip
