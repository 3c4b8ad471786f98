#pragma once
// Parameters of the scaled-FP8 kernels (hal/op_fp8.h): quantize_fp8 and
// dequantize_fp8 (ptx/kernels/fp8_quantize.cu, hip/kernels/fp8_quantize.hip),
// gemm_fp8 and gemm_fp8_grouped (ptx/kernels/gemm_fp8_general.cu,
// gemm_fp8_sm90a.cu; hip/kernels/gemm_fp8_mfma.hip); packed by
// backends/gpu/kernel_args.cpp.
//
// Strides are in ELEMENTS, dtypes in hal::DType numbering (fp8 codes:
// hal/fp8_codec.h), the block kind in hal::Fp8Block numbering.
#include <stdint.h>

#include "hal/host_device.h"
#include "kernel_params/gemm.h"

namespace hal::kernel_params {

inline constexpr int32_t kFp8Block = 128;  // hal::kFp8BlockSize
// hal::Fp8Block numbering.
inline constexpr int32_t kFp8Row1x128 = 0, kFp8Block128x128 = 1, kFp8Tensor = 2;

// Both directions of the block quantisation. quantize_fp8: `wide` (x) is
// read, `fp8` (y) and `scales` written; dequantize_fp8: `fp8` (y) and
// `scales` read, `wide` (x) written. Scale (r, q) of the grid lives at
// scales[r * s_row_stride + q * s_col_stride] (a tensor scale: both 0).
struct Fp8QuantParams {
  void* wide;
  void* fp8;
  float* scales;
  int64_t m, k;
  int64_t wide_m_stride, wide_k_stride;
  int64_t fp8_m_stride, fp8_k_stride;
  int64_t s_row_stride, s_col_stride;
  int64_t grid_rows, grid_cols;  // the scale grid: [M, ceil(K/128)], [ceil(M/128), ceil(K/128)] or [1, 1]
  int32_t wide_type;             // f32 / f16 / bf16
  int32_t fp8_type;              // an fp8 code
  int32_t block;                 // kFp8Row1x128 / kFp8Block128x128 / kFp8Tensor
  int32_t pow2_scales;           // quantize: round each scale up to a power of two
};

// gemm_fp8 (groups == 0) and gemm_fp8_grouped (groups = G). `g` carries what
// the bf16 GEMM kernels' epilogue reads (c, bias, m, n, k, c strides, c's
// dtype, alpha, beta, activation, epilogue form) and A's and B's element
// strides (g.a_m_stride, g.a_k_stride, g.b_n_stride, g.b_k_stride; B is
// [N, K]: g.b_n_stride its row stride). Grouped: group q's B, B scales and
// bias start q * *_group_stride elements after group 0's; its rows of A and
// C are [offsets[q], offsets[q + 1]) (already checked by the host).
struct GemmFp8Params {
  GemmParams g;
  const float* a_scales;
  const float* b_scales;
  int64_t sa_m_stride, sa_k_stride;  // a_scales [M, ceil(K/128)]
  int64_t sb_n_stride, sb_k_stride;  // b_scales [ceil(N/128), ceil(K/128)]
  const int32_t* offsets;            // grouped only: [G + 1], stride offsets_stride
  int64_t offsets_stride;
  int64_t b_group_stride, sb_group_stride, bias_group_stride;
  int32_t groups;                    // 0: gemm_fp8
  int32_t a_type, b_type;            // fp8 codes
  int32_t k_blocks;                  // ceil(K / 128)
  // Launcher-set: the number of block_m-row tiles of M, summed over groups
  // (grouped: each group's rows start a new tile), and that tile height.
  int32_t m_tiles, block_m;
};

// The rows one M tile covers: group `group`, rows [row0, row0 + rows) of A
// and C (rows <= block_m). Tiles are numbered group by group, each group's
// rows cut into ceil(rows / block_m) tiles; an empty group has none. Both
// the kernels' tile loops and the host tests use this.
struct Fp8TileRows {
  int32_t group;
  int64_t row0, rows;
};

HAL_HOST_DEVICE inline Fp8TileRows fp8_tile_rows(const GemmFp8Params& p, int32_t m_tile) {
  if (p.groups == 0) {
    const int64_t row0 = static_cast<int64_t>(m_tile) * p.block_m;
    const int64_t left = p.g.m - row0;
    return {0, row0, left < p.block_m ? left : p.block_m};
  }
  int64_t first_tile = 0;
  for (int32_t q = 0; q < p.groups; ++q) {
    const int64_t begin = p.offsets[q * p.offsets_stride], end = p.offsets[(q + 1) * p.offsets_stride];
    const int64_t tiles = (end - begin + p.block_m - 1) / p.block_m;
    if (m_tile < first_tile + tiles) {
      const int64_t row0 = begin + (m_tile - first_tile) * p.block_m;
      return {q, row0, end - row0 < p.block_m ? end - row0 : p.block_m};
    }
    first_tile += tiles;
  }
  return {p.groups, p.g.m, 0};  // past the last tile: no rows
}

}  // namespace hal::kernel_params
