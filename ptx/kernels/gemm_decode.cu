// Decode GEMM (small M): C = epilogue(op(A) op(B)) with op(A) [m <= 64, k]
// the activations and op(B) a weight stored [N, K]; the weight is the
// traffic, so the kernel is built to stream it once at full bandwidth.
// Decomposition, lane maps and the two passes: kernel_params/gemm_decode.h;
// the split plan: backends/gpu/gemm_decode_plan.h. Never run on a GPU
// (behind HAL_GPU_UNVERIFIED=1, backends/gpu/unverified.h).
//
// Pass 1 (hal_gemm_decode_<f16|bf16>_m<8|16|32|64>): each warp owns one unit
// (16 weight rows, one K split, one batch). Per 32 K-values it issues two
// 16-byte ld.global.nc loads of weights per lane (rows g and g + 8, K-values
// 8q..8q+7, L2 evict-first: read once) and one 16-byte load of activations
// per 8-row M tile (cached: every warp of the SM reads the same rows), and
// two mma.sync m16n8k16 per M tile with the weights as the A operand (the
// instruction's 16 rows = 16 weight rows, no padding) and the activations as
// B (8 columns = 8 rows of M). No shared memory and no block barrier: the
// fragments come straight from the 16-byte loads, with K permuted inside the
// block the same way for both operands. kUnroll blocks are loaded before
// their mmas so several KiB per warp are in flight.
//
// Pass 2 (hal_gemm_decode_reduce): per output, the fp32 partials of the
// splits in order 0..splits-1, then the shared GEMM epilogue (gemm_store:
// alpha, beta*C, bias, activation, one rounding to C's dtype).
#include <stdint.h>

#include "kernel_params/gemm_decode.h"
#include "ptx/kernels/decode_stream.cuh"
#include "ptx/kernels/gemm_epilogue.cuh"
#include "ptx/ld_st.cuh"
#include "ptx/mma_sm80.cuh"

using namespace hal::ptx;
using namespace hal::kernel_params;

namespace {

constexpr int kThreads = 32 * kDecodeWarpsPerCta;

template <int kMT, class Mma>
__device__ __forceinline__ void decode_pass(const GemmDecodeParams& p) {
  // Fewer blocks in flight when each block carries more activation registers.
  constexpr int kUnroll = kMT <= 2 ? 4 : 2;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int64_t u = static_cast<int64_t>(blockIdx.x) * kDecodeWarpsPerCta + warp;
  if (u >= p.units) return;  // whole warps only; the kernel has no barrier
  const decode::UnitRange range = decode::unit_range(u, p.n_tiles, p.splits, p.k, p.k_per_split);
  const DecodeUnit unit = range.unit;
  const int64_t n0 = range.n0, k_begin = range.k_begin, k_end = range.k_end;

  const int row = decode_cuda_row(lane), k_off = decode_cuda_k_offset(lane);
  const uint16_t* b_base = static_cast<const uint16_t*>(p.b) + unit.z * p.b_batch_stride;
  const uint16_t* a_base = static_cast<const uint16_t*>(p.a) + unit.z * p.a_batch_stride;
  const bool w0_ok = n0 + row < p.n, w1_ok = n0 + row + 8 < p.n;
  const uint16_t* w0p = b_base + (w0_ok ? (n0 + row) * p.b_n_stride : 0) + k_off;
  const uint16_t* w1p = b_base + (w1_ok ? (n0 + row + 8) * p.b_n_stride : 0) + k_off;
  const uint16_t* xp = a_base + (row < p.m ? row * p.a_m_stride : 0) + k_off;
  // decode::lane_stream's pointers, written out: through the helper, nvcc
  // ordered this prologue differently and ptxas's sm_90a code for M <= 8 changed.
  const decode::LaneStream<uint16_t> ls{w0p, w1p, xp, int64_t{kDecodeCudaTileM} * p.a_m_stride, p.m - row,
                                        w0_ok, w1_ok, k_off};
  const L2Policy stream = l2_evict_first();

  float acc[kMT][4];
#pragma unroll
  for (int j = 0; j < kMT; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) acc[j][r] = 0.0f;

#pragma unroll 1
  for (int64_t k0 = k_begin; k0 < k_end; k0 += int64_t{kDecodeBlockK} * kUnroll) {
    // k % 8 == 0 (the plan's condition): a lane's 8 K-values are all in or all out.
    Bits128 w0[kUnroll], w1[kUnroll], x[kUnroll][kMT];
    decode::load_steps<kUnroll, kMT, kDecodeBlockK>(w0, w1, x, ls, k0, k_end, stream);
#pragma unroll
    for (int s = 0; s < kUnroll; ++s) {
      // Instruction 0 takes words 0, 1 of each chunk (K-values 0..3), instruction 1 words 2, 3:
      // a = {A[g][2q..], A[g+8][2q..], A[g][2q+8..], A[g+8][2q+8..]}, b = {B[2q..][g], B[2q+8..][g]}.
      const uint32_t a0[4] = {w0[s].x, w1[s].x, w0[s].y, w1[s].y};
      const uint32_t a1[4] = {w0[s].z, w1[s].z, w0[s].w, w1[s].w};
#pragma unroll
      for (int j = 0; j < kMT; ++j) {
        const uint32_t b0[2] = {x[s][j].x, x[s][j].y};
        const uint32_t b1[2] = {x[s][j].z, x[s][j].w};
        Mma::fma(acc[j], a0, b0, acc[j]);
        Mma::fma(acc[j], a1, b1, acc[j]);
      }
    }
  }

  decode::store_partial(p, acc, lane, n0, unit.split, unit.z, p.batch);
}

}  // namespace

#define HAL_GEMM_DECODE(dtype, mma, max_m)                                                                 \
  extern "C" __global__ void __launch_bounds__(kThreads) hal_gemm_decode_##dtype##_m##max_m(GemmDecodeParams p) { \
    decode_pass<(max_m) / kDecodeCudaTileM, mma>(p);                                                       \
  }
HAL_GEMM_DECODE(f16, MmaM16N8K16F32F16F16F32, 8)
HAL_GEMM_DECODE(f16, MmaM16N8K16F32F16F16F32, 16)
HAL_GEMM_DECODE(f16, MmaM16N8K16F32F16F16F32, 32)
HAL_GEMM_DECODE(f16, MmaM16N8K16F32F16F16F32, 64)
HAL_GEMM_DECODE(bf16, MmaM16N8K16F32Bf16Bf16F32, 8)
HAL_GEMM_DECODE(bf16, MmaM16N8K16F32Bf16Bf16F32, 16)
HAL_GEMM_DECODE(bf16, MmaM16N8K16F32Bf16Bf16F32, 32)
HAL_GEMM_DECODE(bf16, MmaM16N8K16F32Bf16Bf16F32, 64)
#undef HAL_GEMM_DECODE

extern "C" __global__ void __launch_bounds__(kDecodeReduceThreads) hal_gemm_decode_reduce(GemmDecodeReduceParams p) {
  const GemmParams& g = p.g;
  const int64_t outputs = g.batch * g.m * g.n;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < outputs;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t n = i % g.n, rest = i / g.n;
    const int64_t m = rest % g.m, z = rest / g.m;
    float v = p.partial[decode_partial_index(0, z, m, n, g.batch, g.m, g.n)];
    for (int64_t s = 1; s < p.splits; ++s) v += p.partial[decode_partial_index(s, z, m, n, g.batch, g.m, g.n)];
    gemm_store(g, z * g.c_batch_stride + m * g.c_m_stride + n * g.c_n_stride, n, v);
  }
}
