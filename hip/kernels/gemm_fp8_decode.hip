// FP8 decode GEMM (gemm_fp8 with M <= 64) on CDNA matrix cores, the HIP
// twin of ptx/kernels/gemm_fp8_decode.cu: A = activations [m, k] with
// 1 x 128 scales, B = a weight [N, K] with 128 x 128 scales, OCP e4m3 /
// e5m2 in any pairing (gemm_fp8_decode_*) or FNUZ e4m3 / e5m2, MI300's own
// fp8, in any pairing (gemm_fp8_decode_fnuz_*), the weight streamed once
// with split K over whole 128-blocks (plan: backends/gpu/gemm_fp8_decode_plan.h,
// tile_m 16). Never run on a GPU (behind HAL_GPU_UNVERIFIED=1,
// backends/gpu/unverified.h).
//
// Pass 1 (gemm_fp8_decode_<a>_<b>_m<16|32|64>): each wave64 owns one unit
// (16 weight rows, one K split). Per 64 K-values lane l, q = l / 16, loads
// 16 bytes of weight row l % 16 (K-values 16q..16q+15, a non-temporal
// global_load_dwordx4: read once) and 16 bytes of activation row l % 16 of
// each 16-row M tile. The bytes are converted exactly to f16 in registers
// (kernel_params/gemm_fp8_decode.h fp8_decode_to_f16_pair, the same as the
// CUDA sm_80 form; FNUZ bytes fp8_fnuz_decode_to_f16_pair) and fed to
// v_mfma_f32_16x16x16f16 (gfx90a and gfx940 alike, both families: MI300's
// fp8 MFMA reads FNUZ only, and one f16 path keeps one accuracy model):
// instruction i (0..3) of a step takes word i of each chunk, A = {lo(w[i]),
// hi(w[i])} (4 halves: A[l%16][4q..4q+3] = K-values 16q + 4i + 0..3), B the
// same of the activation chunk. Each 128-block's sum starts from zero in the
// accumulators (8 instructions), then, blocks in ascending order, total =
// fma(sa[m, kb] * sb[n/128, kb], S_kb * unscale, total) in fp32; lane l's
// accumulator r is output (n0 + 4q + r, m0 + l % 16). The split's total goes
// to partial[split][m][n]; pass 2 is gemm_decode.hip's gemm_decode_reduce
// (splits in order, gemm_fp8's epilogue from GemmFp8Params::g).
//
// Accuracy model: f16 MFMA with fp32 accumulation after an exact conversion,
// the gfx90a path of gemm_fp8_mfma.hip, held to the suite's bound for hip
// (kFp8BlockSumMfmaAssumed, docs/accuracy.md).
#include <hip/hip_runtime.h>

#include "hip/mfma.h"
#include "hip/wave.h"
#include "kernel_params/fp8.h"
#include "kernel_params/gemm_decode.h"
#include "kernel_params/gemm_fp8_decode.h"

using namespace hal::hip;
using namespace hal::kernel_params;

namespace {

constexpr int kThreads = kDecodeWarpsPerCta * kWaveSize;
static_assert(kWaveSize == 64, "gemm_fp8_decode: the lane maps are for wave64");

typedef unsigned int U32x4 __attribute__((ext_vector_type(4)));
typedef unsigned int U32x2 __attribute__((ext_vector_type(2)));

// Word i of a chunk as the instruction's 4 halves {lo, hi}.
template <bool kFnuz>
__device__ __forceinline__ Half4 operand(U32x4 v, int i, bool e5m2) {
  const U32x2 h = kFnuz ? U32x2{fp8_fnuz_decode_to_f16_pair(v[i], e5m2, 0), fp8_fnuz_decode_to_f16_pair(v[i], e5m2, 1)}
                        : U32x2{fp8_decode_to_f16_pair(v[i], e5m2, 0), fp8_decode_to_f16_pair(v[i], e5m2, 1)};
  return __builtin_bit_cast(Half4, h);
}

template <int kMT, bool kA5, bool kB5, bool kFnuz>
__device__ __forceinline__ void fp8_decode_pass(const GemmFp8DecodeParams& p) {
  using Mma = Mfma_F32_16x16x16_F16;
  constexpr int kBlocks = kMT == 1 ? 2 : 1;  // scale blocks per iteration
  constexpr int kSteps = kBlocks * kFp8DecodeStepsPerBlock;
  const int lane = lane_id(), wave = wave_id();
  const int64_t u = static_cast<int64_t>(blockIdx.x) * kDecodeWarpsPerCta + wave;
  if (u >= p.units) return;  // whole waves only; the kernel has no barrier
  const DecodeUnit unit = decode_unit(u, p.n_tiles, p.splits);
  const int64_t n0 = unit.n_tile * kDecodeTileN;
  const int64_t k_begin = unit.split * p.k_per_split;
  const int64_t k_end = min(p.k, k_begin + p.k_per_split);

  const int row = lane % 16, q = lane / 16, k_off = 16 * q;
  const auto* b_base = static_cast<const uint8_t*>(p.b);
  const auto* a_base = static_cast<const uint8_t*>(p.a);
  const bool w_ok = n0 + row < p.n;
  const uint8_t* wp = b_base + (w_ok ? (n0 + row) * p.b_n_stride : 0) + k_off;
  const uint8_t* xp = a_base + (row < p.m ? row * p.a_m_stride : 0) + k_off;
  const int64_t x_tile = int64_t{kDecodeHipTileM} * p.a_m_stride;
  const int64_t x_rows = p.m - row;  // tile j's row exists when 16j < x_rows
  const float* sb_row = p.b_scales + (n0 / kFp8Block) * p.sb_n_stride;
  const float unscale = kFnuz ? fp8_fnuz_decode_unscale(kA5, kB5) : fp8_decode_unscale(kA5, kB5);
  const U32x4 zero = {0u, 0u, 0u, 0u};

  Float4 total[kMT];
#pragma unroll
  for (int j = 0; j < kMT; ++j) total[j] = Float4{0.0f, 0.0f, 0.0f, 0.0f};

#pragma unroll 1
  for (int64_t k0 = k_begin; k0 < k_end; k0 += int64_t{kFp8Block} * kBlocks) {
    U32x4 w[kSteps], x[kSteps][kMT];
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      const int64_t kk = k0 + int64_t{kFp8DecodeStepK} * s;
      // k % 16 == 0 (the plan's condition): a lane's 16 K-values are all in or all out.
      const bool k_ok = kk + k_off < k_end;
      w[s] = (k_ok && w_ok) ? __builtin_nontemporal_load(reinterpret_cast<const U32x4*>(wp + kk)) : zero;
#pragma unroll
      for (int j = 0; j < kMT; ++j)
        x[s][j] = (k_ok && int64_t{kDecodeHipTileM} * j < x_rows)
                      ? *reinterpret_cast<const U32x4*>(xp + j * x_tile + kk)
                      : zero;
    }
#pragma unroll
    for (int bi = 0; bi < kBlocks; ++bi) {
      const int64_t kb_k0 = k0 + int64_t{kFp8Block} * bi;
      if (kb_k0 >= k_end) break;  // uniform over the wave
      const int64_t kb = kb_k0 / kFp8Block;
      const float sb = sb_row[kb * p.sb_k_stride];
#pragma unroll
      for (int j = 0; j < kMT; ++j) {
        Float4 blk = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int s2 = 0; s2 < kFp8DecodeStepsPerBlock; ++s2) {
          const int s = bi * kFp8DecodeStepsPerBlock + s2;
#pragma unroll
          for (int i = 0; i < 4; ++i) blk = Mma::fma(operand<kFnuz>(w[s], i, kB5), operand<kFnuz>(x[s][j], i, kA5), blk);
        }
        const int64_t m = int64_t{kDecodeHipTileM} * j + row;  // every accumulator of the lane is row m
        const float sa = m < p.m ? p.a_scales[m * p.sa_m_stride + kb * p.sa_k_stride] : 0.0f;
        const float sc = sa * sb;
#pragma unroll
        for (int r = 0; r < 4; ++r) total[j][r] = fmaf(sc, blk[r] * unscale, total[j][r]);
      }
    }
  }

#pragma unroll
  for (int j = 0; j < kMT; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int64_t n = n0 + decode_hip_acc_n(lane, r);
      const int64_t m = int64_t{kDecodeHipTileM} * j + decode_hip_acc_m(lane);
      if (n < p.n && m < p.m) p.partial[decode_partial_index(unit.split, 0, m, n, 1, p.m, p.n)] = total[j][r];
    }
}

}  // namespace

// One kernel per (A format, B format, largest M); each name is spelled out so
// that the launcher's lookup and cmake/embed_device_code.py's scan find it.
#define HAL_GEMM_FP8_DECODE(name, max_m, a5, b5, fnuz) \
  extern "C" __global__ __launch_bounds__(kThreads) void name(GemmFp8DecodeParams p) { \
    fp8_decode_pass<(max_m) / kDecodeHipTileM, a5, b5, fnuz>(p); \
  }
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_e4m3_e4m3_m16, 16, false, false, false)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_e4m3_e4m3_m32, 32, false, false, false)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_e4m3_e4m3_m64, 64, false, false, false)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_e4m3_e5m2_m16, 16, false, true, false)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_e4m3_e5m2_m32, 32, false, true, false)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_e4m3_e5m2_m64, 64, false, true, false)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_e5m2_e4m3_m16, 16, true, false, false)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_e5m2_e4m3_m32, 32, true, false, false)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_e5m2_e4m3_m64, 64, true, false, false)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_e5m2_e5m2_m16, 16, true, true, false)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_e5m2_e5m2_m32, 32, true, true, false)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_e5m2_e5m2_m64, 64, true, true, false)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_fnuz_e4m3_e4m3_m16, 16, false, false, true)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_fnuz_e4m3_e4m3_m32, 32, false, false, true)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_fnuz_e4m3_e4m3_m64, 64, false, false, true)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_fnuz_e4m3_e5m2_m16, 16, false, true, true)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_fnuz_e4m3_e5m2_m32, 32, false, true, true)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_fnuz_e4m3_e5m2_m64, 64, false, true, true)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_fnuz_e5m2_e4m3_m16, 16, true, false, true)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_fnuz_e5m2_e4m3_m32, 32, true, false, true)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_fnuz_e5m2_e4m3_m64, 64, true, false, true)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_fnuz_e5m2_e5m2_m16, 16, true, true, true)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_fnuz_e5m2_e5m2_m32, 32, true, true, true)
HAL_GEMM_FP8_DECODE(gemm_fp8_decode_fnuz_e5m2_e5m2_m64, 64, true, true, true)
#undef HAL_GEMM_FP8_DECODE
