// Attention backward for sm_90a (Hopper) on the machinery of the sm_90a
// forward (attention_sm90a.cu): TMA loads into an mbarrier ring fed by a
// producer warpgroup, wgmma with operands in shared memory for the two
// products of each tile and the register-A ("RS") form for the gradient
// products, setmaxnreg 24 / 240. f16 / bf16, d == dv in {64, 128}.
// Written without a GPU: never run; behind HAL_GPU_UNVERIFIED=1
// (backends/cuda/cuda_attention_sm90a_backward.cpp).
//
// It replaces the two gradient kernels of the mma.sync path
// (attention_backward_mma.cu) and keeps its structure and its numerics:
// D = rowsum(dy * y) comes from hal_attention_bwd_delta_<t>; each gradient
// element is owned by one CTA and accumulated in a fixed order (no atomics;
// FA3 accumulates dQ with float atomics, this does not), so the bits do not
// depend on the grid or the number of SMs:
//
//   dkdv (attention_sm90a_backward_params.h AttentionSm90aBwdDkdvTile): a
//     CTA owns kBlockN keys of one kv head (K, V loaded once); per query
//     head of the kv head (ascending), per query tile of 64 (ascending, the
//     tiles wholly above the causal diagonal skipped):
//       S^T  = K Q^T, dP^T = V dY^T   wgmma m64n64k16 SS, K-major A and B
//       P^T  = exp2(S^T scale log2(e) - lse log2(e)),
//       dS^T = P^T (dP^T - D)         in registers (lse, D per query column)
//       dV  += P^T dY, dK += dS^T Q   wgmma m64n<d>k16 RS: the accumulators
//                                     packed in pairs are the A fragments;
//                                     dY / Q MN-major (transpose bit)
//     then dK *= scale. d = 64: consumer warpgroup c owns keys 64c.. and
//     both gradients; d = 128: both own the same 64 keys, warpgroup 1 dV,
//     warpgroup 2 dK (the register budget; the mma.sync kernel splits the
//     same way at d = 128).
//   dq (AttentionSm90aBwdDqTile): a CTA owns 128 queries of one head (Q, dY
//     loaded once), consumer c queries 64c..; per key tile of 64 (ascending,
//     up to the block's last causal key):
//       S = Q K^T, dP = dY V^T (SS); P, dS in registers; dQ += dS K (RS, K
//       MN-major); then dQ *= scale.
//
// Numerics as the mma.sync kernel's (docs/accuracy.md): the same P (exp2f of
// s * scale log2(e) - lse log2(e)), the same dS = P (dP - D), and P / dS
// split into 16-bit parts x = hi + mid [+ lo] (3 parts for bf16, 2 for f16),
// each multiplied with exact 16-bit operands, terms added in k16-slice order
// then part order, as there; only the order inside a wgmma's k16 reduction
// differs from mma.sync's, so the two paths agree to fp32-accumulation
// rounding. Masked (query, key) pairs get P = dS = 0 without reading their
// exp; TMA zero-fills rows past sq / sk.
//
// Ring protocol (as the forward's): full barriers take 1 arrival + the TMA
// bytes, empty barriers one arrival per consumer warpgroup (thread 0, after
// wgmma.wait_group 0 of the last wgmma that read the stage); the producer's
// first pass waits for parity 1, which a fresh mbarrier reports complete.
// The operands loaded once (K, V of dkdv; Q, dY of dq) have one full
// barrier, waited on by every consumer thread even with nothing to compute
// (no CTA exits with a TMA in flight). lse and D of a dkdv query tile are
// staged per consumer warpgroup in shared memory between two named
// barriers (bar.sync 1 + c, 128).
//
// Not timed, not run (no GPU). Everything compiles to an empty stub
// outside sm_90a.
#include <math.h>
#include <stdint.h>

#define HAL_PTX_BOUNDED_WAITS 1
#define HAL_PTX_MBARRIER_TRAP_MESSAGE 0
// The longest wait (the producer's on an empty stage) lasts one tile's
// products, microseconds; trap within seconds, as the forward does.
#define HAL_PTX_MBARRIER_SPIN_LIMIT (1u << 24)

#include "kernel_params/attention_backward.h"
#include "ptx/arch_config.cuh"
#include "ptx/kernels/attention_sm90a_backward_params.h"
#include "ptx/kernels/attention_sm90a_elements.cuh"
#include "ptx/kernels/attention_sm90a_pipeline.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma_sm90a.cuh"

namespace hal::ptx::attention_sm90a_bwd {

// The forward's element types (F16, Bf16), register-level steps (the
// 16-bit split of P / dS, the operand fences, the SS and RS products;
// attention_sm90a_elements.cuh) and block scaffolding
// (attention_sm90a_pipeline.cuh).
using namespace attention_sm90a_elements;
using namespace attention_sm90a_pipeline;

#if HAL_PTX_SM90A

constexpr float kLog2e = 1.4426950408889634f;

// The 64 x 64 products' accumulators: 32 fp32 a thread, column group j
// (8 columns) at 4j; element e is row 16 warp + g + 8 (e / 2), column
// 8j + 2 qd + e % 2.
constexpr int kTileAcc = 32;
constexpr int kSlices = 4;  // k16 slices of the 64 columns

// Named barrier 1 + cw over consumer warpgroup cw's 128 threads (immediate
// ids: with a register id ptxas reserves all 16 barriers).
__device__ __forceinline__ void warpgroup_barrier(int cw) {
  if (cw == 0) asm volatile("bar.sync 1, 128;\n" ::: "memory");
  else asm volatile("bar.sync 2, 128;\n" ::: "memory");
}

// An 8-byte shared load the compiler keeps in place (asm volatile).
__device__ __forceinline__ float2 ld_shared_f32x2(const float* p) {
  float2 v;
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(v.x), "=f"(v.y) : "r"(smem_u32(p)));
  return v;
}

// Stores rows row0 + g, + 8 of a warp's slice of a 64 x D accumulator
// (times mul) as 4-byte pairs; rows >= rows_end are skipped.
template <class T, int D>
__device__ __forceinline__ void store_rows(uint16_t* base, int64_t stride, int64_t row0, int64_t rows_end,
                                           const float (&acc)[D / 2], float mul) {
  const int qd = threadIdx.x % 4;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t row = row0 + 8 * r;
    if (row >= rows_end) continue;
    uint16_t* out = base + row * stride;
#pragma unroll
    for (int j = 0; j < D / 8; ++j)
      *reinterpret_cast<uint32_t*>(out + 8 * j + 2 * qd) = T::pack(acc[4 * j + 2 * r] * mul, acc[4 * j + 2 * r + 1] * mul);
  }
}

// Both kernels' thread 0, before the barriers are initialised.
__device__ __forceinline__ void prefetch_maps(const AttentionSm90aBwdParams& p) {
  prefetch_tensor_map(&p.q_map);
  prefetch_tensor_map(&p.k_map);
  prefetch_tensor_map(&p.v_map);
  prefetch_tensor_map(&p.dy_map);
}

// ---------------------------------------------------------------- dK / dV

template <class Cfg>
struct DkdvSmem {
  uint8_t* k;
  uint8_t* v;
  uint8_t* ring;  // stage s: Q at ring + 2 s kQBytes, dY right after it
  float* stats;   // consumer c: lse at stats + 2 c kBlockM, D after it
  Mbarrier* kv_full;
  Mbarrier* q_full;
  Mbarrier* dy_full;
  Mbarrier* empty;
  __device__ __forceinline__ uint8_t* q(int s) const { return ring + 2 * s * Cfg::kQBytes; }
  __device__ __forceinline__ uint8_t* dy(int s) const { return ring + (2 * s + 1) * Cfg::kQBytes; }
};

// The query tiles a dkdv CTA walks: heads [h_begin, h_end), tiles from i_begin.
struct DkdvWalk {
  int32_t j0, kvh, b, h_begin, h_end, i_begin;
};

template <class Cfg>
__device__ __forceinline__ DkdvWalk dkdv_walk(const kernel_params::AttentionBackwardParams& a) {
  DkdvWalk w;
  w.j0 = static_cast<int32_t>(blockIdx.x) * Cfg::kBlockN;
  w.kvh = static_cast<int32_t>(blockIdx.y);
  w.b = static_cast<int32_t>(blockIdx.z);
  const int32_t group = a.hq / a.hkv;
  w.h_begin = w.kvh * group;
  w.h_end = w.h_begin + group;
  w.i_begin = attention_sm90a_bwd_first_query_tile<int32_t>(w.j0, Cfg::kBlockM, static_cast<int32_t>(a.sq),
                                                            static_cast<int32_t>(a.sk), a.causal != 0);
  return w;
}

template <class Cfg>
__device__ __forceinline__ void dkdv_producer(const AttentionSm90aBwdParams& p, const DkdvSmem<Cfg>& sm) {
  const DkdvWalk w = dkdv_walk<Cfg>(p.a);
  const int32_t sq = static_cast<int32_t>(p.a.sq);
  sm.kv_full->arrive_expect_tx(2 * Cfg::kKBytes);
#pragma unroll
  for (int box = 0; box < Cfg::kBoxes; ++box)
    TmaLoad4D::copy(sm.k + box * Cfg::kBoxBytesK, &p.k_map, *sm.kv_full, 64 * box, w.j0, w.kvh, w.b);
#pragma unroll
  for (int box = 0; box < Cfg::kBoxes; ++box)
    TmaLoad4D::copy(sm.v + box * Cfg::kBoxBytesK, &p.v_map, *sm.kv_full, 64 * box, w.j0, w.kvh, w.b);
  // Written out (not RingPos / load_tile as dq_producer): with them nvcc
  // 13.0 swaps two register numbers here, and refactors of these unrun
  // kernels keep their PTX byte-identical.
  int stage = 0;
  uint32_t phase = 0;
  for (int32_t h = w.h_begin; h < w.h_end; ++h)
    for (int32_t i0 = w.i_begin; i0 < sq; i0 += Cfg::kBlockM) {
      sm.empty[stage].wait(phase ^ 1u);
      sm.q_full[stage].arrive_expect_tx(Cfg::kQBytes);
#pragma unroll
      for (int box = 0; box < Cfg::kBoxes; ++box)
        TmaLoad4D::copy(sm.q(stage) + box * Cfg::kBoxBytesQ, &p.q_map, sm.q_full[stage], 64 * box, i0, h, w.b);
      sm.dy_full[stage].arrive_expect_tx(Cfg::kQBytes);
#pragma unroll
      for (int box = 0; box < Cfg::kBoxes; ++box)
        TmaLoad4D::copy(sm.dy(stage) + box * Cfg::kBoxBytesQ, &p.dy_map, sm.dy_full[stage], 64 * box, i0, h, w.b);
      if (++stage == Cfg::kStages) {
        stage = 0;
        phase ^= 1u;
      }
    }
}

template <class Cfg, class T>
__device__ __forceinline__ void dkdv_consumer(const AttentionSm90aBwdParams& p, const DkdvSmem<Cfg>& sm, int cw) {
  constexpr int D = Cfg::kD, BM = Cfg::kBlockM, BN = Cfg::kBlockN;
  constexpr int kAcc = D / 2;  // fp32 accumulators of m64nD per thread
  constexpr bool kSplit = Cfg::kSplit;
  using MmaS = typename T::template MmaSS<64>;
  const kernel_params::AttentionBackwardParams& a = p.a;
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32, g = lane / 4, qd = lane % 4;
  const DkdvWalk w = dkdv_walk<Cfg>(a);
  // Split (d = 128): warpgroup 0 owns dV, 1 owns dK of the block's 64 keys.
  const bool dk_role = kSplit && cw == 1;
  const bool needs_ds = !kSplit || dk_role;
  const int key_row0 = kSplit ? 0 : 64 * cw;  // this warpgroup's keys in the block
  const int64_t shift = a.sk - a.sq;
  const float scale_log2 = a.scale * kLog2e;
  const int k_valid = a.sk - w.j0 < BN ? static_cast<int>(a.sk - w.j0) : BN;
  float* s_lse = sm.stats + 2 * BM * cw;
  float* s_delta = s_lse + BM;

  // acc: dV (split: this warpgroup's gradient); acc_dk: dK of the combined form.
  float acc[kAcc], acc_dk[kSplit ? 1 : kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
#pragma unroll
  for (int i = 0; i < (kSplit ? 1 : kAcc); ++i) acc_dk[i] = 0.0f;

  sm.kv_full->wait(0);
  RingPos pos;
  for (int32_t h = w.h_begin; h < w.h_end; ++h)
    for (int64_t i0 = w.i_begin; i0 < a.sq; i0 += BM) {
      // The tile's lse (log2 domain) and D into this warpgroup's buffer,
      // between two barriers (the first: every thread is done with the last tile's).
      warpgroup_barrier(cw);
      if (t < BM) {
        const int64_t i = i0 + t;
        const bool in = i < a.sq;
        s_lse[t] = in ? a.lse[w.b * a.lse_stride[0] + i * a.lse_stride[1] + h * a.lse_stride[2]] * kLog2e : 0.0f;
        s_delta[t] = in ? a.delta[(w.b * a.sq + i) * a.hq + h] : 0.0f;
      }
      warpgroup_barrier(cw);

      float s[kTileAcc], dpt[kTileAcc];
      sm.q_full[pos.stage].wait(pos.phase);
      fence_acc(s);
      wgmma_fence();
      product_ss<MmaS, D>(s, sm.k, Cfg::kBoxBytesK, key_row0, sm.q(pos.stage), Cfg::kBoxBytesQ);  // S^T = K Q^T
      wgmma_commit();
      sm.dy_full[pos.stage].wait(pos.phase);
      if (needs_ds) {
        fence_acc(dpt);
        wgmma_fence();
        product_ss<MmaS, D>(dpt, sm.v, Cfg::kBoxBytesK, key_row0, sm.dy(pos.stage), Cfg::kBoxBytesQ);  // dP^T = V dY^T
        wgmma_commit();
      }
      wgmma_wait<0>();
      fence_acc(s);
      if (needs_ds) fence_acc(dpt);

      // Key j0 + krow is masked for query i0 + col when krow - col > diag
      // (j > i + shift), diag clamped to the tile (32-bit compares, as the
      // mma.sync kernel).
      const int q_valid = a.sq - i0 < BM ? static_cast<int>(a.sq - i0) : BM;
      const int64_t diag64 = i0 + shift - w.j0;
      const int diag = !a.causal || diag64 >= BN ? BN : (diag64 < -BM - 1 ? -BM - 1 : static_cast<int>(diag64));
      // lse and D of column col: d = 64 reads the pair of columns 8j + 2qd,
      // + 1 with one 8-byte load each, kept in place (asm volatile; from
      // plain loads ptxas hoisted all 32 values and spilled at bf16); d = 128
      // indexes them plainly (pinned loads spilled there) and its dV
      // warpgroup never reads D.
#pragma unroll
      for (int j = 0; j < kTileAcc / 4; ++j) {
        float2 lse2 = make_float2(0.0f, 0.0f), d2 = make_float2(0.0f, 0.0f);
        if constexpr (!kSplit) {
          lse2 = ld_shared_f32x2(s_lse + 8 * j + 2 * qd);
          d2 = ld_shared_f32x2(s_delta + 8 * j + 2 * qd);
        }
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int col = 8 * j + 2 * qd + (e & 1), krow = key_row0 + 16 * warp + g + 8 * (e / 2);
          const bool masked = col >= q_valid || krow >= k_valid || krow - col > diag;
          const float lse_c = kSplit ? s_lse[col] : ((e & 1) ? lse2.y : lse2.x);
          const float pv = masked ? 0.0f : exp2f(s[4 * j + e] * scale_log2 - lse_c);
          if (needs_ds)
            dpt[4 * j + e] = masked ? 0.0f : pv * (dpt[4 * j + e] - (kSplit ? s_delta[col] : ((e & 1) ? d2.y : d2.x)));
          s[4 * j + e] = pv;
        }
      }

      if constexpr (kSplit) {
        // One gradient per warpgroup: dV += P^T dY or dK += dS^T Q.
        uint32_t xa[T::kParts][kSlices][4];
        if (dk_role) split_parts<T>(dpt, xa);
        else split_parts<T>(s, xa);
        fence_acc(acc);
        wgmma_fence();
        product_rs<T, D>(acc, xa, dk_role ? sm.q(pos.stage) : sm.dy(pos.stage), Cfg::kBoxBytesQ);
        wgmma_commit();
        wgmma_wait<0>();
        fence_acc(acc);
        fence_parts<T>(xa);
      } else {
        // bf16 (3 parts): P's and dS's parts together (96 registers) spilled
        // next to both accumulators, so dV's wgmmas finish before dS is split.
        constexpr bool kSerial = T::kParts > 2;
        uint32_t pa[T::kParts][kSlices][4];
        split_parts<T>(s, pa);
        fence_acc(acc);
        wgmma_fence();
        product_rs<T, D>(acc, pa, sm.dy(pos.stage), Cfg::kBoxBytesQ);  // dV += P^T dY
        wgmma_commit();
        if constexpr (kSerial) {
          wgmma_wait<0>();
          fence_acc(acc);
          fence_parts<T>(pa);
        }
        uint32_t da[T::kParts][kSlices][4];
        split_parts<T>(dpt, da);
        fence_acc(acc_dk);
        wgmma_fence();
        product_rs<T, D>(acc_dk, da, sm.q(pos.stage), Cfg::kBoxBytesQ);  // dK += dS^T Q
        wgmma_commit();
        wgmma_wait<0>();
        fence_acc(acc);
        fence_acc(acc_dk);
        if constexpr (!kSerial) fence_parts<T>(pa);
        fence_parts<T>(da);
      }
      if (t == 0) sm.empty[pos.stage].arrive();
      pos.advance<Cfg::kStages>();
    }

  uint16_t* dkg = static_cast<uint16_t*>(a.dk) + w.b * a.dk_stride[0] + w.kvh * a.dk_stride[2];
  uint16_t* dvg = static_cast<uint16_t*>(a.dv) + w.b * a.dv_stride[0] + w.kvh * a.dv_stride[2];
  const int64_t row0 = static_cast<int64_t>(w.j0) + key_row0 + 16 * warp + g;
  if constexpr (kSplit) {
    if (dk_role) store_rows<T, D>(dkg, a.dk_stride[1], row0, a.sk, acc, a.scale);
    else store_rows<T, D>(dvg, a.dv_stride[1], row0, a.sk, acc, 1.0f);
  } else {
    store_rows<T, D>(dkg, a.dk_stride[1], row0, a.sk, acc_dk, a.scale);
    store_rows<T, D>(dvg, a.dv_stride[1], row0, a.sk, acc, 1.0f);
  }
}

template <class Cfg, class T>
__device__ __forceinline__ void run_dkdv(const AttentionSm90aBwdParams& p) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* base = smem_raw + swizzle_atom_pad(smem_raw);
  DkdvSmem<Cfg> sm;
  sm.k = base;
  sm.v = base + Cfg::kKBytes;
  sm.ring = base + 2 * Cfg::kKBytes;
  sm.stats = reinterpret_cast<float*>(sm.ring + Cfg::kStages * 2 * Cfg::kQBytes);
  sm.kv_full = reinterpret_cast<Mbarrier*>(sm.stats + Cfg::kConsumerWarpgroups * 2 * Cfg::kBlockM);
  sm.q_full = sm.kv_full + 1;
  sm.dy_full = sm.q_full + Cfg::kStages;
  sm.empty = sm.dy_full + Cfg::kStages;
  const int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    prefetch_maps(p);
    sm.kv_full->init(1);
    for (int s = 0; s < Cfg::kStages; ++s) {
      sm.q_full[s].init(1);
      sm.dy_full[s].init(1);
      sm.empty[s].init(Cfg::kConsumerWarpgroups);
    }
    Mbarrier::fence_init();
  }
  __syncthreads();
  split_roles<Cfg>(
      wg, [&] { dkdv_producer<Cfg>(p, sm); }, [&](int cw) { dkdv_consumer<Cfg, T>(p, sm, cw); });
}

// ---------------------------------------------------------------- dQ

template <class Cfg>
struct DqSmem {
  uint8_t* q;
  uint8_t* dy;
  uint8_t* ring;  // stage s: K at ring + 2 s kKBytes, V right after it
  Mbarrier* q_full;
  Mbarrier* k_full;
  Mbarrier* v_full;
  Mbarrier* empty;
  __device__ __forceinline__ uint8_t* k(int s) const { return ring + 2 * s * Cfg::kKBytes; }
  __device__ __forceinline__ uint8_t* v(int s) const { return ring + (2 * s + 1) * Cfg::kKBytes; }
};

// Key tiles of the dq CTA: every key any of its queries sees.
template <class Cfg>
__device__ __forceinline__ int32_t dq_key_tiles(const kernel_params::AttentionBackwardParams& a, int64_t m0) {
  const int64_t end = attention_sm90a_kv_end(m0, Cfg::kBlockM, a.sq, a.sk, a.causal != 0);
  return static_cast<int32_t>((end + Cfg::kBlockN - 1) / Cfg::kBlockN);
}

template <class Cfg>
__device__ __forceinline__ void dq_producer(const AttentionSm90aBwdParams& p, const DqSmem<Cfg>& sm) {
  const int32_t m0 = static_cast<int32_t>(blockIdx.x) * Cfg::kBlockM;
  const int32_t h = static_cast<int32_t>(blockIdx.y), b = static_cast<int32_t>(blockIdx.z);
  const int32_t kvh = h / (p.a.hq / p.a.hkv);
  const int32_t n_tiles = dq_key_tiles<Cfg>(p.a, m0);
  sm.q_full->arrive_expect_tx(2 * Cfg::kQBytes);
  load_tile<Cfg::kBoxes, Cfg::kBoxBytesQ>(sm.q, &p.q_map, *sm.q_full, m0, h, b);
  load_tile<Cfg::kBoxes, Cfg::kBoxBytesQ>(sm.dy, &p.dy_map, *sm.q_full, m0, h, b);
  RingPos pos;
  for (int32_t t = 0; t < n_tiles; ++t) {
    const int32_t n0 = t * Cfg::kBlockN;
    sm.empty[pos.stage].wait(pos.phase ^ 1u);
    sm.k_full[pos.stage].arrive_expect_tx(Cfg::kKBytes);
    load_tile<Cfg::kBoxes, Cfg::kBoxBytesK>(sm.k(pos.stage), &p.k_map, sm.k_full[pos.stage], n0, kvh, b);
    sm.v_full[pos.stage].arrive_expect_tx(Cfg::kKBytes);
    load_tile<Cfg::kBoxes, Cfg::kBoxBytesK>(sm.v(pos.stage), &p.v_map, sm.v_full[pos.stage], n0, kvh, b);
    pos.advance<Cfg::kStages>();
  }
}

template <class Cfg, class T>
__device__ __forceinline__ void dq_consumer(const AttentionSm90aBwdParams& p, const DqSmem<Cfg>& sm, int cw) {
  constexpr int D = Cfg::kD, BN = Cfg::kBlockN;
  constexpr int kAcc = D / 2;
  using MmaS = typename T::template MmaSS<64>;
  const kernel_params::AttentionBackwardParams& a = p.a;
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32, g = lane / 4, qd = lane % 4;
  const int64_t m0 = static_cast<int64_t>(blockIdx.x) * Cfg::kBlockM;
  const int h = static_cast<int>(blockIdx.y);
  const int64_t b = blockIdx.z;
  const float scale_log2 = a.scale * kLog2e;
  const int32_t n_tiles = dq_key_tiles<Cfg>(a, m0);

  // This thread's two queries: their lse (log2 domain), D and visible keys
  // (none past sq).
  const int64_t row0 = m0 + 64 * cw + 16 * warp + g;
  float lse[2], delta[2];
  int64_t keys[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t i = row0 + 8 * r;
    const bool in = i < a.sq;
    lse[r] = in ? a.lse[b * a.lse_stride[0] + i * a.lse_stride[1] + h * a.lse_stride[2]] * kLog2e : 0.0f;
    delta[r] = in ? a.delta[(b * a.sq + i) * a.hq + h] : 0.0f;
    keys[r] = in ? kernel_params::keys_of_query(a, i) : 0;
  }

  float dq[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) dq[i] = 0.0f;

  sm.q_full->wait(0);
  RingPos pos;
  for (int32_t kt = 0; kt < n_tiles; ++kt) {
    const int64_t n0 = static_cast<int64_t>(kt) * BN;
    float s[kTileAcc], dp[kTileAcc];
    sm.k_full[pos.stage].wait(pos.phase);
    fence_acc(s);
    wgmma_fence();
    product_ss<MmaS, D>(s, sm.q, Cfg::kBoxBytesQ, 64 * cw, sm.k(pos.stage), Cfg::kBoxBytesK);  // S = Q K^T
    wgmma_commit();
    sm.v_full[pos.stage].wait(pos.phase);
    fence_acc(dp);
    wgmma_fence();
    product_ss<MmaS, D>(dp, sm.dy, Cfg::kBoxBytesQ, 64 * cw, sm.v(pos.stage), Cfg::kBoxBytesK);  // dP = dY V^T
    wgmma_commit();
    wgmma_wait<0>();
    fence_acc(s);
    fence_acc(dp);
    // Element e of column group j: query row0 + 8 (e / 2), key n0 + 8j + 2qd + e % 2.
#pragma unroll
    for (int j = 0; j < kTileAcc / 4; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t key = n0 + 8 * j + 2 * qd + (e & 1);
        const bool masked = key >= keys[e / 2];
        const float pv = masked ? 0.0f : exp2f(s[4 * j + e] * scale_log2 - lse[e / 2]);
        dp[4 * j + e] = masked ? 0.0f : pv * (dp[4 * j + e] - delta[e / 2]);
      }
    uint32_t da[T::kParts][kSlices][4];
    split_parts<T>(dp, da);
    fence_acc(dq);
    wgmma_fence();
    product_rs<T, D>(dq, da, sm.k(pos.stage), Cfg::kBoxBytesK);  // dQ += dS K
    wgmma_commit();
    wgmma_wait<0>();
    fence_acc(dq);
    fence_parts<T>(da);
    if (t == 0) sm.empty[pos.stage].arrive();
    pos.advance<Cfg::kStages>();
  }

  uint16_t* dqg = static_cast<uint16_t*>(a.dq) + b * a.dq_stride[0] + h * a.dq_stride[2];
  store_rows<T, D>(dqg, a.dq_stride[1], row0, a.sq, dq, a.scale);
}

template <class Cfg, class T>
__device__ __forceinline__ void run_dq(const AttentionSm90aBwdParams& p) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* base = smem_raw + swizzle_atom_pad(smem_raw);
  DqSmem<Cfg> sm;
  sm.q = base;
  sm.dy = base + Cfg::kQBytes;
  sm.ring = base + 2 * Cfg::kQBytes;
  sm.q_full = reinterpret_cast<Mbarrier*>(sm.ring + Cfg::kStages * 2 * Cfg::kKBytes);
  sm.k_full = sm.q_full + 1;
  sm.v_full = sm.k_full + Cfg::kStages;
  sm.empty = sm.v_full + Cfg::kStages;
  const int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    prefetch_maps(p);
    sm.q_full->init(1);
    for (int s = 0; s < Cfg::kStages; ++s) {
      sm.k_full[s].init(1);
      sm.v_full[s].init(1);
      sm.empty[s].init(Cfg::kConsumerWarpgroups);
    }
    Mbarrier::fence_init();
  }
  __syncthreads();
  split_roles<Cfg>(
      wg, [&] { dq_producer<Cfg>(p, sm); }, [&](int cw) { dq_consumer<Cfg, T>(p, sm, cw); });
}

#endif  // HAL_PTX_SM90A

// Stubs outside sm_90a (run_* and the wgmma wrappers exist only there).
template <int D, class T>
__device__ __forceinline__ void dkdv_entry(const AttentionSm90aBwdParams& p) {
#if HAL_PTX_SM90A
  run_dkdv<AttentionSm90aBwdDkdvTile<D>, T>(p);
#else
  (void)p;
#endif
}

template <int D, class T>
__device__ __forceinline__ void dq_entry(const AttentionSm90aBwdParams& p) {
#if HAL_PTX_SM90A
  run_dq<AttentionSm90aBwdDqTile<D>, T>(p);
#else
  (void)p;
#endif
}

}  // namespace hal::ptx::attention_sm90a_bwd

// One macro per kernel, its name spelled out: cmake/embed_device_code.py
// finds kernel names in the macro's name argument.
#define HAL_ATTN_SM90A_BWD_KERNEL(name, entry, T, D)                                                \
  extern "C" __global__ void __launch_bounds__(hal::ptx::AttentionSm90aRegisters::kThreads, 1) \
      name(const __grid_constant__ hal::ptx::AttentionSm90aBwdParams p) {                          \
    hal::ptx::attention_sm90a_bwd::entry<D, hal::ptx::attention_sm90a_bwd::T>(p);                  \
  }
HAL_ATTN_SM90A_BWD_KERNEL(hal_attention_bwd_dkdv_sm90a_f16_d64, dkdv_entry, F16, 64)
HAL_ATTN_SM90A_BWD_KERNEL(hal_attention_bwd_dkdv_sm90a_f16_d128, dkdv_entry, F16, 128)
HAL_ATTN_SM90A_BWD_KERNEL(hal_attention_bwd_dkdv_sm90a_bf16_d64, dkdv_entry, Bf16, 64)
HAL_ATTN_SM90A_BWD_KERNEL(hal_attention_bwd_dkdv_sm90a_bf16_d128, dkdv_entry, Bf16, 128)
HAL_ATTN_SM90A_BWD_KERNEL(hal_attention_bwd_dq_sm90a_f16_d64, dq_entry, F16, 64)
HAL_ATTN_SM90A_BWD_KERNEL(hal_attention_bwd_dq_sm90a_f16_d128, dq_entry, F16, 128)
HAL_ATTN_SM90A_BWD_KERNEL(hal_attention_bwd_dq_sm90a_bf16_d64, dq_entry, Bf16, 64)
HAL_ATTN_SM90A_BWD_KERNEL(hal_attention_bwd_dq_sm90a_bf16_d128, dq_entry, Bf16, 128)
#undef HAL_ATTN_SM90A_BWD_KERNEL
