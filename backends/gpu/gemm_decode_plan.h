#pragma once
// Planning of the decode GEMM (kernel_params/gemm_decode.h), shared by the
// CUDA and HIP launchers: whether a call qualifies, how many K splits, the
// grids and the workspace. Pure host code, no vendor call; tested on the CPU
// with a host emulation of the kernels' decomposition
// (tests/unit/gpu_gemm_decode_plan_test.cpp).
//
// Why split K: with M <= 64 the weight matrix B is the traffic, and a GEMM
// tiled over M and N alone gives only ceil(N / 16) units of work, too few
// warps to keep the memory system busy (N = 4096: 256 warps on 132 SMs).
// Splitting K multiplies the units until every SM holds several warps, each
// streaming a contiguous K range of 16 weight rows. The split count depends on
// the device's SM / CU count, so results are bitwise reproducible run to run
// on one device model (and one partition size), not across models: each
// split's partial is summed in hardware order inside the matrix instruction
// and the split count fixes where the partials are cut. The final sum over
// splits is in fixed order 0..splits-1 (no atomics).
#include <cstdint>
#include <string>
#include <vector>

#include "kernel_params/gemm.h"
#include "kernel_params/gemm_decode.h"

namespace hal::gpu {

// The tuning constants of the split planner.
struct DecodeGemmTuning {
  int warps_per_unit = 16;       // target resident units per SM / CU
  int min_blocks_per_split = 8;  // >= 8 x 32 K-values (8 KiB of weights per unit) per split
};

struct DecodeGemmPlan {
  bool ok = false;
  std::string why;        // when !ok: the first condition that failed
  int m_tiles = 0;        // kernel variant: M tiles of tile_m rows, a power of two
  std::int64_t n_tiles = 0, splits = 0, k_per_split = 0, units = 0;
  std::int64_t ctas = 0;            // pass 1 grid (kDecodeWarpsPerCta units each)
  std::int64_t reduce_blocks = 0;   // pass 2 grid (kDecodeReduceThreads outputs each, grid-stride)
  std::int64_t workspace_floats = 0;
};

// The split planner of both decode GEMMs (this one and the fp8 one,
// gemm_fp8_decode_plan.h), after each has checked that a call qualifies:
// the M-tile variant (the power of two of ceil(m / tile_m) tiles, refused
// above max_m_tiles), the K splits (whole blocks of block_k K-values, at
// least min_blocks_per_split per split, about warps_per_unit units per
// compute unit over n_tiles * batch, no empty split), both grids and the
// workspace (refused above 1 GiB or a grid above 2^31 - 1 CTAs).
// What differs between the two: block_k (kDecodeBlockK = 32, kFp8Block =
// 128: a scale block never straddles two splits), the tuning defaults, and
// batch (1 for fp8).
DecodeGemmPlan plan_decode_splits(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                                  std::int64_t block_k, int compute_units, int tile_m, int max_m_tiles,
                                  const DecodeGemmTuning& tuning);

// tile_m: rows of M per matrix instruction (kDecodeCudaTileM or
// kDecodeHipTileM); max_m_tiles: the largest variant compiled.
// compute_units: SMs / CUs of the stream's partition.
DecodeGemmPlan plan_decode_gemm(const kernel_params::GemmParams& p, int compute_units, int tile_m, int max_m_tiles,
                                const DecodeGemmTuning& tuning = {});

// The kernels' parameters for an accepted plan (partial left null: the
// launcher's workspace).
kernel_params::GemmDecodeParams decode_gemm_params(const kernel_params::GemmParams& p, const DecodeGemmPlan& plan);

// Host emulation of both passes for a single-batch call on row-major A [m, k]
// and B [n, k] (fp32 values of 16-bit inputs): the same unit decomposition,
// the same lane -> (row, K range) and accumulator -> output maps as the CUDA
// kernel (cuda = true; the HIP one otherwise), with each matrix instruction
// replaced by fp32 fmas in K-slot order. It cannot reproduce the tensor
// cores' internal summation order, but with inputs whose products and sums
// are exact it proves every (m, n, k) is counted exactly once; it also gives
// the reduction order of pass 2. Returns C = sum over splits in order (no epilogue).
std::vector<float> emulate_decode_gemm(const DecodeGemmPlan& plan, bool cuda, std::int64_t m, std::int64_t n,
                                       std::int64_t k, const std::vector<float>& a, const std::vector<float>& b,
                                       std::vector<float>* partial_out = nullptr);

// Pass 2 of the decode GEMMs' host emulations (this one and the fp8 ones):
// C [m][n] = partial[split][0][m][n] summed over splits in order
// 0..splits-1, hal_gemm_decode_reduce's order (no epilogue).
std::vector<float> emulate_decode_reduce(const std::vector<float>& partial, std::int64_t splits, std::int64_t m,
                                         std::int64_t n);

}  // namespace hal::gpu
