// Tensor-core attention (FlashAttention-2 forward) for f16/bf16, d == dv in
// {64, 128}. One block of 4 warps per (query tile of 64, head, batch); each
// warp owns 16 query rows. Q is staged once through shared memory into
// registers; K/V tiles of 64 keys are double-buffered in XOR-swizzled shared
// memory via cp.async. S = Q K^T (mma.sync m16n8k16, fp32), scaled by
// scale*log2(e), causally masked, online softmax in registers (exp2f), then
// P V with P taken straight from the S accumulators (the C layout of
// m16n8k16 is the A layout of the next one).
//
// Accuracy: hal/op.h computes attention in fp32, and the conformance bound
// assumes fp32 probabilities. A single 16-bit P would add a relative error
// of 2^-9 (bf16) per weight, so P is split into 16-bit parts
// (p = hi + mid [+ lo]) each multiplied with V (exact in 16 bits): 3 parts
// for bf16 (24 bits), 2 for f16 (22 bits). This costs extra P V mma's but
// keeps the result within fp32-accumulation error of the reference.
//
// The *_lse kernels also write the row log-sum-exp (p.lse): the running max
// (log2 domain) plus log2 of the row sum, times ln 2, from the same state as
// y. Rows with no visible key or all scores -inf have m = -inf, l = 0: -inf,
// as cpu_ref's row_lse; a NaN score makes l, hence lse, NaN. The kernels
// without lse are the verified ones, unchanged.
#include <math.h>
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "ptx/cp_async.cuh"
#include "ptx/kernels/attention_geometry.h"
#include "kernel_params/attention.h"
#include "ptx/kernels/attention_mma_tile.cuh"
#include "ptx/ldmatrix.cuh"
#include "ptx/mma_sm80.cuh"

using namespace hal::ptx;
using namespace hal::kernel_params;

namespace {

using attention_tile::Bf16Traits;
using attention_tile::F16Traits;
using attention_tile::swz;

// cp.async of rows [row0, row0 + 64) of one head into a swizzled tile; rows at
// or past `rows` are zero-filled (V rows past sk must be 0, not garbage, as
// 0 * NaN would poison the output).
template <int D, int Rows>
__device__ __forceinline__ void load_tile(uint16_t* tile, const uint16_t* base, int64_t row_stride, int64_t row0,
                                          int64_t rows) {
  constexpr int kChunks = D / 8;
  for (int idx = threadIdx.x; idx < Rows * kChunks; idx += 32 * kFlashWarps) {
    const int r = idx / kChunks, c = idx % kChunks;
    const bool in = row0 + r < rows;
    const uint16_t* src = in ? base + (row0 + r) * row_stride + c * 8 : base;
    CpAsyncCg16::copy(tile + swz<D>(r, c), src, in ? 16u : 0u);
  }
}

template <class T, int D, bool kLse>
__device__ __forceinline__ void flash_forward(const AttentionParams& p) {
  using Mma = typename T::Mma;
  constexpr int BM = kFlashBlockQ, BN = kFlashBlockK;
  constexpr int KD = D / 16;  // k-steps of Q K^T
  constexpr int ND = D / 8;   // 8-wide output column tiles
  extern __shared__ __align__(16) uint16_t smem[];
  uint16_t* sq_tile = smem;
  uint16_t* sk_tile = smem + BM * D;       // 2 stages
  uint16_t* sv_tile = sk_tile + 2 * BN * D;  // 2 stages

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, qd = lane % 4;
  const int64_t m0 = static_cast<int64_t>(blockIdx.x) * BM;
  const int h = blockIdx.y;
  const int64_t b = blockIdx.z;
  const int kvh = h / (p.hq / p.hkv);

  const uint16_t* qg = static_cast<const uint16_t*>(p.q) + b * p.q_stride[0] + h * p.q_stride[2];
  const uint16_t* kg = static_cast<const uint16_t*>(p.k) + b * p.k_stride[0] + kvh * p.k_stride[2];
  const uint16_t* vg = static_cast<const uint16_t*>(p.v) + b * p.v_stride[0] + kvh * p.v_stride[2];
  uint16_t* yg = static_cast<uint16_t*>(p.y) + b * p.y_stride[0] + h * p.y_stride[2];

  // Keys this tile can see: causal stops after the last query's diagonal.
  int64_t kv_end = p.sk;
  if (p.causal) {
    const int64_t last_q = (m0 + BM - 1 < p.sq ? m0 + BM - 1 : p.sq - 1);
    const int64_t lim = last_q + (p.sk - p.sq) + 1;
    kv_end = lim < 0 ? 0 : (lim < p.sk ? lim : p.sk);
  }
  const int n_tiles = static_cast<int>((kv_end + BN - 1) / BN);

  float o[ND][4];
#pragma unroll
  for (int n = 0; n < ND; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  float row_m[2] = {-INFINITY, -INFINITY}, row_l[2] = {0.0f, 0.0f};
  const float scale_log2 = p.scale * 1.4426950408889634f;
  // Query index of this thread's two rows and their last visible key.
  const int64_t qi0 = m0 + warp * 16 + g;
  const int64_t diag[2] = {qi0 + (p.sk - p.sq), qi0 + 8 + (p.sk - p.sq)};

  uint32_t qf[KD][4];
  if (n_tiles > 0) {
    load_tile<D, BM>(sq_tile, qg, p.q_stride[1], m0, p.sq);
    load_tile<D, BN>(sk_tile, kg, p.k_stride[1], 0, kv_end);
    load_tile<D, BN>(sv_tile, vg, p.v_stride[1], 0, kv_end);
    cp_async_commit();
  }
  for (int t = 0; t < n_tiles; ++t) {
    const int stage = t & 1;
    if (t + 1 < n_tiles) {
      load_tile<D, BN>(sk_tile + (stage ^ 1) * BN * D, kg, p.k_stride[1], static_cast<int64_t>(t + 1) * BN, kv_end);
      load_tile<D, BN>(sv_tile + (stage ^ 1) * BN * D, vg, p.v_stride[1], static_cast<int64_t>(t + 1) * BN, kv_end);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    if (t == 0) {
#pragma unroll
      for (int kk = 0; kk < KD; ++kk) {
        const int r = warp * 16 + (lane % 8) + ((lane / 8) % 2) * 8;
        LdMatrixX4::copy(sq_tile + swz<D>(r, kk * 2 + lane / 16), qf[kk]);
      }
    }
    const uint16_t* ks = sk_tile + stage * BN * D;
    const uint16_t* vs = sv_tile + stage * BN * D;
    const int64_t n0 = static_cast<int64_t>(t) * BN;

    // S = Q K^T for this warp's 16 rows x 64 keys.
    float s[BN / 8][4];
#pragma unroll
    for (int n = 0; n < BN / 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < KD; ++kk) {
#pragma unroll
      for (int np = 0; np < BN / 16; ++np) {
        uint32_t kf[4];
        const int key = np * 16 + (lane % 8) + (lane / 16) * 8;
        LdMatrixX4::copy(ks + swz<D>(key, kk * 2 + (lane / 8) % 2), kf);
        const uint32_t b0[2] = {kf[0], kf[1]}, b1[2] = {kf[2], kf[3]};
        Mma::fma(s[2 * np], qf[kk], b0, s[2 * np]);
        Mma::fma(s[2 * np + 1], qf[kk], b1, s[2 * np + 1]);
      }
    }

    // Scale (log2 domain), mask, online softmax. Element e of s[n] is row
    // g + 8 * (e / 2), key n0 + 8n + 2qd + e % 2.
    float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < BN / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t j = n0 + n * 8 + 2 * qd + (e & 1);
        const bool masked = j >= kv_end || (p.causal && j > diag[e / 2]);
        const float x = masked ? -INFINITY : s[n][e] * scale_log2;
        s[n][e] = x;
        tile_max[e / 2] = fmaxf(tile_max[e / 2], x);
      }
    float corr[2], m_use[2];
    attention_tile::fold_row_max(tile_max, row_m, row_l, corr, m_use);
#pragma unroll
    for (int n = 0; n < ND; ++n) {
      o[n][0] *= corr[0], o[n][1] *= corr[0];
      o[n][2] *= corr[1], o[n][3] *= corr[1];
    }
#pragma unroll
    for (int n = 0; n < BN / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[n][e] = exp2f(s[n][e] - m_use[e / 2]);
        row_l[e / 2] += s[n][e];
      }

    // O += P V, key step kj = keys 16kj..16kj+15 = s[2kj] and s[2kj+1].
#pragma unroll
    for (int kj = 0; kj < BN / 16; ++kj) {
      // A fragments of P's 16-bit parts: part 0 = round(p), part k = round(rest).
      uint32_t pa[T::kParts][4];
      float rest[8] = {s[2 * kj][0], s[2 * kj][1], s[2 * kj][2],     s[2 * kj][3],
                       s[2 * kj + 1][0], s[2 * kj + 1][1], s[2 * kj + 1][2], s[2 * kj + 1][3]};
#pragma unroll
      for (int part = 0; part < T::kParts; ++part)
#pragma unroll
        for (int w = 0; w < 4; ++w) {
          pa[part][w] = T::pack(rest[2 * w], rest[2 * w + 1]);
          const float2 back = T::unpack(pa[part][w]);
          rest[2 * w] -= back.x, rest[2 * w + 1] -= back.y;
        }
#pragma unroll
      for (int dp = 0; dp < ND / 2; ++dp) {
        uint32_t vf[4];
        const int key = kj * 16 + (lane % 8) + ((lane / 8) % 2) * 8;
        LdMatrixX4Trans::copy(vs + swz<D>(key, dp * 2 + lane / 16), vf);
        const uint32_t b0[2] = {vf[0], vf[1]}, b1[2] = {vf[2], vf[3]};
#pragma unroll
        for (int part = 0; part < T::kParts; ++part) {
          Mma::fma(o[2 * dp], pa[part], b0, o[2 * dp]);
          Mma::fma(o[2 * dp + 1], pa[part], b1, o[2 * dp + 1]);
        }
      }
    }
    __syncthreads();  // the next iteration's cp.async overwrites this stage
  }

  // y = O / l; rows with no visible key (l == 0) get zeros; rows >= sq are not stored.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    row_l[r] += __shfl_xor_sync(0xffffffffu, row_l[r], 1);
    row_l[r] += __shfl_xor_sync(0xffffffffu, row_l[r], 2);
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t i = qi0 + 8 * r;
    if (i >= p.sq) continue;
    const bool empty = row_l[r] == 0.0f;
    const float inv = empty ? 0.0f : 1.0f / row_l[r];
    if (kLse && qd == 0)
      p.lse[b * p.lse_stride[0] + i * p.lse_stride[1] + h * p.lse_stride[2]] =
          (row_m[r] + log2f(row_l[r])) * 0.6931471805599453f;
    uint16_t* yr = yg + i * p.y_stride[1];
#pragma unroll
    for (int n = 0; n < ND; ++n) {
      const float a = empty ? 0.0f : o[n][2 * r] * inv, c = empty ? 0.0f : o[n][2 * r + 1] * inv;
      *reinterpret_cast<uint32_t*>(yr + n * 8 + 2 * qd) = T::pack(a, c);
    }
  }
}

}  // namespace

#define HAL_FLASH_KERNEL(name, T, D, LSE)                                                   \
  extern "C" __global__ void __launch_bounds__(32 * kFlashWarps) name(AttentionParams p) { \
    flash_forward<T, D, LSE>(p);                                                            \
  }
HAL_FLASH_KERNEL(hal_attention_flash_f16_d64, F16Traits, 64, false)
HAL_FLASH_KERNEL(hal_attention_flash_f16_d128, F16Traits, 128, false)
HAL_FLASH_KERNEL(hal_attention_flash_bf16_d64, Bf16Traits, 64, false)
HAL_FLASH_KERNEL(hal_attention_flash_bf16_d128, Bf16Traits, 128, false)
HAL_FLASH_KERNEL(hal_attention_flash_f16_d64_lse, F16Traits, 64, true)
HAL_FLASH_KERNEL(hal_attention_flash_f16_d128_lse, F16Traits, 128, true)
HAL_FLASH_KERNEL(hal_attention_flash_bf16_d64_lse, Bf16Traits, 64, true)
HAL_FLASH_KERNEL(hal_attention_flash_bf16_d128_lse, Bf16Traits, 128, true)
#undef HAL_FLASH_KERNEL
