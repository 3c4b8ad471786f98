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
// [kBlockK keys][d], each as d / 64 boxes of 64 channels (128-byte rows, 128B
// swizzle). kBlockK is 128 for the serial schedule, 64 for overlap /
// pingpong and 32 for their bf16 d = 128 kernels (attention_sm90a_block_k:
// what fits their registers). Warpgroups 1 and 2 are consumers
// (setmaxnreg.inc to 240): consumer c owns queries 64c..64c+63 of the item
// and, per key tile,
//   S  = Q K^T          d / 16 wgmma m64n<kBlockK>k16, SS, K-major A and B;
//   mask + online softmax in registers (exp2 of scale * log2(e) * S, as
//        attention_flash.cu does);
//   O += P V            P's 16-bit parts (below) x kBlockK / 16 k16 slices of
//                       wgmma m64n<d>k16 RS, V MN-major (transpose bit).
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
//   k_empty[s], v_empty[s] (2 arrivals each): thread 0 of each consumer
//            warpgroup once the S wgmmas that read K (the P V wgmmas that
//            read V) have completed; the producer waits for k_empty before
//            it loads K, v_empty before V. serial arrives on both after
//            P V; overlap releases K a tile before V (its P V lags a tile).
//   q_full (1 + TMA bytes), q_empty (2 arrivals, after each consumer's last
//            S wgmma of the item): Q is single-buffered.
// The producer's first pass waits for parity 1 of the empties, which a
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
// first). serial stores y from registers (4-byte pairs; rows >= sq skipped);
// overlap and pingpong through a swizzled staging tile per consumer and a
// TMA store (attention_sm90a_sync.cuh). The schedules (serial, overlap,
// pingpong: AttentionSm90aSchedule, attention_sm90a_params.h) are kernel
// variants; see consumer_overlap for the overlapped order.
// Everything compiles to an empty stub outside sm_90a.
#include <math.h>
#include <stdint.h>

#define HAL_PTX_BOUNDED_WAITS 1
#define HAL_PTX_MBARRIER_TRAP_MESSAGE 0
// The longest wait (the producer's on q_empty) lasts one work item,
// milliseconds; trap within seconds, as the sm_90a GEMM does.
#define HAL_PTX_MBARRIER_SPIN_LIMIT (1u << 24)

#include "ptx/arch_config.cuh"
#include "ptx/kernels/attention_sm90a_elements.cuh"
#include "ptx/kernels/attention_sm90a_params.h"
#include "ptx/kernels/attention_sm90a_pipeline.cuh"
#include "ptx/kernels/attention_sm90a_sync.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma_sm90a.cuh"

namespace hal::ptx::attention_sm90a {

// Shared with the backward: the element types (F16, Bf16: their parts,
// wgmma shapes, pack / unpack) and the register-level steps (P's 16-bit
// split, the operand fences, the SS and RS products) in
// attention_sm90a_elements.cuh; the block scaffolding (shared-memory
// alignment, the role split, RingPos, load_tile) in
// attention_sm90a_pipeline.cuh.
using namespace attention_sm90a_elements;
using namespace attention_sm90a_pipeline;

#if HAL_PTX_SM90A

// Shared memory, carved from the 1024-aligned dynamic allocation.
template <class Cfg>
struct Smem {
  uint8_t* ring;  // stage s: K at ring + 2 s kKBytes, V right after it
  uint8_t* q;
  uint8_t* y;  // the consumers' y staging (overlap, pingpong only)
  Mbarrier* k_full;
  Mbarrier* v_full;
  Mbarrier* k_empty;
  Mbarrier* v_empty;
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
  // Written out (not RingPos / load_tile, attention_sm90a_pipeline.cuh):
  // with either, nvcc 13.0 numbers this loop's registers differently, and
  // refactors of these unrun kernels keep their PTX byte-identical.
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
      sm.k_empty[stage].wait(phase ^ 1u);
      sm.k_full[stage].arrive_expect_tx(Cfg::kKBytes);
#pragma unroll
      for (int box = 0; box < Cfg::kBoxes; ++box)
        TmaLoad4D::copy(sm.k(stage) + box * Cfg::kBoxBytesK, &p.k_map, sm.k_full[stage], 64 * box, n0, it.kvh, b);
      sm.v_empty[stage].wait(phase ^ 1u);
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

// Folds one scaled, masked key tile (s, log2 domain; tile_max: each row's
// max over this thread's elements) into the running row max / sum: the max
// across the row's quad, O's rescale factor per row (corr), then P = exp2(s -
// max) in place, summed into row_l.
template <int kN>
__device__ __forceinline__ void fold_tile(float (&s)[kN], float (&tile_max)[2], float (&row_m)[2], float (&row_l)[2],
                                          float (&corr)[2]) {
  float m_use[2];
  attention_tile::fold_row_max(tile_max, row_m, row_l, corr, m_use);
#pragma unroll
  for (int j = 0; j < kN / 4; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float x = exp2f(s[4 * j + e] - m_use[e / 2]);
      s[4 * j + e] = x;
      row_l[e / 2] += x;
    }
}

// Scale to the log2 domain, mask (when kMask), and fold one key tile into
// the running row max / sum; returns the rescale factor of O per row.
// diag0: the last key row row0 sees (row0 + sk - sq); row0 + 8 sees 8 more.
// Element e of column group j is row (e / 2), key n0 + 8j + 2(t % 4) + e % 2.
template <bool kMask, int kN>
__device__ __forceinline__ void softmax_tile(float (&s)[kN], float (&row_m)[2], float (&row_l)[2], float (&corr)[2],
                                             float scale_log2, int64_t n0, int qd, int64_t sk, bool causal,
                                             int64_t diag0) {
  float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int j = 0; j < kN / 4; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      float x = s[4 * j + e] * scale_log2;
      if constexpr (kMask) {
        const int64_t key = n0 + 8 * j + 2 * qd + (e & 1);
        if (key >= sk || (causal && key > diag0 + 8 * (e / 2))) x = -INFINITY;
      }
      s[4 * j + e] = x;
      tile_max[e / 2] = fmaxf(tile_max[e / 2], x);
    }
  fold_tile(s, tile_max, row_m, row_l, corr);
}

// softmax_tile with the mask as one 32-bit limit per row (overlap /
// pingpong): key n0 + c is visible to row r iff c <= lim[r]
// (attention_sm90a_key_limit). Same results as softmax_tile; fewer live
// registers and no branches while the P V wgmma is in flight (the 64-bit
// per-element compares of softmax_tile cost registers the overlap needs).
template <bool kMask, int kN>
__device__ __forceinline__ void softmax_tile_lim(float (&s)[kN], float (&row_m)[2], float (&row_l)[2],
                                                 float (&corr)[2], float scale_log2, const int (&lim)[2], int qd) {
  float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int j = 0; j < kN / 4; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      float x = s[4 * j + e] * scale_log2;
      if constexpr (kMask) {
        if (8 * j + 2 * qd + (e & 1) > lim[e / 2]) x = -INFINITY;
      }
      s[4 * j + e] = x;
      tile_max[e / 2] = fmaxf(tile_max[e / 2], x);
    }
  fold_tile(s, tile_max, row_m, row_l, corr);
}

// Per-thread view of one consumer warpgroup, and the steps every schedule
// is made of.
template <class Cfg, class T>
struct Consumer {
  static constexpr int D = Cfg::kD;
  static constexpr int kOAcc = D / 2;                 // fp32 accumulators of m64nD per thread
  static constexpr int kSAcc = Cfg::kBlockK / 2;     // fp32 accumulators of S (m64n<kBlockK>) per thread
  static constexpr int kSlices = Cfg::kBlockK / 16;  // k16 slices of P V
  using MmaS = typename T::template MmaSS<Cfg::kBlockK>;
  using SRegs = float[kSAcc];
  using PRegs = uint32_t[T::kParts][kSlices][4];

  // S = Q K^T of the stage's K tile into s (zero-initialised by the first
  // k16 slice); issued and committed, not waited for.
  static __device__ __forceinline__ void issue_s(SRegs& s, const Smem<Cfg>& sm, int stage, int cw) {
    fence_acc(s);
    wgmma_fence();
    product_ss<MmaS, D>(s, sm.q, Cfg::kBoxBytesQ, cw * 64, sm.k(stage), Cfg::kBoxBytesK);
    wgmma_commit();
  }

  // O += P V of the stage's V tile (keys 16kj.. of every 64-channel box),
  // P's parts as the A fragments; issued and committed, not waited for (o
  // and pa stay untouched until a wait covers it).
  static __device__ __forceinline__ void issue_pv(float (&o)[kOAcc], PRegs& pa, const Smem<Cfg>& sm, int stage) {
    fence_acc(o);
    wgmma_fence();
    product_rs<T, D>(o, pa, sm.v(stage), Cfg::kBoxBytesK);
    wgmma_commit();
  }

  static __device__ __forceinline__ void fence_s(SRegs& s) { fence_acc(s); }

  static __device__ __forceinline__ void fence_o_p(float (&o)[kOAcc], PRegs& pa) {
    fence_acc(o);
    fence_parts<T>(pa);
  }

  // A work item's start: O = 0, no key seen (running max -inf, sums 0).
  static __device__ __forceinline__ void begin_item(float (&o)[kOAcc], float (&row_m)[2], float (&row_l)[2]) {
#pragma unroll
    for (int i = 0; i < kOAcc; ++i) o[i] = 0.0f;
    row_m[0] = row_m[1] = -INFINITY;
    row_l[0] = row_l[1] = 0.0f;
  }

  // Softmax of key tile n0 (masked where the tile reaches past the keys
  // every row sees); returns O's rescale factors in corr.
  static __device__ __forceinline__ void softmax(SRegs& s, float (&row_m)[2], float (&row_l)[2],
                                                 float (&corr)[2], const kernel_params::AttentionParams& a,
                                                 float scale_log2, int64_t n0, int64_t kv_unmasked, int qd,
                                                 int64_t row0) {
    if (n0 + Cfg::kBlockK > kv_unmasked)
      softmax_tile<true, kSAcc>(s, row_m, row_l, corr, scale_log2, n0, qd, a.sk, a.causal != 0, row0 + (a.sk - a.sq));
    else
      softmax_tile<false, kSAcc>(s, row_m, row_l, corr, scale_log2, n0, qd, a.sk, a.causal != 0, row0 + (a.sk - a.sq));
  }

  // softmax for overlap / pingpong: the same values through softmax_tile_lim.
  static __device__ __forceinline__ void softmax_lean(SRegs& s, float (&row_m)[2], float (&row_l)[2],
                                                      float (&corr)[2], const kernel_params::AttentionParams& a,
                                                      float scale_log2, int64_t n0, int64_t kv_unmasked, int qd,
                                                      int64_t row0) {
    if (n0 + Cfg::kBlockK > kv_unmasked) {
      const int64_t diag0 = row0 + (a.sk - a.sq);
      const int lim[2] = {attention_sm90a_key_limit(n0, a.sk, a.causal != 0, diag0, Cfg::kBlockK),
                          attention_sm90a_key_limit(n0, a.sk, a.causal != 0, diag0 + 8, Cfg::kBlockK)};
      softmax_tile_lim<true, kSAcc>(s, row_m, row_l, corr, scale_log2, lim, qd);
    } else {
      const int lim[2] = {Cfg::kBlockK, Cfg::kBlockK};
      softmax_tile_lim<false, kSAcc>(s, row_m, row_l, corr, scale_log2, lim, qd);
    }
  }

  static __device__ __forceinline__ void rescale(float (&o)[kOAcc], const float (&corr)[2]) {
#pragma unroll
    for (int j = 0; j < kOAcc / 4; ++j) {
      o[4 * j + 0] *= corr[0], o[4 * j + 1] *= corr[0];
      o[4 * j + 2] *= corr[1], o[4 * j + 3] *= corr[1];
    }
  }

  // P's 16-bit parts as A fragments (attention_sm90a_elements.cuh).
  static __device__ __forceinline__ void split_p(const SRegs& s, PRegs& pa) { split_parts<T>(s, pa); }

  // Row sums over the quad; returns 1 / l (0 for a row with no visible key).
  static __device__ __forceinline__ void finish_rows(float (&row_l)[2], float (&inv)[2]) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row_l[r] += __shfl_xor_sync(0xffffffffu, row_l[r], 1);
      row_l[r] += __shfl_xor_sync(0xffffffffu, row_l[r], 2);
      inv[r] = row_l[r] == 0.0f ? 0.0f : 1.0f / row_l[r];
    }
  }

  // Two outputs of a row: zeros for a row with no visible key (inv == 0),
  // even where O holds 0 * inf from V.
  static __device__ __forceinline__ uint32_t y_pair(float x0, float x1, float inv) {
    return inv == 0.0f ? T::pack(0.0f, 0.0f) : T::pack(x0 * inv, x1 * inv);
  }

  // y_pair without a branch (selects; the conversion is inline asm, which the
  // compiler will not speculate, so y_pair's ?: becomes two conversions and a
  // branch per pair): the same bits.
  static __device__ __forceinline__ uint32_t y_pair_sel(float x0, float x1, float inv) {
    const bool none = inv == 0.0f;
    return T::pack(none ? 0.0f : x0 * inv, none ? 0.0f : x1 * inv);
  }

  // Natural log-sum-exp of the scaled scores (row_m is in the log2 domain).
  static __device__ __forceinline__ void store_lse(const kernel_params::AttentionParams& a, const Item& it, int64_t row0,
                                                   int qd, const float (&row_m)[2], const float (&row_l)[2]) {
    if (a.lse == nullptr || qd != 0) return;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int64_t i = row0 + 8 * r;
      if (i >= a.sq) continue;
      a.lse[static_cast<int64_t>(it.w.b) * a.lse_stride[0] + i * a.lse_stride[1] + it.w.h * a.lse_stride[2]] =
          row_l[r] == 0.0f ? -INFINITY : row_m[r] * 0.6931471805599453f + logf(row_l[r]);
    }
  }

  // y = O / l from registers (4-byte pairs; rows >= sq are not stored).
  static __device__ __forceinline__ void store_y_regs(const kernel_params::AttentionParams& a, const Item& it,
                                                      int64_t row0, int qd, const float (&o)[kOAcc],
                                                      const float (&inv)[2]) {
    uint16_t* yg = static_cast<uint16_t*>(a.y) + static_cast<int64_t>(it.w.b) * a.y_stride[0] + it.w.h * a.y_stride[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int64_t i = row0 + 8 * r;
      if (i >= a.sq) continue;
      uint16_t* yr = yg + i * a.y_stride[1];
#pragma unroll
      for (int j = 0; j < kOAcc / 4; ++j)
        *reinterpret_cast<uint32_t*>(yr + 8 * j + 2 * qd) = y_pair(o[4 * j + 2 * r], o[4 * j + 2 * r + 1], inv[r]);
    }
  }

  static __device__ __forceinline__ void epilogue_barrier(int cw) {
    named_barrier_sync<128>(AttentionSm90aBarrier::kEpilogue + cw);
  }

  // y = O / l through this warpgroup's staging tile and one TMA store of its
  // 64 rows (the map clips rows >= sq). Rounding is the same as store_y_regs.
  // Staging: box j / 8 (64 channels), row r at 128 r bytes, 16-byte chunk
  // (j % 8) ^ (r % 8) (the 128B swizzle the map names), 4 bytes per quad lane:
  // the 8 rows of a warp's store land in 8 different chunks (no bank conflict).
  static __device__ __forceinline__ void store_y_tma(const AttentionSm90aParams& p, const Smem<Cfg>& sm, const Item& it,
                                                     int cw, int t, const float (&o)[kOAcc], const float (&inv)[2]) {
    const int warp = t / 32, lane = t % 32, g = lane / 4, qd = lane % 4;
    uint8_t* stage = sm.y + cw * Cfg::kBoxes * Cfg::kBoxBytesY;
    tma_store_wait_read_if(t == 0);  // the previous item's store has read the tile
    epilogue_barrier(cw);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = warp * 16 + g + 8 * r;
#pragma unroll
      for (int j = 0; j < kOAcc / 4; ++j) {
        uint8_t* at = stage + (j / 8) * Cfg::kBoxBytesY + row * 128 + (((j % 8) ^ g) * 16) + 4 * qd;
        *reinterpret_cast<uint32_t*>(at) = y_pair_sel(o[4 * j + 2 * r], o[4 * j + 2 * r + 1], inv[r]);
      }
    }
    fence_proxy_async_shared();
    epilogue_barrier(cw);
    const int32_t y0 = static_cast<int32_t>(it.q0) + cw * Cfg::kYRowsPerConsumer;
#pragma unroll
    for (int box = 0; box < Cfg::kBoxes; ++box)
      tma_store_4d_if(t == 0, &p.y_map, stage + box * Cfg::kBoxBytesY, 64 * box, y0, it.w.h, it.w.b);
    tma_store_commit_if(t == 0);
  }
};

// The first kernel's order: S_j, wait; softmax; P_j V_j, wait. The stage is
// released (k_empty and v_empty together) after both.
template <class Cfg, class T>
__device__ __forceinline__ void consumer_serial(const AttentionSm90aParams& p, const Smem<Cfg>& sm, int cw) {
  using C = Consumer<Cfg, T>;
  const kernel_params::AttentionParams& a = p.a;
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  const int g = lane / 4, qd = lane % 4;
  const float scale_log2 = a.scale * 1.4426950408889634f;
  RingPos ring;
  uint32_t q_phase = 0;
  for (int32_t index = blockIdx.x; index < p.items; index += gridDim.x) {
    const Item it = item_at<Cfg>(p, index);
    const int64_t row0 = it.q0 + cw * 64 + warp * 16 + g;  // this thread's rows: row0, row0 + 8
    float o[C::kOAcc], row_m[2], row_l[2];
    C::begin_item(o, row_m, row_l);
    if (it.n_kv > 0) {
      sm.q_full->wait(q_phase);
      q_phase ^= 1u;
    }
    for (int32_t kt = 0; kt < it.n_kv; ++kt) {
      typename C::SRegs s;
      sm.k_full[ring.stage].wait(ring.phase);
      C::issue_s(s, sm, ring.stage, cw);
      wgmma_wait<0>();
      C::fence_s(s);
      if (kt + 1 == it.n_kv && t == 0) sm.q_empty->arrive();  // Q read for the last time
      float corr[2];
      C::softmax(s, row_m, row_l, corr, a, scale_log2, static_cast<int64_t>(kt) * Cfg::kBlockK, it.kv_unmasked, qd,
                 row0);
      C::rescale(o, corr);
      typename C::PRegs pa;
      C::split_p(s, pa);
      sm.v_full[ring.stage].wait(ring.phase);
      C::issue_pv(o, pa, sm, ring.stage);
      wgmma_wait<0>();
      C::fence_o_p(o, pa);
      if (t == 0) {
        sm.k_empty[ring.stage].arrive();
        sm.v_empty[ring.stage].arrive();
      }
      ring.advance<Cfg::kStages>();
    }
    float inv[2];
    C::finish_rows(row_l, inv);
    C::store_y_regs(a, it, row0, qd, o, inv);
    C::store_lse(a, it, row0, qd, row_m, row_l);
  }
}

// overlap / pingpong. Per item of n key tiles (FA3's IntraWGOverlap order):
//   turn: S_0;                         wait 0; release K_0; softmax_0; P_0
//   j = 1 .. n-1:
//     turn: S_j, P_{j-1} V_{j-1};      two commit groups
//     wait 1 (S_j done)                release K_j
//     softmax_j                        while P_{j-1} V_{j-1} runs
//     wait 0 (P V done)                release V_{j-1}; O *= corr_j; P_j
//   turn: P_{n-1} V_{n-1};             wait 0; release V_{n-1}
// The operations on O per key tile are those of the serial order (O = O
// corr_j + P_j V_j), but over the schedule's smaller tiles (64 / 32 keys):
// the running max is updated more often, so y equals serial's only up to
// fp32 rounding (the same error bound; P's split is the same).
// Live registers at the peak (softmax_j): S_j (kBlockK / 2) + P_{j-1}
// (kBlockK / 4 x parts) + O (d / 2): the P V in flight keeps both; bf16
// d 128 at 32 keys: 16 + 24 + 64. Two S tiles are never live at once.
// Nothing branches on the thread while a wgmma is in flight: the one-thread
// mbarrier arrives are predicated (mbarrier_arrive_if), as are the y
// store's TMA ops; with `if (t == 0)` blocks ptxas spilled here.
// Ping-pong: each "turn" is a named-barrier hand-off between the two
// consumers (sync on turn + cw, issue, commit, arrive on turn + other), so
// their wgmmas reach the tensor cores alternately and one warpgroup's
// softmax overlaps the other's GEMMs. Both consumers take the same items and
// n_kv + 1 turns each per item; consumer 1 arrives once up front (consumer 0
// goes first) and consumer 0 syncs once at the end (that last arrival).
template <class Cfg, class T, bool kPingpong>
__device__ __forceinline__ void consumer_overlap(const AttentionSm90aParams& p, const Smem<Cfg>& sm, int cw) {
  using C = Consumer<Cfg, T>;
  const kernel_params::AttentionParams& a = p.a;
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  const int g = lane / 4, qd = lane % 4;
  const float scale_log2 = a.scale * 1.4426950408889634f;
  constexpr int kTurn0 = AttentionSm90aBarrier::kTurn, kTurn1 = AttentionSm90aBarrier::kTurn + 1;
  auto turn_begin = [&] {
    if constexpr (kPingpong) {
      if (cw == 0)
        named_barrier_sync<kTurn0, 256>();
      else
        named_barrier_sync<kTurn1, 256>();
    }
  };
  auto turn_end = [&] {
    if constexpr (kPingpong) {
      if (cw == 0)
        named_barrier_arrive<kTurn1, 256>();
      else
        named_barrier_arrive<kTurn0, 256>();
    }
  };
  if constexpr (kPingpong)
    if (cw == 1) named_barrier_arrive<kTurn0, 256>();
  RingPos kr, vr;  // K is consumed one tile ahead of V
  uint32_t q_phase = 0;
  for (int32_t index = blockIdx.x; index < p.items; index += gridDim.x) {
    const Item it = item_at<Cfg>(p, index);
    const int64_t row0 = it.q0 + cw * 64 + warp * 16 + g;  // this thread's rows: row0, row0 + 8
    float o[C::kOAcc], row_m[2], row_l[2];
    C::begin_item(o, row_m, row_l);
    if (it.n_kv > 0) {
      sm.q_full->wait(q_phase);
      q_phase ^= 1u;
      typename C::SRegs s;
      typename C::PRegs pa;
      float corr[2];
      sm.k_full[kr.stage].wait(kr.phase);
      turn_begin();
      C::issue_s(s, sm, kr.stage, cw);
      turn_end();
      wgmma_wait<0>();
      C::fence_s(s);
      mbarrier_arrive_if(t == 0 && it.n_kv == 1, sm.q_empty);
      mbarrier_arrive_if(t == 0, &sm.k_empty[kr.stage]);
      kr.advance<Cfg::kStages>();
      C::softmax_lean(s, row_m, row_l, corr, a, scale_log2, 0, it.kv_unmasked, qd, row0);
      C::rescale(o, corr);
      C::split_p(s, pa);
      for (int32_t kt = 1; kt < it.n_kv; ++kt) {
        typename C::SRegs s;  // fresh each tile: the S wgmma's accumulator is not carried across tiles
        sm.k_full[kr.stage].wait(kr.phase);
        sm.v_full[vr.stage].wait(vr.phase);
        turn_begin();
        C::issue_s(s, sm, kr.stage, cw);
        C::issue_pv(o, pa, sm, vr.stage);
        turn_end();
        wgmma_wait<1>();
        C::fence_s(s);
        mbarrier_arrive_if(t == 0 && kt + 1 == it.n_kv, sm.q_empty);  // Q read for the last time
        mbarrier_arrive_if(t == 0, &sm.k_empty[kr.stage]);
        kr.advance<Cfg::kStages>();
        C::softmax_lean(s, row_m, row_l, corr, a, scale_log2, static_cast<int64_t>(kt) * Cfg::kBlockK, it.kv_unmasked, qd,
                   row0);
        wgmma_wait<0>();
        C::fence_o_p(o, pa);
        mbarrier_arrive_if(t == 0, &sm.v_empty[vr.stage]);
        vr.advance<Cfg::kStages>();
        C::rescale(o, corr);
        C::split_p(s, pa);
      }
      sm.v_full[vr.stage].wait(vr.phase);
      turn_begin();
      C::issue_pv(o, pa, sm, vr.stage);
      turn_end();
      wgmma_wait<0>();
      C::fence_o_p(o, pa);
      mbarrier_arrive_if(t == 0, &sm.v_empty[vr.stage]);
      vr.advance<Cfg::kStages>();
    }
    float inv[2];
    C::finish_rows(row_l, inv);
    C::store_y_tma(p, sm, it, cw, t, o, inv);
    C::store_lse(a, it, row0, qd, row_m, row_l);
  }
  if constexpr (kPingpong)
    if (cw == 0) named_barrier_sync<kTurn0, 256>();
  tma_store_wait_all_if(t == 0);
}

template <class Cfg, class T, int kSchedule>
__device__ __forceinline__ void run(const AttentionSm90aParams& p) {
  constexpr bool kTmaStore = kSchedule != static_cast<int>(AttentionSm90aSchedule::serial);
  extern __shared__ uint8_t smem_raw[];
  uint8_t* base = smem_raw + swizzle_atom_pad(smem_raw);
  Smem<Cfg> sm;
  sm.ring = base;
  sm.q = base + Cfg::kStages * 2 * Cfg::kKBytes;
  sm.y = sm.q + Cfg::kQBytes;
  sm.k_full = reinterpret_cast<Mbarrier*>(sm.y + (kTmaStore ? Cfg::kYBytes : 0));
  sm.v_full = sm.k_full + Cfg::kStages;
  sm.k_empty = sm.v_full + Cfg::kStages;
  sm.v_empty = sm.k_empty + Cfg::kStages;
  sm.q_full = sm.v_empty + Cfg::kStages;
  sm.q_empty = sm.q_full + 1;
  const int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    prefetch_tensor_map(&p.q_map);
    prefetch_tensor_map(&p.k_map);
    prefetch_tensor_map(&p.v_map);
    if constexpr (kTmaStore) prefetch_tensor_map(&p.y_map);
    for (int s = 0; s < Cfg::kStages; ++s) {
      sm.k_full[s].init(1);
      sm.v_full[s].init(1);
      sm.k_empty[s].init(Cfg::kConsumerWarpgroups);
      sm.v_empty[s].init(Cfg::kConsumerWarpgroups);
    }
    sm.q_full->init(1);
    sm.q_empty->init(Cfg::kConsumerWarpgroups);
    Mbarrier::fence_init();
  }
  __syncthreads();
  split_roles<Cfg>(
      wg, [&] { producer<Cfg>(p, sm); },
      [&](int cw) {
        if constexpr (kSchedule == static_cast<int>(AttentionSm90aSchedule::serial))
          consumer_serial<Cfg, T>(p, sm, cw);
        else
          consumer_overlap<Cfg, T, kSchedule == static_cast<int>(AttentionSm90aSchedule::pingpong)>(p, sm, cw);
      });
}

#endif  // HAL_PTX_SM90A

// A stub outside sm_90a (run and the wgmma wrappers exist only there).
template <int D, class T, int kSchedule>
__device__ __forceinline__ void entry(const AttentionSm90aParams& p) {
#if HAL_PTX_SM90A
  run<AttentionSm90aScheduleTile<D, kSchedule, T::kParts == 3>, T, kSchedule>(p);
#else
  (void)p;
#endif
}

}  // namespace hal::ptx::attention_sm90a

// hal_attention_sm90a_<f16|bf16>_d<64|128>[_overlap|_pingpong]: the schedule
// is a compile-time variant (AttentionSm90aSchedule), one kernel name each,
// spelled out so that cmake/embed_device_code.py's scan finds it.
#define HAL_ATTN_SM90A_KERNEL(name, T, D, S)                                                       \
  extern "C" __global__ void __launch_bounds__(hal::ptx::AttentionSm90aTile<D>::kThreads, 1)      \
      name(const __grid_constant__ hal::ptx::AttentionSm90aParams p) {                             \
    hal::ptx::attention_sm90a::entry<D, hal::ptx::attention_sm90a::T, S>(p);                       \
  }
HAL_ATTN_SM90A_KERNEL(hal_attention_sm90a_f16_d64, F16, 64, 0)
HAL_ATTN_SM90A_KERNEL(hal_attention_sm90a_f16_d128, F16, 128, 0)
HAL_ATTN_SM90A_KERNEL(hal_attention_sm90a_bf16_d64, Bf16, 64, 0)
HAL_ATTN_SM90A_KERNEL(hal_attention_sm90a_bf16_d128, Bf16, 128, 0)
#if HAL_ATTENTION_SM90A_OVERLAP_SCHEDULES
HAL_ATTN_SM90A_KERNEL(hal_attention_sm90a_f16_d64_overlap, F16, 64, 1)
HAL_ATTN_SM90A_KERNEL(hal_attention_sm90a_f16_d128_overlap, F16, 128, 1)
HAL_ATTN_SM90A_KERNEL(hal_attention_sm90a_bf16_d64_overlap, Bf16, 64, 1)
HAL_ATTN_SM90A_KERNEL(hal_attention_sm90a_bf16_d128_overlap, Bf16, 128, 1)
HAL_ATTN_SM90A_KERNEL(hal_attention_sm90a_f16_d64_pingpong, F16, 64, 2)
HAL_ATTN_SM90A_KERNEL(hal_attention_sm90a_f16_d128_pingpong, F16, 128, 2)
HAL_ATTN_SM90A_KERNEL(hal_attention_sm90a_bf16_d64_pingpong, Bf16, 64, 2)
HAL_ATTN_SM90A_KERNEL(hal_attention_sm90a_bf16_d128_pingpong, Bf16, 128, 2)
#endif
#undef HAL_ATTN_SM90A_KERNEL
