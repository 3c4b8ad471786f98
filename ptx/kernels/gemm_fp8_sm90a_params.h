#pragma once
// Parameters and tile configuration of the sm_90a FP8 GEMM
// (gemm_fp8_sm90a.cu), shared with its launcher
// (backends/cuda/cuda_gemm_fp8.cpp). Plain host/device header: no CUDA
// includes. The TMA maps are CUtensorMap bytes (see gemm_sm90a_params.h).
#include <stdint.h>

#include "kernel_params/fp8.h"
#include "ptx/kernels/gemm_geometry.h"
#include "ptx/kernels/gemm_sm90a_params.h"  // TmaDescriptorBytes, gemm_sm90a_tile

namespace hal::ptx {

// 128 x 128 output tiles (two consumer warpgroups of 64 rows), one k-block
// of 128 fp8 values per stage: each operand's stage is one TMA box of
// [128 rows][128 bytes], exactly the 128B swizzle span, and one k-block is
// the promotion interval (4 wgmma m64n128k32). BN = 128 = the b_scales
// block, so a tile's B scale is one value per k-block.
struct GemmFp8Sm90aTile {
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 128;
  static constexpr int kStages = 5;
  static constexpr int kThreads = 384;  // producer warpgroup + 2 consumer warpgroups
  static constexpr int kConsumerWarps = 8;
  static constexpr int kAccumulators = 64;  // per consumer thread: m64 x n128 / 128 threads
  // The consumers hold the wgmma accumulators (64) and the fp32 sums (64).
  static constexpr int kProducerRegisters = 40;
  static constexpr int kConsumerRegisters = 232;
  static constexpr int kTileABytes = kBlockM * kBlockK;  // 1 byte per fp8
  static constexpr int kTileBBytes = kBlockN * kBlockK;
  static constexpr int kStageBytes = kTileABytes + kTileBBytes;
  // A's scales of one stage when TMA loads them: 128 rows of f32.
  static constexpr int kScaleBytes = kBlockM * 4;
  static constexpr int kSharedBytes = kStages * kStageBytes + kStages * kScaleBytes + 2 * kStages * 8 +
                                      kConsumerWarps * kGemmWarpStageBytes + 1024 + 128;  // + aligning the ring (1024) and the scales (128)
  static_assert(kBlockN == kernel_params::kFp8Block && kBlockK == kernel_params::kFp8Block,
                "one B scale per tile and k-block; one k-block per promotion");
  static_assert(128 * kProducerRegisters + 256 * kConsumerRegisters <= 65536, "register file");
  static_assert(kSharedBytes <= 227 * 1024, "shared memory per block on sm_90");
};

struct GemmFp8Sm90aParams {
  TmaDescriptorBytes a_map;  // A [M, K] bytes, K contiguous; box {128, 128}, 128B swizzle
  TmaDescriptorBytes b_map;  // B [G * N, K] (G = 1 for gemm_fp8), K contiguous; box {128, 128}
  // a_scales seen as [ceil(K/128)][M] (M-major, DeepGEMM's layout), box {128, 1}, no swizzle;
  // valid when scales_tma != 0, else the consumers load the scales themselves.
  TmaDescriptorBytes sa_map;
  int32_t scales_tma = 0;
  kernel_params::GemmFp8Params f;  // f.m_tiles and f.block_m = kBlockM set by the launcher
  int32_t n_tiles = 0;
};

}  // namespace hal::ptx
