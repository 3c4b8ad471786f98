// FP8 decode GEMM (gemm_fp8 with M <= 64): c = epilogue(sum_kb (sa sb) S_kb)
// for A = activations [m, k] with 1 x 128 scales and B = a weight [N, K]
// with 128 x 128 scales, OCP e4m3 / e5m2 in any pairing. The weight is the
// traffic, so the kernel streams it once, split over K like the 16-bit
// decode GEMM (gemm_decode.cu). Decomposition, lane maps, the sm_80
// conversion: kernel_params/gemm_fp8_decode.h; the plan:
// backends/gpu/gemm_fp8_decode_plan.h. Never run on a GPU (behind
// HAL_GPU_UNVERIFIED=1, backends/gpu/unverified.h).
//
// Pass 1 (hal_gemm_fp8_decode_<a>_<b>_m<8|16|32|64>): one warp per unit
// (16 weight rows, one K split of whole 128-blocks). Per 64 K-values each
// lane issues two 16-byte ld.global.nc loads of weight bytes (rows g and
// g + 8, L2 evict-first: read once) and one 16-byte load of activation
// bytes per 8-row M tile; the weights are the instruction's A operand (16
// rows, no padding), the activations its B (8 columns = 8 rows of M). No
// shared memory, no barrier. Each 128-block's sum S_kb starts from zero in
// the mma accumulators:
//   sm_89+ (the sm_90a build): 2 steps x 2 mma.sync m16n8k32 fp8 per M tile
//     = 4 instructions of 32 products each, fp32 accumulate: the fused
//     32-product step of conformance/fp8_accumulator.h's wgmma model
//     (kFp8BlockSumWgmma, the bound the suite uses for cuda);
//   sm_80: the bytes converted exactly to f16 in registers
//     (fp8_decode_to_f16_pair) and 2 steps x 4 mma.sync m16n8k16 f16,
//     like gemm_fp8_sm80.cu (held to the same bound, docs/accuracy.md).
// Then, blocks in ascending order, total = fma(sa[m, kb] * sb[n/128, kb],
// S_kb, total) in fp32 (the promotion of gemm_fp8_sm80.cu / _general.cu);
// each split's total is written to partial[split][m][n]. Inside the block
// the K-values go to the instruction's K slots in a permuted order, the same
// for both operands (a dot product does not care).
//
// Pass 2 is the 16-bit decode GEMM's hal_gemm_decode_reduce: splits summed in
// order 0..splits-1, then gemm_fp8's epilogue (gemm_store on GemmFp8Params::g).
// A product's promotion adds are then at most blocks_per_split - 1 + splits
// - 1 <= ceil(K/128) - 1, the count gemm_fp8's bound already allows.
#include <stdint.h>

#include "kernel_params/gemm_decode.h"
#include "kernel_params/fp8.h"
#include "kernel_params/gemm_fp8_decode.h"
#include "ptx/kernels/decode_stream.cuh"
#include "ptx/ld_st.cuh"
#include "ptx/mma_sm80.cuh"
#include "ptx/mma_sm89.cuh"

using namespace hal::ptx;
using namespace hal::kernel_params;

namespace {

constexpr int kThreads = 32 * kDecodeWarpsPerCta;

__device__ __forceinline__ uint32_t word(const Bits128& v, int i) {
  return i == 0 ? v.x : (i == 1 ? v.y : (i == 2 ? v.z : v.w));
}

// The instruction for (weights = mma A, activations = mma B).
template <bool kW5, bool kX5> struct Fp8Mma;
template <> struct Fp8Mma<false, false> { using T = MmaM16N8K32F32E4M3E4M3F32; };
template <> struct Fp8Mma<false, true> { using T = MmaM16N8K32F32E4M3E5M2F32; };
template <> struct Fp8Mma<true, false> { using T = MmaM16N8K32F32E5M2E4M3F32; };
template <> struct Fp8Mma<true, true> { using T = MmaM16N8K32F32E5M2E5M2F32; };

// One 64-K step of one M tile into blk: the chunks' words feed the slots
// (kernel_params/gemm_fp8_decode.h lane map) as
//   fp8 form:  instruction i (0, 1) takes words 2i, 2i + 1:
//              a = {w0[2i], w1[2i], w0[2i+1], w1[2i+1]}, b = {x[2i], x[2i+1]};
//   f16 form:  instruction i (0..3) takes word i as two f16 pairs:
//              a = {lo(w0[i]), lo(w1[i]), hi(w0[i]), hi(w1[i])}, b = {lo(x[i]), hi(x[i])}.
template <bool kA5, bool kB5>
__device__ __forceinline__ void step(float (&blk)[4], const Bits128& w0, const Bits128& w1, const Bits128& x) {
#if HAL_PTX_SM89
  using Mma = typename Fp8Mma<kB5, kA5>::T;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const uint32_t a[4] = {word(w0, 2 * i), word(w1, 2 * i), word(w0, 2 * i + 1), word(w1, 2 * i + 1)};
    const uint32_t b[2] = {word(x, 2 * i), word(x, 2 * i + 1)};
    Mma::fma(blk, a, b, blk);
  }
#else
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t a[4] = {fp8_decode_to_f16_pair(word(w0, i), kB5, 0), fp8_decode_to_f16_pair(word(w1, i), kB5, 0),
                           fp8_decode_to_f16_pair(word(w0, i), kB5, 1), fp8_decode_to_f16_pair(word(w1, i), kB5, 1)};
    const uint32_t b[2] = {fp8_decode_to_f16_pair(word(x, i), kA5, 0), fp8_decode_to_f16_pair(word(x, i), kA5, 1)};
    MmaM16N8K16F32F16F16F32::fma(blk, a, b, blk);
  }
#endif
}

// The factor S_kb is multiplied by: 1 for fp8 mma, the conversion's 2^8 per e4m3 operand otherwise.
template <bool kA5, bool kB5>
__device__ __forceinline__ float unscale() {
#if HAL_PTX_SM89
  return 1.0f;
#else
  return fp8_decode_unscale(kA5, kB5);
#endif
}

template <int kMT, bool kA5, bool kB5>
__device__ __forceinline__ void fp8_decode_pass(const GemmFp8DecodeParams& p) {
#if HAL_PTX_SM80
  // Two scale blocks per iteration when few activation registers are live.
  constexpr int kBlocks = kMT <= 2 ? 2 : 1;
  constexpr int kSteps = kBlocks * kFp8DecodeStepsPerBlock;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int64_t u = static_cast<int64_t>(blockIdx.x) * kDecodeWarpsPerCta + warp;
  if (u >= p.units) return;  // whole warps only; the kernel has no barrier
  const decode::UnitRange range = decode::unit_range(u, p.n_tiles, p.splits, p.k, p.k_per_split);
  const DecodeUnit unit = range.unit;
  const int64_t n0 = range.n0, k_begin = range.k_begin, k_end = range.k_end;

  const int row = lane / 4, q = lane % 4, k_off = 16 * q;
  const decode::LaneStream<uint8_t> ls =
      decode::lane_stream(p, static_cast<const uint8_t*>(p.b), static_cast<const uint8_t*>(p.a), n0, row, k_off);
  // The 16 rows of the unit lie in one 128-row scale block of B.
  const float* sb_row = p.b_scales + (n0 / kFp8Block) * p.sb_n_stride;
  const L2Policy stream = l2_evict_first();

  float total[kMT][4];
#pragma unroll
  for (int j = 0; j < kMT; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) total[j][r] = 0.0f;

#pragma unroll 1
  for (int64_t k0 = k_begin; k0 < k_end; k0 += int64_t{kFp8Block} * kBlocks) {
    // k % 16 == 0 (the plan's condition): a lane's 16 K-values are all in or all out.
    Bits128 w0[kSteps], w1[kSteps], x[kSteps][kMT];
    decode::load_steps<kSteps, kMT, kFp8DecodeStepK>(w0, w1, x, ls, k0, k_end, stream);
#pragma unroll
    for (int bi = 0; bi < kBlocks; ++bi) {
      const int64_t kb_k0 = k0 + int64_t{kFp8Block} * bi;
      if (kb_k0 >= k_end) break;  // uniform over the warp
      const int64_t kb = kb_k0 / kFp8Block;
      const float sb = __ldg(sb_row + kb * p.sb_k_stride);
#pragma unroll
      for (int j = 0; j < kMT; ++j) {
        float blk[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int s2 = 0; s2 < kFp8DecodeStepsPerBlock; ++s2) {
          const int s = bi * kFp8DecodeStepsPerBlock + s2;
          step<kA5, kB5>(blk, w0[s], w1[s], x[s][j]);
        }
        // c[0..1]: rows m = 8j + 2q + e of weight row g, c[2..3] of row g + 8.
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int64_t m = int64_t{kDecodeCudaTileM} * j + 2 * q + e;
          const float sa = m < p.m ? __ldg(p.a_scales + m * p.sa_m_stride + kb * p.sa_k_stride) : 0.0f;
          const float sc = sa * sb;
          total[j][e] = fmaf(sc, blk[e] * unscale<kA5, kB5>(), total[j][e]);
          total[j][2 + e] = fmaf(sc, blk[2 + e] * unscale<kA5, kB5>(), total[j][2 + e]);
        }
      }
    }
  }

  decode::store_partial(p, total, lane, n0, unit.split, 0, 1);
#else
  (void)p;
#endif
}

}  // namespace

// Registers (ptxas's choice, no spill either way in the build report):
// sm_89+ with only the block size; sm_80 with one CTA per SM as the stated
// minimum, because with only the block size ptxas capped its M = 64 variant
// at 128 registers and spilled 8 bytes (asking 4 CTAs per SM made every
// sm_90a variant spill at 128, so the two builds get different bounds).
#if HAL_PTX_SM89
#define HAL_FP8_DECODE_BOUNDS __launch_bounds__(kThreads)
#else
#define HAL_FP8_DECODE_BOUNDS __launch_bounds__(kThreads, 1)
#endif

// One kernel per (A format, B format, largest M); each name is spelled out so
// that the launcher's lookup and cmake/embed_device_code.py's scan find it.
#define HAL_GEMM_FP8_DECODE(name, max_m, a5, b5) \
  extern "C" __global__ HAL_FP8_DECODE_BOUNDS void name(GemmFp8DecodeParams p) { \
    fp8_decode_pass<(max_m) / kDecodeCudaTileM, a5, b5>(p); \
  }
HAL_GEMM_FP8_DECODE(hal_gemm_fp8_decode_e4m3_e4m3_m8, 8, false, false)
HAL_GEMM_FP8_DECODE(hal_gemm_fp8_decode_e4m3_e4m3_m16, 16, false, false)
HAL_GEMM_FP8_DECODE(hal_gemm_fp8_decode_e4m3_e4m3_m32, 32, false, false)
HAL_GEMM_FP8_DECODE(hal_gemm_fp8_decode_e4m3_e4m3_m64, 64, false, false)
HAL_GEMM_FP8_DECODE(hal_gemm_fp8_decode_e4m3_e5m2_m8, 8, false, true)
HAL_GEMM_FP8_DECODE(hal_gemm_fp8_decode_e4m3_e5m2_m16, 16, false, true)
HAL_GEMM_FP8_DECODE(hal_gemm_fp8_decode_e4m3_e5m2_m32, 32, false, true)
HAL_GEMM_FP8_DECODE(hal_gemm_fp8_decode_e4m3_e5m2_m64, 64, false, true)
HAL_GEMM_FP8_DECODE(hal_gemm_fp8_decode_e5m2_e4m3_m8, 8, true, false)
HAL_GEMM_FP8_DECODE(hal_gemm_fp8_decode_e5m2_e4m3_m16, 16, true, false)
HAL_GEMM_FP8_DECODE(hal_gemm_fp8_decode_e5m2_e4m3_m32, 32, true, false)
HAL_GEMM_FP8_DECODE(hal_gemm_fp8_decode_e5m2_e4m3_m64, 64, true, false)
HAL_GEMM_FP8_DECODE(hal_gemm_fp8_decode_e5m2_e5m2_m8, 8, true, true)
HAL_GEMM_FP8_DECODE(hal_gemm_fp8_decode_e5m2_e5m2_m16, 16, true, true)
HAL_GEMM_FP8_DECODE(hal_gemm_fp8_decode_e5m2_e5m2_m32, 32, true, true)
HAL_GEMM_FP8_DECODE(hal_gemm_fp8_decode_e5m2_e5m2_m64, 64, true, true)
#undef HAL_GEMM_FP8_DECODE
#undef HAL_FP8_DECODE_BOUNDS
