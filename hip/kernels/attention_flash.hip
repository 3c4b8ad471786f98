// Attention on CDNA matrix cores (FlashAttention-2 forward), f16 and bf16,
// d == dv in {64, 128}: the semantics of ptx/kernels/attention_flash.cu
// (causal mask aligned to the last key, grouped-query heads, fully masked
// rows give zeros, 16-bit P split into parts so the result keeps fp32
// probabilities), with an AMD data layout.
//
// One workgroup of 4 wave64s per (block of 128 queries, head, batch); each
// wave owns 32 queries. K/V tiles of kBK keys (64 for d64, 32 for d128) are
// staged in LDS, single-buffered with a register prefetch of the next tile
// (as gemm_mfma.hip; a second LDS buffer would cost the occupancy the
// 64 KiB CU has to give).
//
// Transposed products, so that softmax needs no cross-lane traffic: with the
// 32x32x8 MFMA layout of hip/mfma.h (D: lane l, reg r holds
// D[8*(r/4) + 4*(l/32) + r%4][l%32]), a wave computes
//   S^T = K Q^T   (M = 32 keys, N = 32 queries, K = d): A = K rows from LDS,
//                 B = Q rows held in registers for the whole kernel;
// so lane l holds 16 keys of ONE query (l % 32); the other 16 of a 32-key
// block sit in lane l ^ 32. The row max is a register max plus one
// __shfl_xor(.., 32), the rescale factor is one scalar per lane. Then
//   O^T += V^T P^T (M = 32 channels, N = 32 queries, K = 8 keys): the B
//                 operand (lane l: P^T[4*(l/32) + 0..3][l%32]) is exactly
//                 S^T registers 4j..4j+3 of key step j, so P feeds the next
//                 MFMA without a shuffle; A = V^T rows, read from a
//                 transposed V tile in LDS ([d][keys], written transposed
//                 when the tile is staged).
// The O^T accumulator gives lane l channels 8*(r/4) + 4*(l/32) + 0..3 of
// query l % 32: one 8-byte store per 4 registers.
//
// The *_lse kernels also write the row log-sum-exp (p.lse): (m + log2 l) ln 2
// from the same state as y (m in the log2 domain): -inf for a row with no
// visible key or all scores -inf (m = -inf, l = 0), NaN after a NaN score, as
// cpu_ref's row_lse. The kernels without lse are the verified ones, unchanged.
#include <hip/hip_runtime.h>
#include <math.h>
#include <stdint.h>

#include "attention_geometry.h"
#include "hip/float_convert.h"
#include "hip/mfma.h"
#include "hip/wave.h"
#include "kernel_params/attention.h"

using namespace hal::hip;
using namespace hal::hip::kernels;
using namespace hal::kernel_params;

namespace {

typedef unsigned int U32x4 __attribute__((ext_vector_type(4)));
typedef unsigned int U32x2 __attribute__((ext_vector_type(2)));
typedef unsigned short U16x4 __attribute__((ext_vector_type(4)));

// 16-bit conversions of P and of the output: round to nearest even, NaN ->
// 0x7FFF (hip/float_convert.h's convention; P and O are never beyond the
// range of the format unless V is).
struct F16Format {
  static constexpr int kDType = 1;
  static constexpr int kPParts = 2;  // 22 significant bits of P
  static __device__ __forceinline__ uint16_t to16(float x) {
    if (__builtin_isnan(x)) return 0x7FFF;
    return __builtin_bit_cast(uint16_t, static_cast<_Float16>(x));  // v_cvt_f16_f32, RNE
  }
  static __device__ __forceinline__ float from16(uint16_t h) {
    return static_cast<float>(__builtin_bit_cast(_Float16, h));
  }
};

struct Bf16Format {
  static constexpr int kDType = 2;
  static constexpr int kPParts = 3;  // 24 significant bits of P
  static __device__ __forceinline__ uint16_t to16(float x) { return f32_to_bf16_fast(x); }
  static __device__ __forceinline__ float from16(uint16_t h) { return bf16_to_f32(h); }
};

template <class Fmt, int D>
struct FlashConfig {
  static constexpr int kBK = flash_block_k(D);          // keys per tile
  static constexpr int kKeyBlocks = kBK / 32;           // 32-key MFMA blocks per tile
  static constexpr int kKRow = D + kFlashLdsPad;        // K tile row, halfs
  static constexpr int kVRow = kBK + kFlashLdsPad;      // V^T tile row, halfs
  static constexpr int kDSteps = D / 8;                 // k-steps of S^T = K Q^T
  static constexpr int kDBlocks = D / 32;               // 32-channel blocks of O^T
  static constexpr int kChunks = D / 8;                 // 16-byte chunks per row
  static_assert(D == 64 || D == 128, "attention_flash: head dims 64 and 128");
  static_assert(kBK % 32 == 0, "attention_flash: key tiles are whole 32-key MFMA blocks");
  static_assert(kBK * kChunks == 2 * kFlashThreads, "attention_flash: two 16-byte chunks of K (and of V) per thread");
  static_assert((kKRow * 2) % 8 == 0 && (kVRow * 2) % 8 == 0, "attention_flash: LDS rows keep 8-byte reads aligned");
  static_assert(kFlashRowsPerWave == 32 && kFlashThreads == 4 * kWaveSize, "attention_flash: 4 waves of 32 queries");
};

// One K/V tile in flight between global memory and LDS: thread t holds
//   K: rows (t / kChunks) and (t / kChunks + kBK / 2), chunk t % kChunks;
//   V: rows 2 * (t % (kBK/2)) and that + 1, chunk t / (kBK/2) -- a key pair,
//      so the transposed LDS store writes whole dwords (two keys per channel).
struct TileRegs {
  U32x4 k0, k1, v0, v1;
};

template <class Cfg>
__device__ __forceinline__ void load_tile(const uint16_t* kg, const uint16_t* vg, int64_t k_row_stride,
                                          int64_t v_row_stride, int64_t key0, int64_t kv_end, TileRegs& r) {
  const int t = static_cast<int>(threadIdx.x);
  const U32x4 zero = {0u, 0u, 0u, 0u};
  // Rows at or past kv_end are zero-filled: their weights are 0, and 0 * a
  // NaN/inf from beyond the mask would poison the sum.
  {
    const int c = t % Cfg::kChunks;
    const int64_t ka = key0 + t / Cfg::kChunks, kb = ka + Cfg::kBK / 2;
    r.k0 = ka < kv_end ? *reinterpret_cast<const U32x4*>(kg + ka * k_row_stride + 8 * c) : zero;
    r.k1 = kb < kv_end ? *reinterpret_cast<const U32x4*>(kg + kb * k_row_stride + 8 * c) : zero;
  }
  {
    const int c = t / (Cfg::kBK / 2);
    const int64_t va = key0 + 2 * (t % (Cfg::kBK / 2)), vb = va + 1;
    r.v0 = va < kv_end ? *reinterpret_cast<const U32x4*>(vg + va * v_row_stride + 8 * c) : zero;
    r.v1 = vb < kv_end ? *reinterpret_cast<const U32x4*>(vg + vb * v_row_stride + 8 * c) : zero;
  }
}

template <class Cfg>
__device__ __forceinline__ void store_tile(uint16_t* k_lds, uint16_t* vt_lds, const TileRegs& r) {
  const int t = static_cast<int>(threadIdx.x);
  {
    const int c = t % Cfg::kChunks, row = t / Cfg::kChunks;
    // Rows of (d + 4) halfs are 8-byte aligned: two 8-byte writes per chunk.
    U32x2* a = reinterpret_cast<U32x2*>(k_lds + row * Cfg::kKRow + 8 * c);
    U32x2* b = reinterpret_cast<U32x2*>(k_lds + (row + Cfg::kBK / 2) * Cfg::kKRow + 8 * c);
    a[0] = U32x2{r.k0[0], r.k0[1]};
    a[1] = U32x2{r.k0[2], r.k0[3]};
    b[0] = U32x2{r.k1[0], r.k1[1]};
    b[1] = U32x2{r.k1[2], r.k1[3]};
  }
  {
    const int c = t / (Cfg::kBK / 2), key = 2 * (t % (Cfg::kBK / 2));
    // Channel 8c + i of keys (key, key + 1): low halves of v0/v1 word i/2 for even i.
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const unsigned lo = (r.v0[i / 2] >> (16 * (i % 2))) & 0xFFFFu;
      const unsigned hi = (r.v1[i / 2] >> (16 * (i % 2))) & 0xFFFFu;
      *reinterpret_cast<unsigned*>(vt_lds + (8 * c + i) * Cfg::kVRow + key) = lo | hi << 16;
    }
  }
}

template <class Fmt, int D, bool kLse>
__device__ __forceinline__ void flash_forward(const AttentionParams& p) {
  using Cfg = FlashConfig<Fmt, D>;
  using Mma = Mfma32x32x8<Fmt::kDType>;
  constexpr int kBK = Cfg::kBK;
  __shared__ __attribute__((aligned(16))) uint16_t k_lds[kBK * Cfg::kKRow];
  __shared__ __attribute__((aligned(16))) uint16_t vt_lds[D * Cfg::kVRow];

  const int lane = lane_id(), wave = wave_id();
  const int col = lane % 32, half = lane / 32;  // MFMA column (query) and lane half
  const int64_t m0 = static_cast<int64_t>(blockIdx.x) * kFlashBlockQ;
  const int64_t h = blockIdx.y, b = blockIdx.z;
  const int64_t kvh = h / (p.hq / p.hkv);
  const uint16_t* qg = static_cast<const uint16_t*>(p.q) + b * p.q_stride[0] + h * p.q_stride[2];
  const uint16_t* kg = static_cast<const uint16_t*>(p.k) + b * p.k_stride[0] + kvh * p.k_stride[2];
  const uint16_t* vg = static_cast<const uint16_t*>(p.v) + b * p.v_stride[0] + kvh * p.v_stride[2];
  uint16_t* yg = static_cast<uint16_t*>(p.y) + b * p.y_stride[0] + h * p.y_stride[2];

  // Keys j > i + (sk - sq) are masked under causal; the workgroup stops after
  // its last query's diagonal, each wave after its own.
  const int64_t shift = p.sk - p.sq;
  auto visible_end = [&](int64_t last_q) {
    if (!p.causal) return p.sk;
    const int64_t lim = last_q + shift + 1;
    return lim < 0 ? int64_t{0} : (lim < p.sk ? lim : p.sk);
  };
  const int64_t kv_end = visible_end(m0 + kFlashBlockQ - 1 < p.sq ? m0 + kFlashBlockQ - 1 : p.sq - 1);
  const int64_t wq0 = m0 + wave * kFlashRowsPerWave;
  const bool wave_active = wq0 < p.sq;
  const int64_t wave_end = visible_end(wq0 + kFlashRowsPerWave - 1 < p.sq ? wq0 + kFlashRowsPerWave - 1 : p.sq - 1);
  const int64_t qi = wq0 + col;  // this lane's query
  // Keys [0, visible) of query qi are unmasked.
  const int64_t diag_end = qi + shift + 1;
  const int64_t visible = p.causal && diag_end < kv_end ? diag_end : kv_end;

  // B operand of S^T = K Q^T, k-step s: lane l holds Q[qi][8s + 4*(l/32) + 0..3].
  typename Mma::B qf[Cfg::kDSteps];
#pragma unroll
  for (int s = 0; s < Cfg::kDSteps; ++s) {
    const U32x2 v = qi < p.sq ? *reinterpret_cast<const U32x2*>(qg + qi * p.q_stride[1] + 8 * s + 4 * half)
                              : U32x2{0u, 0u};
    qf[s] = __builtin_bit_cast(typename Mma::B, v);
  }

  typename Mma::D o[Cfg::kDBlocks];
#pragma unroll
  for (int c = 0; c < Cfg::kDBlocks; ++c)
#pragma unroll
    for (int r = 0; r < 16; ++r) o[c][r] = 0.0f;
  float row_m = -INFINITY, row_l = 0.0f;  // per lane: query qi, partial l over this lane's keys
  const float scale_log2 = p.scale * 1.4426950408889634f;

  const int64_t n_tiles = (kv_end + kBK - 1) / kBK;
  TileRegs regs;
  if (n_tiles > 0) {
    load_tile<Cfg>(kg, vg, p.k_stride[1], p.v_stride[1], 0, kv_end, regs);
    store_tile<Cfg>(k_lds, vt_lds, regs);
  }
  __syncthreads();

  for (int64_t t = 0; t < n_tiles; ++t) {
    const int64_t n0 = t * kBK;
    const bool more = t + 1 < n_tiles;
    if (more) load_tile<Cfg>(kg, vg, p.k_stride[1], p.v_stride[1], n0 + kBK, kv_end, regs);  // in flight below

    if (wave_active && n0 < wave_end) {  // wave-uniform: a tile wholly masked for this wave changes nothing
      // S^T for kBK keys x 32 queries.
      typename Mma::D s[Cfg::kKeyBlocks];
#pragma unroll
      for (int a = 0; a < Cfg::kKeyBlocks; ++a)
#pragma unroll
        for (int r = 0; r < 16; ++r) s[a][r] = 0.0f;
#pragma unroll
      for (int ds = 0; ds < Cfg::kDSteps; ++ds)
#pragma unroll
        for (int a = 0; a < Cfg::kKeyBlocks; ++a) {
          const auto kf = *reinterpret_cast<const typename Mma::A*>(k_lds + (32 * a + col) * Cfg::kKRow + 8 * ds + 4 * half);
          s[a] = Mma::fma(kf, qf[ds], s[a]);
        }

      // Scale (log2 domain), mask, online softmax. Register r of block a is
      // key n0 + 32a + 8*(r/4) + 4*half + r%4 of query qi.
      // Compared in 32 bits against the tile-relative limit.
      const int64_t lim64 = visible - n0;
      const int lim = lim64 < 0 ? 0 : (lim64 > kBK ? kBK : static_cast<int>(lim64));
      float tile_max = -INFINITY;
#pragma unroll
      for (int a = 0; a < Cfg::kKeyBlocks; ++a)
#pragma unroll
        for (int r = 0; r < 16; ++r) {
          const bool masked = 32 * a + 8 * (r / 4) + 4 * half + r % 4 >= lim;
          const float x = masked ? -INFINITY : s[a][r] * scale_log2;
          s[a][r] = x;
          tile_max = fmaxf(tile_max, x);
        }
      tile_max = fmaxf(tile_max, __shfl_xor(tile_max, 32, kWaveSize));  // the query's other 16 keys per block
      const float m_new = fmaxf(row_m, tile_max);
      const float m_use = m_new == -INFINITY ? 0.0f : m_new;  // all masked so far: avoid inf - inf
      const float corr = exp2f(row_m - m_use);                // 0 while row_m is -inf
      row_m = m_new;
      row_l *= corr;
#pragma unroll
      for (int c = 0; c < Cfg::kDBlocks; ++c)
#pragma unroll
        for (int r = 0; r < 16; ++r) o[c][r] *= corr;
#pragma unroll
      for (int a = 0; a < Cfg::kKeyBlocks; ++a)
#pragma unroll
        for (int r = 0; r < 16; ++r) {
          s[a][r] = exp2f(s[a][r] - m_use);
          row_l += s[a][r];
        }

      // O^T += V^T P^T, key step j of block a = S^T registers 4j..4j+3.
#pragma unroll
      for (int a = 0; a < Cfg::kKeyBlocks; ++a)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          // 16-bit parts of P: part 0 = round(p), part k = round(what is left).
          typename Mma::B pb[Fmt::kPParts];
          float rest[4] = {s[a][4 * j], s[a][4 * j + 1], s[a][4 * j + 2], s[a][4 * j + 3]};
#pragma unroll
          for (int part = 0; part < Fmt::kPParts; ++part) {
            U16x4 bits;
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              bits[e] = Fmt::to16(rest[e]);
              rest[e] -= Fmt::from16(bits[e]);
            }
            pb[part] = __builtin_bit_cast(typename Mma::B, bits);
          }
#pragma unroll
          for (int c = 0; c < Cfg::kDBlocks; ++c) {
            const auto vf =
                *reinterpret_cast<const typename Mma::A*>(vt_lds + (32 * c + col) * Cfg::kVRow + 32 * a + 8 * j + 4 * half);
#pragma unroll
            for (int part = 0; part < Fmt::kPParts; ++part) o[c] = Mma::fma(vf, pb[part], o[c]);
          }
        }
    }
    __syncthreads();  // every wave is done with this tile's LDS
    if (more) {
      store_tile<Cfg>(k_lds, vt_lds, regs);
      __syncthreads();
    }
  }

  // y = O / l; a query with no visible key (l == 0) gets zeros; queries >= sq are not stored.
  row_l += __shfl_xor(row_l, 32, kWaveSize);
  if (qi >= p.sq) return;
  const bool empty = row_l == 0.0f;
  const float inv = empty ? 0.0f : 1.0f / row_l;
  if (kLse && half == 0)
    p.lse[b * p.lse_stride[0] + qi * p.lse_stride[1] + h * p.lse_stride[2]] =
        (row_m + log2f(row_l)) * 0.6931471805599453f;
  uint16_t* yr = yg + qi * p.y_stride[1];
#pragma unroll
  for (int c = 0; c < Cfg::kDBlocks; ++c)
#pragma unroll
    for (int g = 0; g < 4; ++g) {
      U16x4 bits;
#pragma unroll
      for (int e = 0; e < 4; ++e) bits[e] = Fmt::to16(empty ? 0.0f : o[c][4 * g + e] * inv);
      *reinterpret_cast<U32x2*>(yr + 32 * c + 8 * g + 4 * half) = __builtin_bit_cast(U32x2, bits);
    }
}

}  // namespace

// amdgpu_waves_per_eu(2): at most 256 unified registers (arch VGPRs +
// AGPRs) per lane, so two workgroups share a CU by registers as well as by
// LDS (~17 KiB each); left free, the compiler hoists every LDS fragment and
// takes ~300, one wave per SIMD.
#define HAL_FLASH_KERNEL(name, Fmt, D, LSE)                                                  \
  extern "C" __global__ __launch_bounds__(kFlashThreads) __attribute__((amdgpu_waves_per_eu(2))) void name( \
      AttentionParams p) {                                                                   \
    flash_forward<Fmt, D, LSE>(p);                                                           \
  }
HAL_FLASH_KERNEL(attention_flash_f16_d64, F16Format, 64, false)
HAL_FLASH_KERNEL(attention_flash_f16_d128, F16Format, 128, false)
HAL_FLASH_KERNEL(attention_flash_bf16_d64, Bf16Format, 64, false)
HAL_FLASH_KERNEL(attention_flash_bf16_d128, Bf16Format, 128, false)
HAL_FLASH_KERNEL(attention_flash_f16_d64_lse, F16Format, 64, true)
HAL_FLASH_KERNEL(attention_flash_f16_d128_lse, F16Format, 128, true)
HAL_FLASH_KERNEL(attention_flash_bf16_d64_lse, Bf16Format, 64, true)
HAL_FLASH_KERNEL(attention_flash_bf16_d128_lse, Bf16Format, 128, true)
#undef HAL_FLASH_KERNEL
