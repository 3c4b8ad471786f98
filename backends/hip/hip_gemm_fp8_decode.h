#pragma once
// The fp8 decode GEMM on HIP (hip/kernels/gemm_fp8_decode.hip; plan:
// backends/gpu/gemm_fp8_decode_plan.h, shared with CUDA, tile_m 16):
// gemm_fp8 with M <= 64, OCP operands contiguous along K, weights streamed
// once with split K and a fixed-order reduction. Never run on a GPU yet:
// taken only with HAL_GPU_UNVERIFIED=1 (backends/gpu/unverified.h);
// HAL_HIP_DISABLE=decode turns it off.
#include <cstdint>

#include "kernel_params/fp8.h"

namespace hal::hip {

class HipStream;

// Launches both passes and returns true when the call qualifies; false (and
// nothing launched) otherwise, for gemm_fp8_mfma to take it.
bool try_gemm_fp8_decode(HipStream& s, const kernel_params::GemmFp8Params& p);

}  // namespace hal::hip
