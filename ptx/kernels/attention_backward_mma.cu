// Tensor-core attention backward (FlashAttention-2 style) for f16/bf16, d ==
// dv in {64, 128}, on mma.sync m16n8k16 with fp32 accumulators. P is
// recomputed per tile from q, k and the forward's lse (P = exp2(scale log2(e)
// s - lse log2(e))), D = dy . y comes from hal_attention_bwd_delta_<t>
// (attention_backward_general.cu), and the two gradients are two kernels, each
// owning what it writes (no atomics; the CPU's design, cpu_ref/attention_backward.cpp):
//
//   dkdv: a block owns kBwdBlockKeys keys of one kv head (16 per warp; at
//         d = 128 two warps per 16 keys, one for dV, one for dK). Per
//         query head of the kv head (ascending) and query tile (ascending):
//           S^T = K Q^T, dP^T = V dY^T   (A = K / V rows from shared memory,
//                                         B = Q / dY rows: ldmatrix)
//           P^T = exp2(S^T c - lse'), dS^T = P^T (dP^T - D)   in registers
//           dV += P^T dY, dK += dS^T Q   (A = P^T / dS^T straight from the
//                                         accumulators: the C layout of
//                                         m16n8k16 is its A layout;
//                                         B = dY / Q via ldmatrix.trans)
//         then dK *= scale.
//   dq:   a block owns kBwdBlockQueries queries of one head (16 per warp);
//         per key tile (ascending): S = Q K^T, dP = dY V^T, P, dS, then
//         dQ += dS K (B = K via ldmatrix.trans); dQ *= scale.
//
// Each output element is one warp's chain of mma's in a fixed order, so the
// bits do not depend on the grid or the number of SMs. Masked (query, key)
// pairs get P = dS = 0 without reading their exp (a NaN or inf in a masked
// key reaches nothing); tiles are zero-filled past sq / sk.
//
// Accuracy: as the forward (attention_flash.cu), a single 16-bit P or dS
// would add a relative error of 2^-9 (bf16) per term, so both are split into
// 16-bit parts (x = hi + mid [+ lo]), each multiplied with exact 16-bit
// operands: 3 parts for bf16 (24 bits), 2 for f16 (22 bits). f16's range
// bounds dS: |dP - D| beyond 65504 overflows its f16 parts (the CUDA-core
// kernel has no such limit; the plan does not detect it).
//
// Simple schedule: tiles are loaded with cp.async and waited for before use
// (no double buffering yet); never timed.
#include <math.h>
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernel_params/attention_backward.h"
#include "ptx/cp_async.cuh"
#include "ptx/kernels/attention_backward_geometry.h"
#include "ptx/kernels/attention_mma_tile.cuh"
#include "ptx/ldmatrix.cuh"
#include "ptx/mma_sm80.cuh"

using namespace hal::ptx;
using namespace hal::kernel_params;

namespace {

constexpr float kLog2e = 1.4426950408889634f;

using attention_tile::Bf16Traits;
using attention_tile::F16Traits;
using attention_tile::swz;

// cp.async of rows [row0, row0 + Rows) into a swizzled tile; rows at or past
// `rows` are zero-filled.
template <int D, int Rows, int Threads>
__device__ __forceinline__ void load_tile(uint16_t* tile, const uint16_t* base, int64_t row_stride, int64_t row0,
                                          int64_t rows) {
  constexpr int kChunks = D / 8;
  for (int idx = threadIdx.x; idx < Rows * kChunks; idx += Threads) {
    const int r = idx / kChunks, c = idx % kChunks;
    const bool in = row0 + r < rows;
    const uint16_t* src = in ? base + (row0 + r) * row_stride + c * 8 : base;
    CpAsyncCg16::copy(tile + swz<D>(r, c), src, in ? 16u : 0u);
  }
}

// A fragment (16 rows from `row0`, k-step kk) of a row-major [rows][D] tile.
template <int D>
__device__ __forceinline__ void load_a(const uint16_t* tile, int row0, int kk, uint32_t (&a)[4]) {
  const int lane = threadIdx.x % 32;
  LdMatrixX4::copy(tile + swz<D>(row0 + (lane % 8) + ((lane / 8) % 2) * 8, kk * 2 + lane / 16), a);
}

// B fragments of n-columns [n0, n0 + 16) (two n8 tiles), k-step kk, from a
// [n][D] tile whose rows are the n index (K-contiguous: S = A B^T operands).
template <int D>
__device__ __forceinline__ void load_b_rows(const uint16_t* tile, int n0, int kk, uint32_t (&b0)[2], uint32_t (&b1)[2]) {
  const int lane = threadIdx.x % 32;
  uint32_t f[4];
  LdMatrixX4::copy(tile + swz<D>(n0 + (lane % 8) + (lane / 16) * 8, kk * 2 + (lane / 8) % 2), f);
  b0[0] = f[0], b0[1] = f[1], b1[0] = f[2], b1[1] = f[3];
}

// B fragments of k-rows [k0, k0 + 16) and columns 16 dp .. 16 dp + 15 (two
// n8 tiles) from a [k][D] tile (N-contiguous: the P V operand), transposed
// by ldmatrix.
template <int D>
__device__ __forceinline__ void load_b_trans(const uint16_t* tile, int k0, int dp, uint32_t (&b0)[2], uint32_t (&b1)[2]) {
  const int lane = threadIdx.x % 32;
  uint32_t f[4];
  LdMatrixX4Trans::copy(tile + swz<D>(k0 + (lane % 8) + ((lane / 8) % 2) * 8, dp * 2 + lane / 16), f);
  b0[0] = f[0], b0[1] = f[1], b1[0] = f[2], b1[1] = f[3];
}

// acc[16 x D] += X[16 x 16 kj-step] B, X given as the C accumulators x[2kj],
// x[2kj + 1] of an earlier product, split into T::kParts 16-bit parts.
template <class T, int D>
__device__ __forceinline__ void accumulate_xb(float (&acc)[D / 8][4], const float (&x0)[4], const float (&x1)[4],
                                              const uint16_t* b_tile, int k0) {
  using Mma = typename T::Mma;
  uint32_t xa[T::kParts][4];
  float rest[8] = {x0[0], x0[1], x0[2], x0[3], x1[0], x1[1], x1[2], x1[3]};
#pragma unroll
  for (int part = 0; part < T::kParts; ++part)
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      xa[part][w] = T::pack(rest[2 * w], rest[2 * w + 1]);
      const float2 back = T::unpack(xa[part][w]);
      rest[2 * w] -= back.x, rest[2 * w + 1] -= back.y;
    }
#pragma unroll
  for (int dp = 0; dp < D / 16; ++dp) {
    uint32_t b0[2], b1[2];
    load_b_trans<D>(b_tile, k0, dp, b0, b1);
#pragma unroll
    for (int part = 0; part < T::kParts; ++part) {
      Mma::fma(acc[2 * dp], xa[part], b0, acc[2 * dp]);
      Mma::fma(acc[2 * dp + 1], xa[part], b1, acc[2 * dp + 1]);
    }
  }
}

// out[16 x N] = A[16 x D] B^T for A rows a_row0.. of a_tile and the N rows of
// b_tile (N a multiple of 16).
template <class T, int D, int N>
__device__ __forceinline__ void product_abt(float (&out)[N / 8][4], const uint16_t* a_tile, int a_row0,
                                            const uint16_t* b_tile) {
  using Mma = typename T::Mma;
#pragma unroll
  for (int n = 0; n < N / 8; ++n) out[n][0] = out[n][1] = out[n][2] = out[n][3] = 0.0f;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    uint32_t a[4];
    load_a<D>(a_tile, a_row0, kk, a);
#pragma unroll
    for (int np = 0; np < N / 16; ++np) {
      uint32_t b0[2], b1[2];
      load_b_rows<D>(b_tile, np * 16, kk, b0, b1);
      Mma::fma(out[2 * np], a, b0, out[2 * np]);
      Mma::fma(out[2 * np + 1], a, b1, out[2 * np + 1]);
    }
  }
}

// Stores a warp's 16 x D accumulator (times `mul`) to rows row0 + g, + 8 of a
// [rows][D] 16-bit output with row stride `stride`; rows >= `rows` are skipped.
template <class T, int D>
__device__ __forceinline__ void store_rows(uint16_t* base, int64_t stride, int64_t row0, int64_t rows,
                                           const float (&acc)[D / 8][4], float mul) {
  const int lane = threadIdx.x % 32, g = lane / 4, qd = lane % 4;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t row = row0 + g + 8 * r;
    if (row >= rows) continue;
    uint16_t* out = base + row * stride;
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
      *reinterpret_cast<uint32_t*>(out + n * 8 + 2 * qd) = T::pack(acc[n][2 * r] * mul, acc[n][2 * r + 1] * mul);
  }
}

// kSplit (d = 128): warps 0-3 own dV, warps 4-7 dK of the same key slices
// (attention_backward_geometry.h); otherwise each warp owns both.
template <class T, int D>
__device__ __forceinline__ void bwd_dkdv(const AttentionBackwardParams& p) {
  constexpr int BK = kBwdBlockKeys, BQ = bwd_dkdv_tile(D), NQ = BQ / 8;
  constexpr int kWarps = bwd_dkdv_warps(D), kThreads = 32 * kWarps;
  constexpr bool kSplit = kWarps != kBwdWarps;
  extern __shared__ __align__(16) uint16_t smem[];
  uint16_t* sk = smem;
  uint16_t* sv = sk + BK * D;
  uint16_t* sq = sv + BK * D;
  uint16_t* sdy = sq + BQ * D;
  float* s_lse = reinterpret_cast<float*>(sdy + BQ * D);
  float* s_delta = s_lse + BQ;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, qd = lane % 4;
  const int slice = warp % kBwdWarps;           // this warp's 16 keys: slice * 16 ..
  const bool dk_warp = kSplit && warp >= kBwdWarps;  // warp-uniform role
  const bool needs_ds = !kSplit || dk_warp;
  const int64_t j0 = static_cast<int64_t>(blockIdx.x) * BK;
  const int kvh = blockIdx.y;
  const int64_t b = blockIdx.z;
  const int group = p.hq / p.hkv;
  const int64_t shift = p.sk - p.sq;
  const float scale_log2 = p.scale * kLog2e;

  const uint16_t* kg = static_cast<const uint16_t*>(p.k) + b * p.k_stride[0] + kvh * p.k_stride[2];
  const uint16_t* vg = static_cast<const uint16_t*>(p.v) + b * p.v_stride[0] + kvh * p.v_stride[2];
  load_tile<D, BK, kThreads>(sk, kg, p.k_stride[1], j0, p.sk);
  load_tile<D, BK, kThreads>(sv, vg, p.v_stride[1], j0, p.sk);
  cp_async_commit();

  // acc: dV (or, for a dK warp of the split form, dK); acc_dk: dK of the
  // combined form.
  float acc[D / 8][4], acc_dk[kSplit ? 1 : D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[n][e] = 0.0f;
#pragma unroll
  for (int n = 0; n < (kSplit ? 1 : D / 8); ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc_dk[n][e] = 0.0f;

  // The first query tile any key of the block sees. Masks are compared in
  // 32 bits relative to the tile (with 64-bit indices the kernel needed more
  // registers): krow, col are this thread's key and query within block / tile.
  const int64_t i_begin = (first_query_of_key(p, j0) / BQ) * BQ;
  const int k_valid = p.sk - j0 < BK ? static_cast<int>(p.sk - j0) : BK;

  for (int h = kvh * group; h < (kvh + 1) * group; ++h) {
    const uint16_t* qg = static_cast<const uint16_t*>(p.q) + b * p.q_stride[0] + h * p.q_stride[2];
    const uint16_t* dyg = static_cast<const uint16_t*>(p.dy) + b * p.dy_stride[0] + h * p.dy_stride[2];
    for (int64_t i0 = i_begin; i0 < p.sq; i0 += BQ) {
      __syncthreads();  // every warp is done with the previous tile
      load_tile<D, BQ, kThreads>(sq, qg, p.q_stride[1], i0, p.sq);
      load_tile<D, BQ, kThreads>(sdy, dyg, p.dy_stride[1], i0, p.sq);
      cp_async_commit();
      for (int r = threadIdx.x; r < BQ; r += kThreads) {
        const int64_t i = i0 + r;
        const bool in = i < p.sq;
        s_lse[r] = in ? p.lse[b * p.lse_stride[0] + i * p.lse_stride[1] + h * p.lse_stride[2]] * kLog2e : 0.0f;
        s_delta[r] = in ? p.delta[(b * p.sq + i) * p.hq + h] : 0.0f;
      }
      cp_async_wait<0>();
      __syncthreads();

      // Key j0 + krow is masked for query i0 + col when krow - col > diag
      // (j > i + shift), diag clamped to the tile's range.
      const int q_valid = p.sq - i0 < BQ ? static_cast<int>(p.sq - i0) : BQ;
      const int64_t diag64 = i0 + shift - j0;
      const int diag = !p.causal || diag64 >= BK ? BK : (diag64 < -BQ - 1 ? -BQ - 1 : static_cast<int>(diag64));
      float s[NQ][4], dpt[NQ][4];
      product_abt<T, D, BQ>(s, sk, slice * 16, sq);                     // S^T = K Q^T
      if (needs_ds) product_abt<T, D, BQ>(dpt, sv, slice * 16, sdy);  // dP^T = V dY^T
      // Element e of s[n]: key j0 + krow, query i0 + col.
#pragma unroll
      for (int n = 0; n < NQ; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int col = n * 8 + 2 * qd + (e & 1), krow = slice * 16 + g + 8 * (e / 2);
          const bool masked = col >= q_valid || krow >= k_valid || krow - col > diag;
          const float pv = masked ? 0.0f : exp2f(s[n][e] * scale_log2 - s_lse[col]);
          if (needs_ds) dpt[n][e] = masked ? 0.0f : pv * (dpt[n][e] - s_delta[col]);
          s[n][e] = pv;
        }
#pragma unroll
      for (int kj = 0; kj < BQ / 16; ++kj) {
        if (!kSplit) {
          accumulate_xb<T, D>(acc, s[2 * kj], s[2 * kj + 1], sdy, kj * 16);  // dV += P^T dY
          if constexpr (!kSplit)
            accumulate_xb<T, D>(acc_dk, dpt[2 * kj], dpt[2 * kj + 1], sq, kj * 16);  // dK += dS^T Q
        } else if (dk_warp) {
          accumulate_xb<T, D>(acc, dpt[2 * kj], dpt[2 * kj + 1], sq, kj * 16);  // dK += dS^T Q
        } else {
          accumulate_xb<T, D>(acc, s[2 * kj], s[2 * kj + 1], sdy, kj * 16);  // dV += P^T dY
        }
      }
    }
  }
  cp_async_wait<0>();  // no tile was loaded when the block sees no query

  uint16_t* dkg = static_cast<uint16_t*>(p.dk) + b * p.dk_stride[0] + kvh * p.dk_stride[2];
  uint16_t* dvg = static_cast<uint16_t*>(p.dv) + b * p.dv_stride[0] + kvh * p.dv_stride[2];
  if constexpr (kSplit) {
    if (dk_warp) store_rows<T, D>(dkg, p.dk_stride[1], j0 + slice * 16, p.sk, acc, p.scale);
    else store_rows<T, D>(dvg, p.dv_stride[1], j0 + slice * 16, p.sk, acc, 1.0f);
  } else {
    store_rows<T, D>(dkg, p.dk_stride[1], j0 + slice * 16, p.sk, acc_dk, p.scale);
    store_rows<T, D>(dvg, p.dv_stride[1], j0 + slice * 16, p.sk, acc, 1.0f);
  }
}

template <class T, int D>
__device__ __forceinline__ void bwd_dq(const AttentionBackwardParams& p) {
  constexpr int BQ = kBwdBlockQueries, BK = bwd_dq_tile(D), NK = BK / 8, kThreads = 32 * kBwdWarps;
  extern __shared__ __align__(16) uint16_t smem[];
  uint16_t* sq = smem;
  uint16_t* sdy = sq + BQ * D;
  uint16_t* sk = sdy + BQ * D;
  uint16_t* sv = sk + BK * D;
  float* s_lse = reinterpret_cast<float*>(sv + BK * D);
  float* s_delta = s_lse + BQ;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, qd = lane % 4;
  const int64_t m0 = static_cast<int64_t>(blockIdx.x) * BQ;
  const int h = blockIdx.y;
  const int64_t b = blockIdx.z;
  const int kvh = h / (p.hq / p.hkv);
  const float scale_log2 = p.scale * kLog2e;

  const uint16_t* qg = static_cast<const uint16_t*>(p.q) + b * p.q_stride[0] + h * p.q_stride[2];
  const uint16_t* dyg = static_cast<const uint16_t*>(p.dy) + b * p.dy_stride[0] + h * p.dy_stride[2];
  const uint16_t* kg = static_cast<const uint16_t*>(p.k) + b * p.k_stride[0] + kvh * p.k_stride[2];
  const uint16_t* vg = static_cast<const uint16_t*>(p.v) + b * p.v_stride[0] + kvh * p.v_stride[2];
  load_tile<D, BQ, kThreads>(sq, qg, p.q_stride[1], m0, p.sq);
  load_tile<D, BQ, kThreads>(sdy, dyg, p.dy_stride[1], m0, p.sq);
  cp_async_commit();
  for (int r = threadIdx.x; r < BQ; r += kThreads) {
    const int64_t i = m0 + r;
    const bool in = i < p.sq;
    s_lse[r] = in ? p.lse[b * p.lse_stride[0] + i * p.lse_stride[1] + h * p.lse_stride[2]] * kLog2e : 0.0f;
    s_delta[r] = in ? p.delta[(b * p.sq + i) * p.hq + h] : 0.0f;
  }

  // Keys the block sees: up to its last query's diagonal.
  const int64_t kv_end = keys_of_query(p, (m0 + BQ - 1 < p.sq ? m0 + BQ - 1 : p.sq - 1));
  const int n_tiles = static_cast<int>((kv_end + BK - 1) / BK);
  // This thread's two queries and the keys each sees (none past sq).
  const int row[2] = {warp * 16 + g, warp * 16 + g + 8};
  int64_t keys[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) keys[r] = m0 + row[r] < p.sq ? keys_of_query(p, m0 + row[r]) : 0;

  float dq[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n) dq[n][0] = dq[n][1] = dq[n][2] = dq[n][3] = 0.0f;

  for (int t = 0; t < n_tiles; ++t) {
    const int64_t n0 = static_cast<int64_t>(t) * BK;
    __syncthreads();  // every warp is done with the previous tile
    load_tile<D, BK, kThreads>(sk, kg, p.k_stride[1], n0, kv_end);
    load_tile<D, BK, kThreads>(sv, vg, p.v_stride[1], n0, kv_end);
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();

    float s[NK][4], dp[NK][4];
    product_abt<T, D, BK>(s, sq, warp * 16, sk);    // S = Q K^T
    product_abt<T, D, BK>(dp, sdy, warp * 16, sv);  // dP = dY V^T
    // Element e of s[n]: query row[e / 2], key n0 + 8n + 2qd + e % 2.
#pragma unroll
    for (int n = 0; n < NK; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int r = row[e / 2];
        const int64_t j = n0 + n * 8 + 2 * qd + (e & 1);
        const bool masked = j >= keys[e / 2];
        const float pv = masked ? 0.0f : exp2f(s[n][e] * scale_log2 - s_lse[r]);
        dp[n][e] = masked ? 0.0f : pv * (dp[n][e] - s_delta[r]);
      }
#pragma unroll
    for (int kj = 0; kj < BK / 16; ++kj) accumulate_xb<T, D>(dq, dp[2 * kj], dp[2 * kj + 1], sk, kj * 16);  // dQ += dS K
  }
  cp_async_wait<0>();

  uint16_t* dqg = static_cast<uint16_t*>(p.dq) + b * p.dq_stride[0] + h * p.dq_stride[2];
  store_rows<T, D>(dqg, p.dq_stride[1], m0 + warp * 16, p.sq, dq, p.scale);
}

}  // namespace

// One macro per kernel, its name spelled out: cmake/embed_device_code.py
// finds kernel names in the macro's name argument.
#define HAL_BWD_KERNEL(name, fn, T, D, WARPS) \
  extern "C" __global__ void __launch_bounds__(32 * (WARPS)) name(AttentionBackwardParams p) { fn<T, D>(p); }
HAL_BWD_KERNEL(hal_attention_bwd_dkdv_mma_f16_d64, bwd_dkdv, F16Traits, 64, bwd_dkdv_warps(64))
HAL_BWD_KERNEL(hal_attention_bwd_dkdv_mma_f16_d128, bwd_dkdv, F16Traits, 128, bwd_dkdv_warps(128))
HAL_BWD_KERNEL(hal_attention_bwd_dkdv_mma_bf16_d64, bwd_dkdv, Bf16Traits, 64, bwd_dkdv_warps(64))
HAL_BWD_KERNEL(hal_attention_bwd_dkdv_mma_bf16_d128, bwd_dkdv, Bf16Traits, 128, bwd_dkdv_warps(128))
HAL_BWD_KERNEL(hal_attention_bwd_dq_mma_f16_d64, bwd_dq, F16Traits, 64, kBwdWarps)
HAL_BWD_KERNEL(hal_attention_bwd_dq_mma_f16_d128, bwd_dq, F16Traits, 128, kBwdWarps)
HAL_BWD_KERNEL(hal_attention_bwd_dq_mma_bf16_d64, bwd_dq, Bf16Traits, 64, kBwdWarps)
HAL_BWD_KERNEL(hal_attention_bwd_dq_mma_bf16_d128, bwd_dq, Bf16Traits, 128, kBwdWarps)
#undef HAL_BWD_KERNEL
