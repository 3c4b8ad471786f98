#pragma once
// The fp8 decode GEMM on CUDA (ptx/kernels/gemm_fp8_decode.cu; plan:
// backends/gpu/gemm_fp8_decode_plan.h): gemm_fp8 with M <= 64, OCP
// operands contiguous along K, weights streamed once with split K and a
// fixed-order reduction. Never run on a GPU yet: taken only with
// HAL_GPU_UNVERIFIED=1 (backends/gpu/unverified.h); HAL_CUDA_DISABLE=decode
// turns it off, as it does the 16-bit decode GEMM.
#include <cstdint>

#include "kernel_params/fp8.h"

namespace hal::cuda {

class CudaStream;

// Launches both passes and returns true when the call qualifies; false (and
// nothing launched) otherwise, for the other fp8 GEMM kernels to take it.
bool try_gemm_fp8_decode(CudaStream& s, const kernel_params::GemmFp8Params& p);

// Calls that took this path in this process (for tests).
std::uint64_t gemm_fp8_decode_launch_count();

}  // namespace hal::cuda
