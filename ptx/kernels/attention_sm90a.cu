// Attention forward for sm_90a (Hopper) in the manner of FlashAttention-3:
// TMA loads into an mbarrier ring fed by a producer warpgroup, wgmma for
// S = Q K^T (both operands in shared memory) and for O += P V with P taken
// from registers (the "RS" wgmma form), f16/bf16, d == dv in {64, 128}.
// Written without a GPU: never run; behind HAL_GPU_UNVERIFIED=1
// (backends/cuda/cuda_attention.cpp).
//
// Block: 384 threads = 3 warpgroups (attention_sm90a_params.h
// AttentionSm90aTile). Warpgroup 0 is the producer: it drops to 24
// registers (setmaxnreg.dec) and one thread issues the TMA loads: per work
// item the Q tile [128 queries][d], then per key tile the K and V tiles
// [128 keys][d], each as d / 64 boxes of 64 channels (128-byte rows, 128B
// swizzle). Warpgroups 1 and 2 are consumers (setmaxnreg.inc to 240):
// consumer c owns queries 64c..64c+63 of the item and, per key tile,
//   S  = Q K^T          d / 16 wgmma m64n128k16, SS, K-major A and B;
//   mask + online softmax in registers (exp2 of scale * log2(e) * S, as
//        attention_flash.cu does);
//   O += P V            P's 16-bit parts (below) x 8 k16 slices of wgmma
//                       m64n<d>k16 RS, V MN-major (transpose bit).
// Each thread owns rows 16w + t/4 and + 8 of its warpgroup's 64 (the wgmma
// accumulator layout), so row max and row sum reduce over the 4 lanes of a
// quad, and the S accumulators packed in pairs are P's A fragments.
//
// P: the numerics of the verified kernel (attention_flash.cu,
// docs/accuracy.md) are kept: P is split into 16-bit parts p = hi + mid
// [+ lo] (2 parts for f16, 3 for bf16), each multiplied with V, so y stays
// within fp32-accumulation error of the fp32 reference. The P V wgmmas cost
// 2-3x those of a single 16-bit P (FA3 rounds P once); that is the price of
// the conformance bound the existing kernels meet. Not timed (no GPU).
//
// Ring protocol, stage s (kStages deep), both sides walk the same
// (item, key tile) sequence, so stage index and parity agree:
//   k_full[s], v_full[s] (1 arrival + TMA bytes): producer
//            arrive.expect_tx(tile bytes), then the tile's d / 64 boxes;
//            separate barriers so S starts before V has landed.
//   empty[s] (2 arrivals): thread 0 of each consumer warpgroup, after the
//            P V wgmmas that read V (and, earlier, the S wgmmas that read
//            K) have completed (wgmma.wait_group 0).
//   q_full (1 + TMA bytes), q_empty (2 arrivals, after each consumer's last
//            S wgmma of the item): Q is single-buffered.
// The producer's first pass waits for parity 1 of empty / q_empty, which a
// fresh mbarrier reports as complete. Waits are bounded (trap, no printf:
// a call would serialise the wgmma pipeline, ptxas C7510).
//
// Causal: key tiles past the last query's diagonal are never loaded
// (attention_sm90a_kv_end), tiles wholly below the first query's diagonal
// skip the mask (attention_sm90a_kv_unmasked); key j is masked for query i
// when j > i + (sk - sq), keys >= sk (TMA zero fill) always. A query with no
// visible key gets zeros (and lse = -inf). Grouped-query: head h reads kv
// head h / (hq / hkv) through the K/V maps' head coordinate.
//
// Scheduler: persistent, grid = min(SM count, items); CTA c takes items c,
// c + grid, ... in attention_sm90a_work_item's order (longest causal items
// first). y is stored from registers (4-byte pairs; rows >= sq skipped).
// Everything compiles to an empty stub outside sm_90a.
#include <math.h>
#include <stdint.h>

#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define HAL_PTX_BOUNDED_WAITS 1
#define HAL_PTX_MBARRIER_TRAP_MESSAGE 0
// The longest wait (the producer's on q_empty) lasts one work item,
// milliseconds; trap within seconds, as the sm_90a GEMM does.
#define HAL_PTX_MBARRIER_SPIN_LIMIT (1u << 24)

#include "ptx/arch_config.cuh"
#include "ptx/kernels/attention_sm90a_params.h"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma_sm90a.cuh"

namespace hal::ptx::attention_sm90a {

// The wgmma structs are only instantiated (and checked) in the sm_90a pass.
struct F16 {
  static constexpr int kPParts = 2;
  using MmaS = WgmmaM64N128K16F32F16SS<0, 0>;
  template <int D>
  using MmaO = typename std::conditional<D == 64, WgmmaM64N64K16F32F16RS<1>, WgmmaM64N128K16F32F16RS<1>>::type;
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  }
  static __device__ __forceinline__ float2 unpack(uint32_t v) {
    return __half22float2(*reinterpret_cast<__half2*>(&v));
  }
};

struct Bf16 {
  static constexpr int kPParts = 3;
  using MmaS = WgmmaM64N128K16F32Bf16SS<0, 0>;
  template <int D>
  using MmaO = typename std::conditional<D == 64, WgmmaM64N64K16F32Bf16RS<1>, WgmmaM64N128K16F32Bf16RS<1>>::type;
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  }
  static __device__ __forceinline__ float2 unpack(uint32_t v) {
    return __bfloat1622float2(*reinterpret_cast<__nv_bfloat162*>(&v));
  }
};

#if HAL_PTX_SM90A

// Shared memory, carved from the 1024-aligned dynamic allocation.
template <class Cfg>
struct Smem {
  uint8_t* ring;  // stage s: K at ring + 2 s kKBytes, V right after it
  uint8_t* q;
  Mbarrier* k_full;
  Mbarrier* v_full;
  Mbarrier* empty;
  Mbarrier* q_full;
  Mbarrier* q_empty;
  __device__ __forceinline__ uint8_t* k(int s) const { return ring + 2 * s * Cfg::kKBytes; }
  __device__ __forceinline__ uint8_t* v(int s) const { return ring + (2 * s + 1) * Cfg::kKBytes; }
};

// What both roles derive from a work item.
struct Item {
  AttentionWorkItem w;
  int64_t q0, kv_unmasked;
  int32_t kvh, n_kv;
};

template <class Cfg>
__device__ __forceinline__ Item item_at(const AttentionSm90aParams& p, int32_t index) {
  const kernel_params::AttentionParams& a = p.a;
  Item it;
  it.w = attention_sm90a_work_item(index, p.m_tiles, a.hq, static_cast<int32_t>(a.batch));
  it.q0 = static_cast<int64_t>(it.w.m) * Cfg::kBlockQ;
  const int64_t kv_end = attention_sm90a_kv_end(it.q0, Cfg::kBlockQ, a.sq, a.sk, a.causal != 0);
  it.kv_unmasked = attention_sm90a_kv_unmasked(it.q0, a.sq, a.sk, a.causal != 0);
  it.n_kv = static_cast<int32_t>((kv_end + Cfg::kBlockK - 1) / Cfg::kBlockK);
  it.kvh = it.w.h / (a.hq / a.hkv);
  return it;
}

template <class Cfg>
__device__ __forceinline__ void producer(const AttentionSm90aParams& p, const Smem<Cfg>& sm) {
  int stage = 0;
  uint32_t phase = 0, q_phase = 0;
  for (int32_t index = blockIdx.x; index < p.items; index += gridDim.x) {
    const Item it = item_at<Cfg>(p, index);
    if (it.n_kv == 0) continue;  // the consumers write zeros without Q
    const int32_t b = it.w.b;
    sm.q_empty->wait(q_phase ^ 1u);
    sm.q_full->arrive_expect_tx(Cfg::kQBytes);
#pragma unroll
    for (int box = 0; box < Cfg::kBoxes; ++box)
      TmaLoad4D::copy(sm.q + box * Cfg::kBoxBytesQ, &p.q_map, *sm.q_full, 64 * box, static_cast<int32_t>(it.q0),
                      it.w.h, b);
    q_phase ^= 1u;
    for (int32_t t = 0; t < it.n_kv; ++t) {
      const int32_t n0 = t * Cfg::kBlockK;
      sm.empty[stage].wait(phase ^ 1u);
      sm.k_full[stage].arrive_expect_tx(Cfg::kKBytes);
#pragma unroll
      for (int box = 0; box < Cfg::kBoxes; ++box)
        TmaLoad4D::copy(sm.k(stage) + box * Cfg::kBoxBytesK, &p.k_map, sm.k_full[stage], 64 * box, n0, it.kvh, b);
      sm.v_full[stage].arrive_expect_tx(Cfg::kKBytes);
#pragma unroll
      for (int box = 0; box < Cfg::kBoxes; ++box)
        TmaLoad4D::copy(sm.v(stage) + box * Cfg::kBoxBytesK, &p.v_map, sm.v_full[stage], 64 * box, n0, it.kvh, b);
      if (++stage == Cfg::kStages) {
        stage = 0;
        phase ^= 1u;
      }
    }
  }
}

// Scale to the log2 domain, mask (when kMask), and fold one key tile into
// the running row max / sum; returns the rescale factor of O per row.
// Element e of column group j is row (e / 2), key n0 + 8j + 2(t % 4) + e % 2.
template <bool kMask>
__device__ __forceinline__ void softmax_tile(float (&s)[64], float (&row_m)[2], float (&row_l)[2], float (&corr)[2],
                                             float scale_log2, int64_t n0, int qd, int64_t sk, bool causal,
                                             const int64_t (&diag)[2]) {
  float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int j = 0; j < 16; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      float x = s[4 * j + e] * scale_log2;
      if constexpr (kMask) {
        const int64_t key = n0 + 8 * j + 2 * qd + (e & 1);
        if (key >= sk || (causal && key > diag[e / 2])) x = -INFINITY;
      }
      s[4 * j + e] = x;
      tile_max[e / 2] = fmaxf(tile_max[e / 2], x);
    }
  float m_use[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
    tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
    const float m_new = fmaxf(row_m[r], tile_max[r]);
    m_use[r] = m_new == -INFINITY ? 0.0f : m_new;  // all masked so far: avoid inf - inf
    corr[r] = exp2f(row_m[r] - m_use[r]);           // 0 while row_m is -inf
    row_m[r] = m_new;
    row_l[r] *= corr[r];
  }
#pragma unroll
  for (int j = 0; j < 16; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float x = exp2f(s[4 * j + e] - m_use[e / 2]);
      s[4 * j + e] = x;
      row_l[e / 2] += x;
    }
}

template <class Cfg, class T>
__device__ __forceinline__ void consumer(const AttentionSm90aParams& p, const Smem<Cfg>& sm, int cw) {
  constexpr int D = Cfg::kD;
  constexpr int kOAcc = D / 2;           // fp32 accumulators of m64nD per thread
  constexpr int kSlices = Cfg::kBlockK / 16;  // k16 slices of P V
  using MmaS = typename T::MmaS;
  using MmaO = typename T::template MmaO<D>;
  const kernel_params::AttentionParams& a = p.a;
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  const int g = lane / 4, qd = lane % 4;
  const float scale_log2 = a.scale * 1.4426950408889634f;
  const bool causal = a.causal != 0;
  int stage = 0;
  uint32_t phase = 0, q_phase = 0;
  for (int32_t index = blockIdx.x; index < p.items; index += gridDim.x) {
    const Item it = item_at<Cfg>(p, index);
    const int64_t row0 = it.q0 + cw * 64 + warp * 16 + g;  // this thread's rows: row0, row0 + 8
    const int64_t diag[2] = {row0 + (a.sk - a.sq), row0 + 8 + (a.sk - a.sq)};
    float o[kOAcc];
#pragma unroll
    for (int i = 0; i < kOAcc; ++i) o[i] = 0.0f;
    float row_m[2] = {-INFINITY, -INFINITY}, row_l[2] = {0.0f, 0.0f};

    if (it.n_kv > 0) {
      sm.q_full->wait(q_phase);
      q_phase ^= 1u;
    }
    for (int32_t kt = 0; kt < it.n_kv; ++kt) {
      const int64_t n0 = static_cast<int64_t>(kt) * Cfg::kBlockK;
      float s[64];
      sm.k_full[stage].wait(phase);
#pragma unroll
      for (int i = 0; i < 64; ++i) wgmma_fence_operand(s[i]);
      wgmma_fence();
#pragma unroll
      for (int k = 0; k < D / 16; ++k) {
        // k16 slice k: box k / 4, 32 bytes per slice inside its 128-byte rows.
        const uint8_t* qa = sm.q + (k / 4) * Cfg::kBoxBytesQ + cw * 64 * 128 + 32 * (k % 4);
        const uint8_t* kb = sm.k(stage) + (k / 4) * Cfg::kBoxBytesK + 32 * (k % 4);
        MmaS::fma(s, make_wgmma_desc(qa, 16, 1024, WgmmaSwizzle::b128), make_wgmma_desc(kb, 16, 1024, WgmmaSwizzle::b128),
                  k > 0 ? 1 : 0);
      }
      wgmma_commit();
      wgmma_wait<0>();
#pragma unroll
      for (int i = 0; i < 64; ++i) wgmma_fence_operand(s[i]);
      if (kt + 1 == it.n_kv && t == 0) sm.q_empty->arrive();  // Q read for the last time

      float corr[2];
      if (n0 + Cfg::kBlockK > it.kv_unmasked)
        softmax_tile<true>(s, row_m, row_l, corr, scale_log2, n0, qd, a.sk, causal, diag);
      else
        softmax_tile<false>(s, row_m, row_l, corr, scale_log2, n0, qd, a.sk, causal, diag);
#pragma unroll
      for (int j = 0; j < kOAcc / 4; ++j) {
        o[4 * j + 0] *= corr[0], o[4 * j + 1] *= corr[0];
        o[4 * j + 2] *= corr[1], o[4 * j + 3] *= corr[1];
      }
      // P's 16-bit parts as A fragments: slice kj = column groups 2kj, 2kj + 1;
      // part 0 = round(p), part k = round(what the earlier parts missed).
      uint32_t pa[T::kPParts][kSlices][4];
#pragma unroll
      for (int kj = 0; kj < kSlices; ++kj)
#pragma unroll
        for (int w = 0; w < 4; ++w) {
          float lo = s[8 * kj + 2 * w], hi = s[8 * kj + 2 * w + 1];
#pragma unroll
          for (int part = 0; part < T::kPParts; ++part) {
            pa[part][kj][w] = T::pack(lo, hi);
            const float2 back = T::unpack(pa[part][kj][w]);
            lo -= back.x, hi -= back.y;
          }
        }

      sm.v_full[stage].wait(phase);
#pragma unroll
      for (int i = 0; i < kOAcc; ++i) wgmma_fence_operand(o[i]);
      wgmma_fence();
#pragma unroll
      for (int kj = 0; kj < kSlices; ++kj) {
        // Keys 16kj.. of every 64-channel box (2048 bytes per 16 rows); boxes
        // are kBoxBytesK apart (LBO), 8-key groups 1024 bytes (SBO).
        const uint64_t desc_v = make_wgmma_desc(sm.v(stage) + 2048 * kj, Cfg::kBoxBytesK, 1024, WgmmaSwizzle::b128);
#pragma unroll
        for (int part = 0; part < T::kPParts; ++part) MmaO::fma(o, pa[part][kj], desc_v, 1);
      }
      wgmma_commit();
      wgmma_wait<0>();
#pragma unroll
      for (int i = 0; i < kOAcc; ++i) wgmma_fence_operand(o[i]);
#pragma unroll
      for (int part = 0; part < T::kPParts; ++part)
#pragma unroll
        for (int kj = 0; kj < kSlices; ++kj)
#pragma unroll
          for (int w = 0; w < 4; ++w) wgmma_fence_operand(pa[part][kj][w]);
      if (t == 0) sm.empty[stage].arrive();
      if (++stage == Cfg::kStages) {
        stage = 0;
        phase ^= 1u;
      }
    }

    // y = O / l; rows with no visible key (l == 0) get zeros; rows >= sq are not stored.
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row_l[r] += __shfl_xor_sync(0xffffffffu, row_l[r], 1);
      row_l[r] += __shfl_xor_sync(0xffffffffu, row_l[r], 2);
    }
    uint16_t* yg = static_cast<uint16_t*>(a.y) + static_cast<int64_t>(it.w.b) * a.y_stride[0] + it.w.h * a.y_stride[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int64_t i = row0 + 8 * r;
      if (i >= a.sq) continue;
      const bool empty = row_l[r] == 0.0f;
      const float inv = empty ? 0.0f : 1.0f / row_l[r];
      uint16_t* yr = yg + i * a.y_stride[1];
#pragma unroll
      for (int j = 0; j < kOAcc / 4; ++j) {
        const float x0 = empty ? 0.0f : o[4 * j + 2 * r] * inv, x1 = empty ? 0.0f : o[4 * j + 2 * r + 1] * inv;
        *reinterpret_cast<uint32_t*>(yr + 8 * j + 2 * qd) = T::pack(x0, x1);
      }
      // Natural log-sum-exp of the scaled scores: row_m is in the log2 domain.
      if (a.lse != nullptr && qd == 0)
        a.lse[static_cast<int64_t>(it.w.b) * a.lse_stride[0] + i * a.lse_stride[1] + it.w.h * a.lse_stride[2]] =
            empty ? -INFINITY : row_m[r] * 0.6931471805599453f + logf(row_l[r]);
    }
  }
}

template <class Cfg, class T>
__device__ __forceinline__ void run(const AttentionSm90aParams& p) {
  extern __shared__ uint8_t smem_raw[];
  const uint32_t raw = smem_u32(smem_raw);
  uint8_t* base = smem_raw + (((raw + 1023u) & ~1023u) - raw);  // 128B swizzle atoms are 1024 bytes
  Smem<Cfg> sm;
  sm.ring = base;
  sm.q = base + Cfg::kStages * 2 * Cfg::kKBytes;
  sm.k_full = reinterpret_cast<Mbarrier*>(sm.q + Cfg::kQBytes);
  sm.v_full = sm.k_full + Cfg::kStages;
  sm.empty = sm.v_full + Cfg::kStages;
  sm.q_full = sm.empty + Cfg::kStages;
  sm.q_empty = sm.q_full + 1;
  const int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    prefetch_tensor_map(&p.q_map);
    prefetch_tensor_map(&p.k_map);
    prefetch_tensor_map(&p.v_map);
    for (int s = 0; s < Cfg::kStages; ++s) {
      sm.k_full[s].init(1);
      sm.v_full[s].init(1);
      sm.empty[s].init(Cfg::kConsumerWarpgroups);
    }
    sm.q_full->init(1);
    sm.q_empty->init(Cfg::kConsumerWarpgroups);
    Mbarrier::fence_init();
  }
  __syncthreads();
  if (wg == 0) {
    setmaxnreg_dec<Cfg::kProducerRegisters>();
    if (threadIdx.x == 0) producer<Cfg>(p, sm);
  } else {
    setmaxnreg_inc<Cfg::kConsumerRegisters>();
    consumer<Cfg, T>(p, sm, wg - 1);
  }
}

#endif  // HAL_PTX_SM90A

// A stub outside sm_90a (run and the wgmma wrappers exist only there).
template <int D, class T>
__device__ __forceinline__ void entry(const AttentionSm90aParams& p) {
#if HAL_PTX_SM90A
  run<AttentionSm90aTile<D>, T>(p);
#else
  (void)p;
#endif
}

}  // namespace hal::ptx::attention_sm90a

#define HAL_ATTN_SM90A_KERNEL(name, T, D)                                                          \
  extern "C" __global__ void __launch_bounds__(hal::ptx::AttentionSm90aTile<D>::kThreads, 1)      \
      name(const __grid_constant__ hal::ptx::AttentionSm90aParams p) {                             \
    hal::ptx::attention_sm90a::entry<D, hal::ptx::attention_sm90a::T>(p);                          \
  }
HAL_ATTN_SM90A_KERNEL(hal_attention_sm90a_f16_d64, F16, 64)
HAL_ATTN_SM90A_KERNEL(hal_attention_sm90a_f16_d128, F16, 128)
HAL_ATTN_SM90A_KERNEL(hal_attention_sm90a_bf16_d64, Bf16, 64)
HAL_ATTN_SM90A_KERNEL(hal_attention_sm90a_bf16_d128, Bf16, 128)
#undef HAL_ATTN_SM90A_KERNEL
