#pragma once
// Parameters and tile shapes of the sm_90a attention backward
// (attention_sm90a_backward.cu), shared with its host plan
// (backends/cuda/cuda_attention_sm90a_backward_plan.h). Plain host/device
// header: no CUDA includes, so the tiles, the shared-memory sizes and the
// causal query / key ranges are tested on the CPU
// (tests/unit/attention_sm90a_backward_plan_test.cpp).
//
// Two kernels after hal_attention_bwd_delta_<t> (D = rowsum(dy * y), the
// mma.sync path's first step), each owning what it writes (no atomics):
//   dkdv: grid (ceil(sk / kBlockN), hkv, batch); a CTA owns kBlockN keys of
//         one kv head and walks the query heads of that kv head (ascending)
//         and their query tiles of kBlockM (ascending).
//   dq:   grid (ceil(sq / kBlockM), hq, batch); a CTA owns kBlockM queries of
//         one head and walks the key tiles of kBlockN (ascending).
// Both: 384 threads, a producer warpgroup (TMA) and two consumer warpgroups
// (AttentionSm90aRegisters, attention_sm90a_common.h, as the forward).
#include <stdint.h>

#include "kernel_params/attention_backward.h"
#include "ptx/kernels/attention_sm90a_common.h"
#include "ptx/kernels/gemm_sm90a_params.h"  // TmaDescriptorBytes

namespace hal::ptx {

// dK/dV. d = 64: each consumer warpgroup owns 64 keys and both their dK and
// dV (kBlockN = 128). d = 128: both 64 x 128 fp32 accumulators, the S^T and
// dP^T tiles and the 16-bit parts of P / dS do not fit 240 registers, so, as
// the mma.sync kernel does at d = 128, the two warpgroups share 64 keys:
// warpgroup 1 owns dV (computes S^T only), warpgroup 2 owns dK (S^T and dP^T)
// (kBlockN = 64). Query tiles of kBlockM = 64 stream through a kStages ring
// of (Q, dY) tiles; K and V are loaded once.
template <int D>
struct AttentionSm90aBwdDkdvTile : AttentionSm90aRegisters {
  static_assert(D == 64 || D == 128, "attention_sm90a_backward: head dim 64 or 128");
  static constexpr int kD = D;
  static constexpr bool kSplit = D == 128;
  static constexpr int kBlockN = kSplit ? 64 : 128;  // keys per CTA
  static constexpr int kBlockM = 64;                 // queries per tile
  static constexpr int kStages = 2;
  static constexpr int kBoxes = D / 64;  // 128B-swizzled boxes are 64 16-bit channels wide
  static constexpr int kKBytes = kBlockN * D * 2;  // = the V block (dv == d)
  static constexpr int kQBytes = kBlockM * D * 2;  // = the dY tile
  static constexpr int kBoxBytesK = kBlockN * 128, kBoxBytesQ = kBlockM * 128;
  // K, V; per stage Q, dY; per consumer warpgroup the tile's lse and D
  // (fp32, kBlockM each); barriers kv_full, q_full / dy_full / empty per
  // stage; slack to align the tiles to 1024 bytes (the 128B swizzle atom).
  static constexpr int kSharedBytes =
      2 * kKBytes + kStages * 2 * kQBytes + kConsumerWarpgroups * 2 * kBlockM * 4 + (1 + 3 * kStages) * 8 + 1024;
  static_assert(kSharedBytes <= 227 * 1024, "shared memory per block on sm_90");
};

// dQ: each consumer warpgroup owns 64 queries (kBlockM = 128); key tiles of
// kBlockN = 64 (K and V) stream through a kStages ring; Q and dY are loaded
// once.
template <int D>
struct AttentionSm90aBwdDqTile : AttentionSm90aRegisters {
  static_assert(D == 64 || D == 128, "attention_sm90a_backward: head dim 64 or 128");
  static constexpr int kD = D;
  static constexpr int kBlockM = 128;  // queries per CTA
  static constexpr int kBlockN = 64;   // keys per tile
  static constexpr int kStages = D == 64 ? 3 : 2;
  static constexpr int kBoxes = D / 64;
  static constexpr int kQBytes = kBlockM * D * 2;  // = the dY block
  static constexpr int kKBytes = kBlockN * D * 2;  // = the V tile
  static constexpr int kBoxBytesQ = kBlockM * 128, kBoxBytesK = kBlockN * 128;
  // Q, dY; per stage K, V; barriers q_full, k_full / v_full / empty per stage.
  static constexpr int kSharedBytes = 2 * kQBytes + kStages * 2 * kKBytes + (1 + 3 * kStages) * 8 + 1024;
  static_assert(kSharedBytes <= 227 * 1024, "shared memory per block on sm_90");
};

// The first query tile (a multiple of block_m) that any key of [j0, j0 +
// block_n) sees; query tiles before it are skipped (causal). >= sq when no
// query sees any of them. I: int64_t on the host, int32_t in the producer
// warpgroup (24 registers: 64-bit division spills there; j0 < sk < 2^31 and
// sq < 2^31 keep j0 - (sk - sq) in 32 bits).
template <class I>
#if defined(__CUDACC__)
__host__ __device__
#endif
inline I attention_sm90a_bwd_first_query_tile(I j0, I block_m, I sq, I sk, bool causal) {
  if (!causal) return 0;
  const I first = j0 - (sk - sq);  // the first query key j0 is visible to
  if (first <= 0) return 0;
  return first >= sq ? sq : first / block_m * block_m;
}

struct AttentionSm90aBwdParams {
  // 4-D views (channel, sequence, head, batch), box {64, rows, 1, 1}, 128B
  // swizzle, zero fill: dkdv loads K, V in boxes of kBlockN rows and Q, dY
  // in boxes of kBlockM; dq loads Q, dY in boxes of its kBlockM and K, V of
  // its kBlockN (the plan encodes each kernel's own set).
  TmaDescriptorBytes q_map, k_map, v_map, dy_map;
  // Sizes, strides, lse, delta (D, written by hal_attention_bwd_delta_<t>),
  // the gradients (written from registers: channel stride 1, 4-byte pairs),
  // scale and causal; its q/k/v/y/dy pointers are not read (the maps are).
  kernel_params::AttentionBackwardParams a;
};

}  // namespace hal::ptx
