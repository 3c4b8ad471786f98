// Attention backward on CDNA matrix cores (FlashAttention-2 style), f16 and
// bf16, d == dv in {64, 128}: the design of ptx/kernels/attention_backward_mma.cu
// (P recomputed from q, k and lse; D from hal_attention_bwd_delta_<t>; dk/dv
// and dq two kernels, each owning what it writes, no atomics; P and dS split
// into 16-bit parts) on v_mfma 32x32x8 with the layouts of hip/mfma.h:
//   A (32x8):  lane l holds A[l%32][4*(l/32) + 0..3]
//   B (8x32):  lane l holds B[4*(l/32) + 0..3][l%32]
//   D (32x32): lane l, reg r holds D[8*(r/4) + 4*(l/32) + r%4][l%32]
// Registers 4j..4j+3 of a D are exactly the B operand of k-step j of a
// product whose K index is D's row, so P and dS feed the next MFMA without a
// shuffle (as P in attention_flash.hip).
//
//   dkdv: a wave owns 32 keys, one per lane column; K and V rows of its key
//         are B operands held in registers for the whole kernel. Per query
//         tile of 32 (staged in LDS row-major and transposed):
//           S = Q K^T, dP = dY V^T      (32 queries x 32 keys; A = Q / dY rows)
//           P = exp2(S c - lse'), dS = P (dP - D)
//           dV^T += dY^T P, dK^T += Q^T dS  (A = dY^T / Q^T from the
//                                            transposed tiles; B = P / dS)
//   dq:   a wave owns 32 queries; Q and dY rows of its query are B operands
//         in registers. Per key tile of 32 (K row-major and transposed, V):
//           S^T = K Q^T, dP^T = V dY^T (32 keys x 32 queries)
//           P^T, dS^T (lse and D are one scalar per lane: its query)
//           dQ^T += K^T dS^T
// Each output element is one wave's chain of MFMAs in a fixed order: the same
// bits for any grid. Masked pairs get P = dS = 0 without their exp. Tiles are
// single-buffered (no prefetch yet); never run, never timed.
#include <hip/hip_runtime.h>
#include <math.h>
#include <stdint.h>

#include "attention_backward_geometry.h"
#include "hip/float_convert.h"
#include "hip/mfma.h"
#include "hip/wave.h"
#include "kernel_params/attention_backward.h"

using namespace hal::hip;
using namespace hal::hip::kernels;
using namespace hal::kernel_params;

namespace {

typedef unsigned int U32x4 __attribute__((ext_vector_type(4)));
typedef unsigned int U32x2 __attribute__((ext_vector_type(2)));
typedef unsigned short U16x4 __attribute__((ext_vector_type(4)));

constexpr float kLog2e = 1.4426950408889634f;

struct F16Format {
  static constexpr int kDType = 1;
  static constexpr int kParts = 2;  // 22 significant bits
  static __device__ __forceinline__ uint16_t to16(float x) {
    if (__builtin_isnan(x)) return 0x7FFF;
    return __builtin_bit_cast(uint16_t, static_cast<_Float16>(x));
  }
  static __device__ __forceinline__ float from16(uint16_t h) { return static_cast<float>(__builtin_bit_cast(_Float16, h)); }
};

struct Bf16Format {
  static constexpr int kDType = 2;
  static constexpr int kParts = 3;  // 24 significant bits
  static __device__ __forceinline__ uint16_t to16(float x) { return f32_to_bf16_fast(x); }
  static __device__ __forceinline__ float from16(uint16_t h) { return bf16_to_f32(h); }
};

template <int D>
struct BwdConfig {
  static constexpr int kT = kMfmaBwdTile;
  static constexpr int kRow = D + kMfmaBwdLdsPad;     // row-major tile row, halfs
  static constexpr int kTRow = kT + kMfmaBwdLdsPad;   // transposed tile row, halfs
  static constexpr int kSteps = D / 8;                // k-steps over the head dim
  static constexpr int kBlocks = D / 32;              // 32-channel blocks of the accumulators
  static constexpr int kChunks = D / 8;               // 16-byte chunks per row
  static_assert(D == 64 || D == 128, "attention_backward_mfma: head dims 64 and 128");
  static_assert((kRow * 2) % 8 == 0 && (kTRow * 2) % 8 == 0, "attention_backward_mfma: LDS rows keep 8-byte reads aligned");
};

// Rows [row0, row0 + 32) of one head (row stride `stride`, zero past `rows`)
// into a row-major tile and, when `trans` is given, its transpose [D][32].
template <int D>
__device__ __forceinline__ void stage_rows(const uint16_t* g, int64_t stride, int64_t row0, int64_t rows, uint16_t* tile,
                                           uint16_t* trans) {
  using Cfg = BwdConfig<D>;
  const U32x4 zero = {0u, 0u, 0u, 0u};
  for (int idx = static_cast<int>(threadIdx.x); idx < Cfg::kT * Cfg::kChunks; idx += kMfmaBwdThreads) {
    const int r = idx / Cfg::kChunks, c = idx % Cfg::kChunks;
    const int64_t row = row0 + r;
    const U32x4 v = row < rows ? *reinterpret_cast<const U32x4*>(g + row * stride + 8 * c) : zero;
    U32x2* dst = reinterpret_cast<U32x2*>(tile + r * Cfg::kRow + 8 * c);
    dst[0] = U32x2{v[0], v[1]};
    dst[1] = U32x2{v[2], v[3]};
    if (trans != nullptr) {
#pragma unroll
      for (int e = 0; e < 8; ++e) trans[(8 * c + e) * Cfg::kTRow + r] = static_cast<uint16_t>(v[e / 2] >> (16 * (e % 2)));
    }
  }
}

// The B operands of one row (this lane's key or query): row[8s + 4*half + 0..3].
template <class Mma, int D>
__device__ __forceinline__ void row_operands(const uint16_t* row, bool valid, int half, typename Mma::B (&f)[D / 8]) {
#pragma unroll
  for (int s = 0; s < D / 8; ++s) {
    const U32x2 v = valid ? *reinterpret_cast<const U32x2*>(row + 8 * s + 4 * half) : U32x2{0u, 0u};
    f[s] = __builtin_bit_cast(typename Mma::B, v);
  }
}

// out = A B over the head dim: A rows from a row-major LDS tile (row `col`),
// B the row operands of this lane.
template <class Mma, int D>
__device__ __forceinline__ typename Mma::D product(const uint16_t* tile, int col, int half,
                                                   const typename Mma::B (&b)[D / 8]) {
  using Cfg = BwdConfig<D>;
  typename Mma::D out;
#pragma unroll
  for (int r = 0; r < 16; ++r) out[r] = 0.0f;
#pragma unroll
  for (int s = 0; s < Cfg::kSteps; ++s) {
    const auto a = *reinterpret_cast<const typename Mma::A*>(tile + col * Cfg::kRow + 8 * s + 4 * half);
    out = Mma::fma(a, b[s], out);
  }
  return out;
}

// acc[c] += T^T X for the 32-channel blocks c: X (32 x 32, K = X's rows) in
// D layout, split into 16-bit parts; A = rows of a transposed [D][32] tile.
template <class Fmt, class Mma, int D>
__device__ __forceinline__ void accumulate(typename Mma::D (&acc)[D / 32], const typename Mma::D& x, const uint16_t* trans,
                                           int col, int half) {
  using Cfg = BwdConfig<D>;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    typename Mma::B xb[Fmt::kParts];
    float rest[4] = {x[4 * j], x[4 * j + 1], x[4 * j + 2], x[4 * j + 3]};
#pragma unroll
    for (int part = 0; part < Fmt::kParts; ++part) {
      U16x4 bits;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        bits[e] = Fmt::to16(rest[e]);
        rest[e] -= Fmt::from16(bits[e]);
      }
      xb[part] = __builtin_bit_cast(typename Mma::B, bits);
    }
#pragma unroll
    for (int c = 0; c < Cfg::kBlocks; ++c) {
      const auto a = *reinterpret_cast<const typename Mma::A*>(trans + (32 * c + col) * Cfg::kTRow + 8 * j + 4 * half);
#pragma unroll
      for (int part = 0; part < Fmt::kParts; ++part) acc[c] = Mma::fma(a, xb[part], acc[c]);
    }
  }
}

// Row `row` (this lane's column) of a transposed accumulator acc[c] (channel
// 32c + 8(r/4) + 4 half + r%4) times `mul`: 8-byte stores.
template <class Fmt, class Mma, int D>
__device__ __forceinline__ void store_row(uint16_t* row, const typename Mma::D (&acc)[D / 32], int half, float mul) {
#pragma unroll
  for (int c = 0; c < D / 32; ++c)
#pragma unroll
    for (int g = 0; g < 4; ++g) {
      U16x4 bits;
#pragma unroll
      for (int e = 0; e < 4; ++e) bits[e] = Fmt::to16(acc[c][4 * g + e] * mul);
      *reinterpret_cast<U32x2*>(row + 32 * c + 8 * g + 4 * half) = __builtin_bit_cast(U32x2, bits);
    }
}

template <class Fmt, int D>
__device__ __forceinline__ void bwd_dkdv(const AttentionBackwardParams& p) {
  using Cfg = BwdConfig<D>;
  using Mma = Mfma32x32x8<Fmt::kDType>;
  constexpr int BQ = Cfg::kT;
  __shared__ __attribute__((aligned(16))) uint16_t q_lds[BQ * Cfg::kRow];
  __shared__ __attribute__((aligned(16))) uint16_t qt_lds[D * Cfg::kTRow];
  __shared__ __attribute__((aligned(16))) uint16_t dy_lds[BQ * Cfg::kRow];
  __shared__ __attribute__((aligned(16))) uint16_t dyt_lds[D * Cfg::kTRow];
  __shared__ float lse_lds[BQ], delta_lds[BQ];

  const int lane = lane_id(), wave = wave_id();
  const int col = lane % 32, half = lane / 32;
  const int64_t j0 = static_cast<int64_t>(blockIdx.x) * kMfmaBwdBlockKeys;
  const int64_t kvh = blockIdx.y, b = blockIdx.z;
  const int64_t group = p.hq / p.hkv, shift = p.sk - p.sq;
  const float scale_log2 = p.scale * kLog2e;
  const int64_t wj0 = j0 + 32 * wave, key = wj0 + col;  // this lane's key

  const uint16_t* kg = static_cast<const uint16_t*>(p.k) + b * p.k_stride[0] + kvh * p.k_stride[2];
  const uint16_t* vg = static_cast<const uint16_t*>(p.v) + b * p.v_stride[0] + kvh * p.v_stride[2];
  typename Mma::B kf[Cfg::kSteps], vf[Cfg::kSteps];
  row_operands<Mma, D>(kg + key * p.k_stride[1], key < p.sk, half, kf);
  row_operands<Mma, D>(vg + key * p.v_stride[1], key < p.sk, half, vf);

  typename Mma::D dk[Cfg::kBlocks], dv[Cfg::kBlocks];
#pragma unroll
  for (int c = 0; c < Cfg::kBlocks; ++c)
#pragma unroll
    for (int r = 0; r < 16; ++r) dk[c][r] = dv[c][r] = 0.0f;

  const int64_t i_begin = (first_query_of_key(p, j0) / BQ) * BQ;
  for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h) {
    const uint16_t* qg = static_cast<const uint16_t*>(p.q) + b * p.q_stride[0] + h * p.q_stride[2];
    const uint16_t* dyg = static_cast<const uint16_t*>(p.dy) + b * p.dy_stride[0] + h * p.dy_stride[2];
    for (int64_t i0 = i_begin; i0 < p.sq; i0 += BQ) {
      __syncthreads();  // every wave is done with the previous tile
      stage_rows<D>(qg, p.q_stride[1], i0, p.sq, q_lds, qt_lds);
      stage_rows<D>(dyg, p.dy_stride[1], i0, p.sq, dy_lds, dyt_lds);
      for (int r = static_cast<int>(threadIdx.x); r < BQ; r += kMfmaBwdThreads) {
        const int64_t i = i0 + r;
        const bool in = i < p.sq;
        lse_lds[r] = in ? p.lse[b * p.lse_stride[0] + i * p.lse_stride[1] + h * p.lse_stride[2]] * kLog2e : 0.0f;
        delta_lds[r] = in ? p.delta[(b * p.sq + i) * p.hq + h] : 0.0f;
      }
      __syncthreads();
      // Wave-uniform: a tile whose every query is before this wave's first
      // visible diagonal, or a wave past sk, adds only zeros.
      if (wj0 >= p.sk || (p.causal && wj0 > i0 + BQ - 1 + shift)) continue;

      auto s = product<Mma, D>(q_lds, col, half, kf);    // S = Q K^T
      auto dp = product<Mma, D>(dy_lds, col, half, vf);  // dP = dY V^T
      // Register r: query i0 + 8(r/4) + 4 half + r%4, key `key`.
#pragma unroll
      for (int r = 0; r < 16; ++r) {
        const int qrow = 8 * (r / 4) + 4 * half + r % 4;
        const int64_t i = i0 + qrow;
        const bool masked = i >= p.sq || key >= p.sk || (p.causal && key > i + shift);
        const float pv = masked ? 0.0f : exp2f(s[r] * scale_log2 - lse_lds[qrow]);
        dp[r] = masked ? 0.0f : pv * (dp[r] - delta_lds[qrow]);
        s[r] = pv;
      }
      accumulate<Fmt, Mma, D>(dv, s, dyt_lds, col, half);  // dV^T += dY^T P
      accumulate<Fmt, Mma, D>(dk, dp, qt_lds, col, half);  // dK^T += Q^T dS
    }
  }
  if (key >= p.sk) return;
  uint16_t* dkr = static_cast<uint16_t*>(p.dk) + b * p.dk_stride[0] + key * p.dk_stride[1] + kvh * p.dk_stride[2];
  uint16_t* dvr = static_cast<uint16_t*>(p.dv) + b * p.dv_stride[0] + key * p.dv_stride[1] + kvh * p.dv_stride[2];
  store_row<Fmt, Mma, D>(dkr, dk, half, p.scale);
  store_row<Fmt, Mma, D>(dvr, dv, half, 1.0f);
}

template <class Fmt, int D>
__device__ __forceinline__ void bwd_dq(const AttentionBackwardParams& p) {
  using Cfg = BwdConfig<D>;
  using Mma = Mfma32x32x8<Fmt::kDType>;
  constexpr int BK = Cfg::kT;
  __shared__ __attribute__((aligned(16))) uint16_t k_lds[BK * Cfg::kRow];
  __shared__ __attribute__((aligned(16))) uint16_t kt_lds[D * Cfg::kTRow];
  __shared__ __attribute__((aligned(16))) uint16_t v_lds[BK * Cfg::kRow];

  const int lane = lane_id(), wave = wave_id();
  const int col = lane % 32, half = lane / 32;
  const int64_t m0 = static_cast<int64_t>(blockIdx.x) * kMfmaBwdBlockQueries;
  const int64_t h = blockIdx.y, b = blockIdx.z;
  const int64_t kvh = h / (p.hq / p.hkv);
  const float scale_log2 = p.scale * kLog2e;
  const int64_t wq0 = m0 + 32 * wave, qi = wq0 + col;  // this lane's query
  const bool q_in = qi < p.sq;

  const uint16_t* qg = static_cast<const uint16_t*>(p.q) + b * p.q_stride[0] + h * p.q_stride[2];
  const uint16_t* dyg = static_cast<const uint16_t*>(p.dy) + b * p.dy_stride[0] + h * p.dy_stride[2];
  const uint16_t* kg = static_cast<const uint16_t*>(p.k) + b * p.k_stride[0] + kvh * p.k_stride[2];
  const uint16_t* vg = static_cast<const uint16_t*>(p.v) + b * p.v_stride[0] + kvh * p.v_stride[2];
  typename Mma::B qf[Cfg::kSteps], dyf[Cfg::kSteps];
  row_operands<Mma, D>(qg + qi * p.q_stride[1], q_in, half, qf);
  row_operands<Mma, D>(dyg + qi * p.dy_stride[1], q_in, half, dyf);
  const float lse = q_in ? p.lse[b * p.lse_stride[0] + qi * p.lse_stride[1] + h * p.lse_stride[2]] * kLog2e : 0.0f;
  const float delta = q_in ? p.delta[(b * p.sq + qi) * p.hq + h] : 0.0f;
  const int64_t keys = q_in ? keys_of_query(p, qi) : 0;
  // Keys the workgroup sees, and this wave.
  const int64_t kv_end = keys_of_query(p, m0 + kMfmaBwdBlockQueries - 1 < p.sq ? m0 + kMfmaBwdBlockQueries - 1 : p.sq - 1);
  const int64_t wave_end =
      wq0 < p.sq ? keys_of_query(p, wq0 + 31 < p.sq ? wq0 + 31 : p.sq - 1) : 0;

  typename Mma::D dq[Cfg::kBlocks];
#pragma unroll
  for (int c = 0; c < Cfg::kBlocks; ++c)
#pragma unroll
    for (int r = 0; r < 16; ++r) dq[c][r] = 0.0f;

  for (int64_t n0 = 0; n0 < kv_end; n0 += BK) {
    __syncthreads();
    stage_rows<D>(kg, p.k_stride[1], n0, kv_end, k_lds, kt_lds);
    stage_rows<D>(vg, p.v_stride[1], n0, kv_end, v_lds, nullptr);
    __syncthreads();
    if (n0 >= wave_end) continue;  // wave-uniform: no query of this wave sees the tile

    auto s = product<Mma, D>(k_lds, col, half, qf);    // S^T = K Q^T
    auto dp = product<Mma, D>(v_lds, col, half, dyf);  // dP^T = V dY^T
    // Register r: key n0 + 8(r/4) + 4 half + r%4, query qi.
#pragma unroll
    for (int r = 0; r < 16; ++r) {
      const int64_t j = n0 + 8 * (r / 4) + 4 * half + r % 4;
      const bool masked = j >= keys;
      const float pv = masked ? 0.0f : exp2f(s[r] * scale_log2 - lse);
      dp[r] = masked ? 0.0f : pv * (dp[r] - delta);
    }
    accumulate<Fmt, Mma, D>(dq, dp, kt_lds, col, half);  // dQ^T += K^T dS^T
  }
  if (!q_in) return;
  uint16_t* dqr = static_cast<uint16_t*>(p.dq) + b * p.dq_stride[0] + qi * p.dq_stride[1] + h * p.dq_stride[2];
  store_row<Fmt, Mma, D>(dqr, dq, half, p.scale);
}

}  // namespace

// One macro per kernel, its name spelled out: cmake/embed_device_code.py
// finds kernel names in the macro's name argument.
#define HAL_BWD_KERNEL(name, fn, T, D) \
  extern "C" __global__ __launch_bounds__(kMfmaBwdThreads) void name(AttentionBackwardParams p) { fn<T, D>(p); }
HAL_BWD_KERNEL(hal_attention_bwd_dkdv_mfma_f16_d64, bwd_dkdv, F16Format, 64)
HAL_BWD_KERNEL(hal_attention_bwd_dkdv_mfma_f16_d128, bwd_dkdv, F16Format, 128)
HAL_BWD_KERNEL(hal_attention_bwd_dkdv_mfma_bf16_d64, bwd_dkdv, Bf16Format, 64)
HAL_BWD_KERNEL(hal_attention_bwd_dkdv_mfma_bf16_d128, bwd_dkdv, Bf16Format, 128)
HAL_BWD_KERNEL(hal_attention_bwd_dq_mfma_f16_d64, bwd_dq, F16Format, 64)
HAL_BWD_KERNEL(hal_attention_bwd_dq_mfma_f16_d128, bwd_dq, F16Format, 128)
HAL_BWD_KERNEL(hal_attention_bwd_dq_mfma_bf16_d64, bwd_dq, Bf16Format, 64)
HAL_BWD_KERNEL(hal_attention_bwd_dq_mfma_bf16_d128, bwd_dq, Bf16Format, 128)
#undef HAL_BWD_KERNEL
