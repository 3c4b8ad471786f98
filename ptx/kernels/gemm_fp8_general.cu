// Scaled FP8 GEMM on CUDA cores, the last fallback (HAL_CUDA_DISABLE=fp8_mma,
// or a GPU older than sm_80; the sm_80 tensor-core path is gemm_fp8_sm80.cu):
// gemm_fp8 and gemm_fp8_grouped
// (hal/op_fp8.h), every fp8 format of both families, decoded exactly to
// fp32 by hal/fp8_codec.h.
//
// 64 x 64 tile per CTA of 256 threads (16 x 16, 4 x 4 outputs each). Per
// k-block of 128 (the promotion interval): four 32-wide K stages of A and B
// decoded into shared memory, products summed in fp32 into the block sum,
// then total += (sa * sb) * block sum, as the CPU does (cpu_ref/gemm_fp8.cpp;
// its block accumulator is fp32 too, so this kernel meets the CPU's
// contract).
//
// M tiles follow kernel_params::fp8_tile_rows (64 rows, group by group for
// the grouped call); blockIdx.y walks them grid-stride (more than 65535
// tiles), blockIdx.x is the N tile.
#include <stdint.h>

#include "hal/fp8_codec.h"
#include "kernel_params/fp8.h"
#include "ptx/kernels/gemm_epilogue.cuh"

using namespace hal::ptx;
using namespace hal::kernel_params;
namespace codec = hal::fp8_codec;

namespace {

constexpr int kTile = 64, kStageK = 32, kThreads = 256;
static_assert(kFp8Block % kStageK == 0, "stages tile a k-block");

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads) hal_gemm_fp8_general(const GemmFp8Params p) {
  __shared__ float a_s[kStageK][kTile + 1];  // [k][row], padded: the writes go down a column
  __shared__ float b_s[kStageK][kTile + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const auto* a = static_cast<const uint8_t*>(p.g.a);
  const int64_t c_size = p.g.c_type == 0 ? 4 : 2;
  for (int32_t mt = blockIdx.y; mt < p.m_tiles; mt += gridDim.y) {
    const Fp8TileRows rows = fp8_tile_rows(p, mt);
    const int g = rows.group;
    const auto* b = static_cast<const uint8_t*>(p.g.b) + g * p.b_group_stride;
    const float* sb = p.b_scales + g * p.sb_group_stride;
    float total[4][4] = {};
    for (int32_t kb = 0; kb < p.k_blocks; ++kb) {
      float blk[4][4] = {};
      const int64_t k_end = min(p.g.k, static_cast<int64_t>(kb + 1) * kFp8Block);
      for (int64_t k0 = static_cast<int64_t>(kb) * kFp8Block; k0 < k_end; k0 += kStageK) {
        // 64 rows x 32 k of each operand: 8 elements per thread, k fastest.
        for (int e = threadIdx.x; e < kTile * kStageK; e += kThreads) {
          const int r = e / kStageK, kk = e % kStageK;
          const int64_t k = k0 + kk;
          const bool k_in = k < k_end;
          const int64_t ar = rows.row0 + r, bn = n0 + r;
          a_s[kk][r] = k_in && r < rows.rows
                           ? codec::fp8_to_f32(a[ar * p.g.a_m_stride + k * p.g.a_k_stride], p.a_type)
                           : 0.0f;
          b_s[kk][r] = k_in && bn < p.g.n ? codec::fp8_to_f32(b[bn * p.g.b_n_stride + k * p.g.b_k_stride], p.b_type)
                                          : 0.0f;
        }
        __syncthreads();
#pragma unroll 8
        for (int kk = 0; kk < kStageK; ++kk)
#pragma unroll
          for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) blk[i][j] = fmaf(a_s[kk][ty + 16 * i], b_s[kk][tx + 16 * j], blk[i][j]);
        __syncthreads();
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int64_t r = ty + 16 * i;
        const float sa = r < rows.rows ? p.a_scales[(rows.row0 + r) * p.sa_m_stride + kb * p.sa_k_stride] : 0.0f;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int64_t n = n0 + tx + 16 * j;
          const float s_b = n < p.g.n ? sb[(n / kFp8Block) * p.sb_n_stride + kb * p.sb_k_stride] : 0.0f;
          total[i][j] = fmaf(sa * s_b, blk[i][j], total[i][j]);
        }
      }
    }
    // The group's C and bias: rows relative to the tile's first row.
    GemmParams e = p.g;
    e.c = static_cast<char*>(e.c) + rows.row0 * e.c_m_stride * c_size;
    if (e.bias != nullptr) e.bias = static_cast<const char*>(e.bias) + g * p.bias_group_stride * c_size;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int64_t r = ty + 16 * i, n = n0 + tx + 16 * j;
        if (r < rows.rows && n < p.g.n) gemm_store(e, r * e.c_m_stride + n * e.c_n_stride, n, total[i][j]);
      }
  }
}
