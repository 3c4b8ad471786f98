#pragma once
// The decode GEMM on CUDA (ptx/kernels/gemm_decode.cu; plan:
// backends/gpu/gemm_decode_plan.h): M <= 64, f16/bf16 operands contiguous
// along K, weights streamed once with split K and a fixed-order reduction.
// Never run on a GPU yet: taken only with HAL_GPU_UNVERIFIED=1
// (backends/gpu/unverified.h); HAL_CUDA_DISABLE=decode turns it off.
#include <cstdint>

#include "hal/op.h"
#include "kernel_params/gemm.h"

namespace hal::cuda {

class CudaStream;

// Launches both passes and returns true when the call qualifies; false (and
// nothing launched) otherwise, for the other GEMM kernels to take it.
bool try_gemm_decode(CudaStream& s, const GemmCall& call, const kernel_params::GemmParams& g);

// Calls that took this path in this process (for tests).
std::uint64_t gemm_decode_launch_count();

}  // namespace hal::cuda
