// Scaled FP8 GEMM on CDNA matrix cores: gemm_fp8 and gemm_fp8_grouped
// (hal/op_fp8.h), DeepSeek-V3's promotion every 128 of K.
//
//   gemm_fp8_mfma_fnuz_<a>_<b> (FNUZ operands, a/b = e4m3 or e5m2): on
//     gfx940/941/942 v_mfma_f32_32x32x16_<fp8|bf8>_<fp8|bf8>, which read the
//     FNUZ encodings directly (CDNA3's fp8 is FNUZ); on gfx90a, which has no
//     fp8 MFMA, the f16 path below.
//   gemm_fp8_mfma_f16 (any fp8 formats, OCP on MI300X included): each byte
//     decoded exactly to fp32 (hal/fp8_codec.h) and rounded to f16, which
//     holds every e4m3/e5m2 value of both families exactly (at most 4
//     significant bits, exponents from 2^-17 to 2^15), then
//     v_mfma_f32_32x32x8f16.
//
// 64 x 64 tile per workgroup of 4 wave64s, each a 32 x 32 quarter. Per
// k-block of 128: the block's A and B bytes ([64 rows][128 k] each, zero
// beyond M, N and a ragged K) in LDS, the block summed in the MFMA
// accumulator from zero, then total += (sa * sb) * acc in fp32 registers.
// MI300's FP8 MFMA writes fp32, but the precision of its internal sums is
// not documented (docs/accuracy.md): the contract's u_blk for this kernel
// is an assumption until measured. M tiles follow
// kernel_params::fp8_tile_rows (64 rows, group by group), grid-stride over
// blockIdx.y.
#include <hip/hip_runtime.h>

#include "gemm_epilogue.h"
#include "hal/fp8_codec.h"
#include "hip/mfma.h"
#include "hip/wave.h"
#include "kernel_params/fp8.h"

using namespace hal::hip;
using namespace hal::hip::kernels;
using namespace hal::kernel_params;
namespace codec = hal::fp8_codec;

namespace {

constexpr int kTile = 64, kThreads = 256;
constexpr int kRow = kFp8Block + 8;  // LDS row in bytes: 8-byte fragment reads stay aligned, rows spread over banks
static_assert(kThreads == 4 * kWaveSize, "gemm_fp8_mfma: 4 wave64s, one per 32x32 quarter");

// The k-block's bytes of one operand: rows [row0, row0 + rows) of a [.., K]
// matrix with strides, k in [k0, k_end); zero elsewhere (every format's +0).
__device__ __forceinline__ void load_block(uint8_t* lds, const uint8_t* base, int64_t row0, int64_t rows,
                                           int64_t row_stride, int64_t k_stride, int64_t k0, int64_t k_end) {
  for (int e = threadIdx.x; e < kTile * kFp8Block; e += kThreads) {
    const int r = e / kFp8Block, kk = e % kFp8Block;
    const int64_t k = k0 + kk;
    lds[r * kRow + kk] = (r < rows && k < k_end) ? base[(row0 + r) * row_stride + k * k_stride] : uint8_t{0};
  }
}

// One k-block of the wave's 32 x 32 quarter, summed from zero.
template <int kA, int kB>
__device__ __forceinline__ Float16 block_sum_fp8(const uint8_t* as, const uint8_t* bs) {
  Float16 acc;
#pragma unroll
  for (int r = 0; r < 16; ++r) acc[r] = 0.0f;
#if HAL_HIP_MFMA_FP8
  // 32x32x16 fp8 (hip/mfma.h): `as`/`bs` already point at the lane's 8 bytes.
  using Mma = Mfma_F32_32x32x16_Fp8<kA == codec::kF8E5M2Fnuz, kB == codec::kF8E5M2Fnuz>;
#pragma unroll
  for (int kk = 0; kk < kFp8Block; kk += Mma::K)
    acc = Mma::fma(*reinterpret_cast<const Fp8x8*>(as + kk), *reinterpret_cast<const Fp8x8*>(bs + kk), acc);
#else
  (void)as;
  (void)bs;
#endif
  return acc;
}

// The same block through f16 (exact for every fp8 value): 32x32x8 f16, lane
// l holds A[l%32][4*(l/32) + 0..3]; `as`/`bs` point at k = 0 of the lane's
// row, the 4*(l/32) offset is added here.
__device__ __forceinline__ Float16 block_sum_f16(const uint8_t* as, const uint8_t* bs, int32_t a_type, int32_t b_type) {
  Float16 acc;
#pragma unroll
  for (int r = 0; r < 16; ++r) acc[r] = 0.0f;
  const int half = lane_id() / 32;
#pragma unroll 4
  for (int kk = 0; kk < kFp8Block; kk += 8) {
    Half4 a, b;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      a[i] = static_cast<_Float16>(codec::fp8_to_f32(as[kk + 4 * half + i], a_type));
      b[i] = static_cast<_Float16>(codec::fp8_to_f32(bs[kk + 4 * half + i], b_type));
    }
    acc = Mfma_F32_32x32x8_F16::fma(a, b, acc);
  }
  return acc;
}

// kA, kB: the FNUZ codes of the fp8 MFMA path; 0: the f16 path.
template <int kA, int kB>
__device__ __forceinline__ void gemm_fp8_mfma(const GemmFp8Params& p) {
  __shared__ __attribute__((aligned(16))) uint8_t a_lds[kTile * kRow];
  __shared__ __attribute__((aligned(16))) uint8_t b_lds[kTile * kRow];
  constexpr bool kFp8Mfma = HAL_HIP_MFMA_FP8 && kA != 0;  // gfx90a: the f16 path
  const int lane = lane_id(), wave = wave_id();
  const int wm = wave / 2, wn = wave % 2;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const int64_t c_size = p.g.c_type == 0 ? 4 : 2;
  // This lane's column and (per register r) row within the tile, D layout of 32x32.
  const int64_t col = wn * 32 + lane % 32;
  const auto* a = static_cast<const uint8_t*>(p.g.a);
  for (int32_t mt = blockIdx.y; mt < p.m_tiles; mt += gridDim.y) {
    const Fp8TileRows rows = fp8_tile_rows(p, mt);
    const int g = rows.group;
    const auto* b = static_cast<const uint8_t*>(p.g.b) + g * p.b_group_stride;
    const float* sb = p.b_scales + g * p.sb_group_stride;
    Float16 total;
#pragma unroll
    for (int r = 0; r < 16; ++r) total[r] = 0.0f;
    for (int32_t kb = 0; kb < p.k_blocks; ++kb) {
      const int64_t k0 = static_cast<int64_t>(kb) * kFp8Block, k_end = min(p.g.k, k0 + kFp8Block);
      __syncthreads();  // the previous block's LDS reads are done
      load_block(a_lds, a, rows.row0, rows.rows, p.g.a_m_stride, p.g.a_k_stride, k0, k_end);
      load_block(b_lds, b, n0, min<int64_t>(kTile, p.g.n - n0), p.g.b_n_stride, p.g.b_k_stride, k0, k_end);
      __syncthreads();
      const uint8_t* as = a_lds + (wm * 32 + lane % 32) * kRow;
      const uint8_t* bs = b_lds + (wn * 32 + lane % 32) * kRow;
      Float16 acc;
      if constexpr (kFp8Mfma) acc = block_sum_fp8<kA, kB>(as + 8 * (lane / 32), bs + 8 * (lane / 32));
      else acc = block_sum_f16(as, bs, p.a_type, p.b_type);
      const int64_t n = n0 + col;
      const float s_b = n < p.g.n ? sb[(n / kFp8Block) * p.sb_n_stride + kb * p.sb_k_stride] : 0.0f;
#pragma unroll
      for (int r = 0; r < 16; ++r) {
        const int64_t row = wm * 32 + 8 * (r / 4) + 4 * (lane / 32) + r % 4;
        const float s_a = row < rows.rows ? p.a_scales[(rows.row0 + row) * p.sa_m_stride + kb * p.sa_k_stride] : 0.0f;
        total[r] = fmaf(s_a * s_b, acc[r], total[r]);
      }
    }
    // The group's C and bias: rows relative to the tile's first row.
    GemmParams e = p.g;
    e.c = static_cast<char*>(e.c) + rows.row0 * e.c_m_stride * c_size;
    if (e.bias != nullptr) e.bias = static_cast<const char*>(e.bias) + g * p.bias_group_stride * c_size;
    const int64_t n = n0 + col;
#pragma unroll
    for (int r = 0; r < 16; ++r) {
      const int64_t row = wm * 32 + 8 * (r / 4) + 4 * (lane / 32) + r % 4;
      if (row < rows.rows && n < p.g.n) gemm_store(e, 0, row, n, total[r]);
    }
  }
}

}  // namespace

#define HAL_FP8_MFMA_KERNEL(name, ka, kb) \
  extern "C" __global__ __launch_bounds__(kThreads) void name(GemmFp8Params p) { gemm_fp8_mfma<ka, kb>(p); }
HAL_FP8_MFMA_KERNEL(gemm_fp8_mfma_fnuz_e4m3_e4m3, codec::kF8E4M3Fnuz, codec::kF8E4M3Fnuz)
HAL_FP8_MFMA_KERNEL(gemm_fp8_mfma_fnuz_e4m3_e5m2, codec::kF8E4M3Fnuz, codec::kF8E5M2Fnuz)
HAL_FP8_MFMA_KERNEL(gemm_fp8_mfma_fnuz_e5m2_e4m3, codec::kF8E5M2Fnuz, codec::kF8E4M3Fnuz)
HAL_FP8_MFMA_KERNEL(gemm_fp8_mfma_fnuz_e5m2_e5m2, codec::kF8E5M2Fnuz, codec::kF8E5M2Fnuz)
HAL_FP8_MFMA_KERNEL(gemm_fp8_mfma_f16, 0, 0)
#undef HAL_FP8_MFMA_KERNEL
