#pragma once
// Shared-memory staging of the CUDA tensor-core GEMMs' general epilogue
// (gemm_epilogue.cuh), used by gemm_sm80.cu, gemm_sm90a.cu and the sm_90a
// tile sizes (gemm_sm90a_params.h). The kernels take
// hal::kernel_params::GemmParams (kernel_params/gemm.h). Plain host/device header.

namespace hal::ptx {

// The general form stages each warp's 16 x 32 blocks in shared memory: rows
// of 32 + 4 floats, so the fragment writes spread over the banks (at most
// two lanes per bank); kGemmWarpStageBytes per warp.
constexpr int kGemmStageLd = 36;
constexpr int kGemmWarpStageBytes = 16 * kGemmStageLd * 4;

}  // namespace hal::ptx
