// Decode GEMM (small M) on CDNA matrix cores: C = epilogue(op(A) op(B)) with
// op(A) [m <= 64, k] the activations and op(B) a weight stored [N, K], the
// weight streamed once. Decomposition, lane maps and the two passes:
// kernel_params/gemm_decode.h; the split plan (shared with CUDA):
// backends/gpu/gemm_decode_plan.h. Never run on a GPU (behind
// HAL_GPU_UNVERIFIED=1, backends/gpu/unverified.h).
//
// Pass 1 (gemm_decode_<f16|bf16>_m<16|32|64>): each wave64 owns one unit (16
// weight rows, one K split, one batch). Per 32 K-values lane l loads 16 bytes
// of weight row l%16 (K-values 8(l/16)..+7, a non-temporal global_load_dwordx4:
// read once) and 16 bytes of activation row l%16 of each 16-row M tile, and
// issues two v_mfma_f32_16x16x16 per M tile (K-values 0..3 of its chunk, then
// 4..7) with the weights as the A operand and the activations as B: the
// fragments come straight from the loads, no LDS, no barrier.
//
// Pass 2 (gemm_decode_reduce): per output, the fp32 partials of the splits in
// order 0..splits-1, then the shared epilogue (one rounding to C's dtype).
#include <hip/hip_runtime.h>

#include "gemm_epilogue.h"
#include "hip/mfma.h"
#include "hip/wave.h"
#include "kernel_params/gemm_decode.h"

using namespace hal::hip;
using namespace hal::hip::kernels;
using namespace hal::kernel_params;

namespace {

constexpr int kThreads = kDecodeWarpsPerCta * kWaveSize;
static_assert(kWaveSize == 64, "gemm_decode: the lane maps of kernel_params/gemm_decode.h are for wave64");

typedef unsigned int U32x4 __attribute__((ext_vector_type(4)));
typedef unsigned int U32x2 __attribute__((ext_vector_type(2)));

template <int kDType> struct Mfma16;
template <> struct Mfma16<1> : Mfma_F32_16x16x16_F16 {};
template <> struct Mfma16<2> : Mfma_F32_16x16x16_BF16_1K {};

template <class Operand>
__device__ __forceinline__ Operand half_chunk(U32x4 v, int h) {  // h is a constant after unrolling
  return __builtin_bit_cast(Operand, h == 0 ? U32x2{v[0], v[1]} : U32x2{v[2], v[3]});
}

template <int kMT, int kDType>
__device__ __forceinline__ void decode_pass(const GemmDecodeParams& p) {
  using Mma = Mfma16<kDType>;
  constexpr int kUnroll = kMT == 1 ? 8 : (kMT == 2 ? 4 : 2);
  const int lane = lane_id(), wave = wave_id();
  const int64_t u = static_cast<int64_t>(blockIdx.x) * kDecodeWarpsPerCta + wave;
  if (u >= p.units) return;  // whole waves only; the kernel has no barrier
  const DecodeUnit unit = decode_unit(u, p.n_tiles, p.splits);
  const int64_t n0 = unit.n_tile * kDecodeTileN;
  const int64_t k_begin = unit.split * p.k_per_split;
  const int64_t k_end = min(p.k, k_begin + p.k_per_split);

  const int row = decode_hip_row(lane), k_off = decode_hip_k_offset(lane);
  const uint16_t* b_base = static_cast<const uint16_t*>(p.b) + unit.z * p.b_batch_stride;
  const uint16_t* a_base = static_cast<const uint16_t*>(p.a) + unit.z * p.a_batch_stride;
  const bool w_ok = n0 + row < p.n;
  const uint16_t* wp = b_base + (w_ok ? (n0 + row) * p.b_n_stride : 0) + k_off;
  const uint16_t* xp = a_base + (row < p.m ? row * p.a_m_stride : 0) + k_off;
  const int64_t x_tile = int64_t{kDecodeHipTileM} * p.a_m_stride;
  const int64_t x_rows = p.m - row;  // tile j's row exists when 16j < x_rows
  const U32x4 zero = {0u, 0u, 0u, 0u};

  Float4 acc[kMT];
#pragma unroll
  for (int j = 0; j < kMT; ++j) acc[j] = Float4{0.0f, 0.0f, 0.0f, 0.0f};

#pragma unroll 1
  for (int64_t k0 = k_begin; k0 < k_end; k0 += int64_t{kDecodeBlockK} * kUnroll) {
    U32x4 w[kUnroll], x[kUnroll][kMT];
#pragma unroll
    for (int s = 0; s < kUnroll; ++s) {
      const int64_t kk = k0 + int64_t{kDecodeBlockK} * s;
      // k % 8 == 0 (the plan's condition): a lane's 8 K-values are all in or all out.
      const bool k_ok = kk + k_off < k_end;
      w[s] = (k_ok && w_ok) ? __builtin_nontemporal_load(reinterpret_cast<const U32x4*>(wp + kk)) : zero;
#pragma unroll
      for (int j = 0; j < kMT; ++j)
        x[s][j] = (k_ok && int64_t{kDecodeHipTileM} * j < x_rows)
                      ? *reinterpret_cast<const U32x4*>(xp + j * x_tile + kk)
                      : zero;
    }
#pragma unroll
    for (int s = 0; s < kUnroll; ++s)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const typename Mma::A a = half_chunk<typename Mma::A>(w[s], h);
#pragma unroll
        for (int j = 0; j < kMT; ++j) acc[j] = Mma::fma(a, half_chunk<typename Mma::B>(x[s][j], h), acc[j]);
      }
  }

#pragma unroll
  for (int j = 0; j < kMT; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int64_t n = n0 + decode_hip_acc_n(lane, r);
      const int64_t m = int64_t{kDecodeHipTileM} * j + decode_hip_acc_m(lane);
      if (n < p.n && m < p.m) p.partial[decode_partial_index(unit.split, unit.z, m, n, p.batch, p.m, p.n)] = acc[j][r];
    }
}

}  // namespace

#define HAL_GEMM_DECODE(dtype, code, max_m)                                                        \
  extern "C" __global__ __launch_bounds__(kThreads) void gemm_decode_##dtype##_m##max_m(GemmDecodeParams p) { \
    decode_pass<(max_m) / kDecodeHipTileM, code>(p);                                               \
  }
HAL_GEMM_DECODE(f16, 1, 16)
HAL_GEMM_DECODE(f16, 1, 32)
HAL_GEMM_DECODE(f16, 1, 64)
HAL_GEMM_DECODE(bf16, 2, 16)
HAL_GEMM_DECODE(bf16, 2, 32)
HAL_GEMM_DECODE(bf16, 2, 64)
#undef HAL_GEMM_DECODE

extern "C" __global__ __launch_bounds__(kDecodeReduceThreads) void gemm_decode_reduce(GemmDecodeReduceParams p) {
  const GemmParams& g = p.g;
  const int64_t outputs = g.batch * g.m * g.n;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < outputs;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t n = i % g.n, rest = i / g.n;
    const int64_t m = rest % g.m, z = rest / g.m;
    float v = p.partial[decode_partial_index(0, z, m, n, g.batch, g.m, g.n)];
    for (int64_t s = 1; s < p.splits; ++s) v += p.partial[decode_partial_index(s, z, m, n, g.batch, g.m, g.n)];
    gemm_store(g, z, m, n, v);
  }
}
