// Scaled FP8 GEMM on sm_80+ tensor cores through bf16 (Ampere has no FP8
// tensor cores): gemm_fp8 and gemm_fp8_grouped (hal/op_fp8.h), every fp8
// format of both families, any strides.
//
// Every e4m3/e5m2 value of both families is exactly a bf16 (at most 4
// significant bits, exponents 2^-17 .. 2^15; NaN and Inf map to bf16's), so
// each k-block of 128 is decoded (hal/fp8_codec.h) into bf16 tiles in
// shared memory and multiplied by mma.sync m16n8k16 bf16 with fp32
// accumulation: the products are exact, as in fp32. The block is summed in
// the mma accumulators from zero and promoted, total += (sa * sb) * acc, as
// on the other backends.
//
// 64 x 64 tile per CTA of 128 threads (2 x 2 warps of 32 x 32: 2 m16 x 4 n8
// mma per k16 step). Shared tiles [64 rows][128 k + 8] bf16 (the padding
// spreads the fragment loads of one warp over the banks). M tiles follow
// kernel_params::fp8_tile_rows (64 rows, group by group), grid-stride over
// blockIdx.y; blockIdx.x is the N tile.
#include <stdint.h>

#include "hal/fp8_codec.h"
#include "kernel_params/fp8.h"
#include "ptx/arch_config.cuh"
#include "ptx/kernels/gemm_epilogue.cuh"
#include "ptx/mma_sm80.cuh"

using namespace hal::ptx;
using namespace hal::kernel_params;
namespace codec = hal::fp8_codec;

namespace {

constexpr int kTile = 64, kThreads = 128, kRow = kFp8Block + 8;  // bf16 per shared row

// The bf16 bits of an fp8 byte: the upper half of its exact fp32 value.
__device__ __forceinline__ uint16_t fp8_to_bf16_bits(uint8_t b, int32_t t) {
  return static_cast<uint16_t>(__float_as_uint(codec::fp8_to_f32(b, t)) >> 16);
}

// The k-block's [64 rows][128 k] of one operand as bf16, zero past the rows
// and past a ragged K.
__device__ __forceinline__ void load_block(uint16_t* s, const uint8_t* base, int64_t row0, int64_t rows,
                                           int64_t row_stride, int64_t k_stride, int64_t k0, int64_t k_end,
                                           int32_t type) {
  for (int e = threadIdx.x; e < kTile * kFp8Block; e += kThreads) {
    const int r = e / kFp8Block, kk = e % kFp8Block;
    const int64_t k = k0 + kk;
    s[r * kRow + kk] =
        (r < rows && k < k_end) ? fp8_to_bf16_bits(base[(row0 + r) * row_stride + k * k_stride], type) : uint16_t{0};
  }
}

__device__ __forceinline__ uint32_t pair_at(const uint16_t* s, int row, int k) {
  return *reinterpret_cast<const uint32_t*>(s + row * kRow + k);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads) hal_gemm_fp8_sm80(const GemmFp8Params p) {
#if HAL_PTX_SM80
  __shared__ __align__(16) uint16_t a_s[kTile * kRow];
  __shared__ __align__(16) uint16_t b_s[kTile * kRow];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / 2, wn = warp % 2, g = lane / 4, q = lane % 4;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const auto* a = static_cast<const uint8_t*>(p.g.a);
  const int64_t c_size = p.g.c_type == 0 ? 4 : 2;
  for (int32_t mt = blockIdx.y; mt < p.m_tiles; mt += gridDim.y) {
    const Fp8TileRows rows = fp8_tile_rows(p, mt);
    const int grp = rows.group;
    const auto* b = static_cast<const uint8_t*>(p.g.b) + grp * p.b_group_stride;
    const float* sb = p.b_scales + grp * p.sb_group_stride;
    float total[2][4][4] = {};
    for (int32_t kb = 0; kb < p.k_blocks; ++kb) {
      const int64_t k0 = static_cast<int64_t>(kb) * kFp8Block, k_end = min(p.g.k, k0 + kFp8Block);
      __syncthreads();  // the previous block's fragment reads are done
      load_block(a_s, a, rows.row0, rows.rows, p.g.a_m_stride, p.g.a_k_stride, k0, k_end, p.a_type);
      load_block(b_s, b, n0, min(static_cast<int64_t>(kTile), p.g.n - n0), p.g.b_n_stride, p.g.b_k_stride, k0, k_end, p.b_type);
      __syncthreads();
      float acc[2][4][4] = {};
#pragma unroll 2
      for (int kk = 0; kk < kFp8Block; kk += 16) {
        uint32_t af[2][4], bfr[4][2];
#pragma unroll
        for (int mi = 0; mi < 2; ++mi) {
          const int r = wm * 32 + mi * 16 + g;
          af[mi][0] = pair_at(a_s, r, kk + 2 * q);
          af[mi][1] = pair_at(a_s, r + 8, kk + 2 * q);
          af[mi][2] = pair_at(a_s, r, kk + 2 * q + 8);
          af[mi][3] = pair_at(a_s, r + 8, kk + 2 * q + 8);
        }
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
          const int n = wn * 32 + ni * 8 + g;
          bfr[ni][0] = pair_at(b_s, n, kk + 2 * q);
          bfr[ni][1] = pair_at(b_s, n, kk + 2 * q + 8);
        }
#pragma unroll
        for (int mi = 0; mi < 2; ++mi)
#pragma unroll
          for (int ni = 0; ni < 4; ++ni) MmaM16N8K16F32Bf16Bf16F32::fma(acc[mi][ni], af[mi], bfr[ni], acc[mi][ni]);
      }
      // Promotion: c[0..1] are row g, c[2..3] row g + 8, columns 2q, 2q + 1.
#pragma unroll
      for (int mi = 0; mi < 2; ++mi)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int64_t r = wm * 32 + mi * 16 + g + 8 * h;
          const float sa = r < rows.rows ? p.a_scales[(rows.row0 + r) * p.sa_m_stride + kb * p.sa_k_stride] : 0.0f;
#pragma unroll
          for (int ni = 0; ni < 4; ++ni)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int64_t n = n0 + wn * 32 + ni * 8 + 2 * q + e;
              const float s_b = n < p.g.n ? sb[(n / kFp8Block) * p.sb_n_stride + kb * p.sb_k_stride] : 0.0f;
              total[mi][ni][2 * h + e] = fmaf(sa * s_b, acc[mi][ni][2 * h + e], total[mi][ni][2 * h + e]);
            }
        }
    }
    // The group's C and bias: rows relative to the tile's first row.
    GemmParams ep = p.g;
    ep.c = static_cast<char*>(ep.c) + rows.row0 * ep.c_m_stride * c_size;
    if (ep.bias != nullptr) ep.bias = static_cast<const char*>(ep.bias) + grp * p.bias_group_stride * c_size;
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int ni = 0; ni < 4; ++ni)
#pragma unroll
        for (int v = 0; v < 4; ++v) {
          const int64_t r = wm * 32 + mi * 16 + g + 8 * (v / 2), n = n0 + wn * 32 + ni * 8 + 2 * q + v % 2;
          if (r < rows.rows && n < p.g.n)
            gemm_store(ep, r * ep.c_m_stride + n * ep.c_n_stride, n, total[mi][ni][v]);
        }
  }
#else
  (void)p;
#endif
}
