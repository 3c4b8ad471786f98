#pragma once
// Parameters, tile shapes and work order of the sm_90a attention forward
// (attention_sm90a.cu), shared with its launcher
// (backends/cuda/cuda_attention_sm90a.cpp). Plain host/device header: no CUDA
// includes, so the work order and the tile plan are tested on the CPU
// (tests/unit/attention_sm90a_plan_test.cpp).
//
// The three TMA descriptors are CUtensorMap bytes of 4-D views
// (channel, sequence, head, batch) of Q, K and V, channel contiguous, encoded
// on the host; the kernel takes this struct as `const __grid_constant__`.
#include <stdint.h>

#include "kernel_params/attention.h"
#include "ptx/kernels/attention_sm90a_common.h"
#include "ptx/kernels/gemm_sm90a_params.h"  // TmaDescriptorBytes

namespace hal::ptx {

// How the consumer warpgroups order their work (a compile-time variant of
// the kernel, one kernel name each; the launcher picks it from
// HAL_ATTENTION_SM90A_SCHEDULE, cuda_attention_sm90a_plan.h):
//   serial   S_j, wait, softmax, P_j V_j, wait (the first kernel; y stored
//            from registers);
//   overlap  FA3's intra-warpgroup overlap: S_j and P_{j-1} V_{j-1} are
//            issued together, the softmax of block j runs while
//            P_{j-1} V_{j-1} is on the tensor cores; K and V stages are
//            released separately; y through shared memory and a TMA store;
//   pingpong overlap + FA3's inter-warpgroup ping-pong: named barriers let
//            the two consumers issue their wgmmas in turns, so one
//            warpgroup's softmax runs under the other's GEMMs.
enum class AttentionSm90aSchedule : int32_t { serial = 0, overlap = 1, pingpong = 2 };

// Whether the overlap and pingpong kernels are built (attention_sm90a.cu
// instantiates them, the plan offers them). 1: with ptxas 13.0 all eight
// (f16 / bf16 x d 64 / 128) build for sm_90a at 168 registers (consumers
// at 240 after setmaxnreg), 0 spill bytes, no stack frame, no C7512
// "wgmma serialized" note. They did not with the serial tile (128 keys):
// spill stores overlap / pingpong bf16 d128 988 / 1020 bytes, f16 d64
// 296 / 280. What it took (attention_sm90a.cu, consumer_overlap):
//  - a smaller key tile (attention_sm90a_block_k): 64 keys, 32 for bf16
//    d 128, whose 3-part P (3 x 8 registers a 16-key slice) and O (64) leave
//    room for no larger S next to the in-flight P V;
//  - no divergent branch while wgmmas are in flight or around the y store:
//    the one-thread mbarrier arrives and TMA store ops are predicated
//    (attention_sm90a_sync.cuh *_if), the epilogue barrier takes its id in a
//    register; with `if (t == 0)` blocks there, ptxas spilled at any
//    setmaxnreg count from 200 to 240 alike;
//  - the mask as one 32-bit key limit per row, branch-free y pairs.
// Never run on a GPU: selected only on request (HAL_ATTENTION_SM90A_SCHEDULE)
// behind HAL_GPU_UNVERIFIED=1. Set to 0 to leave them out of the build.
#ifndef HAL_ATTENTION_SM90A_OVERLAP_SCHEDULES
#define HAL_ATTENTION_SM90A_OVERLAP_SCHEDULES 1
#endif
inline constexpr bool kAttentionSm90aOverlapSchedulesBuilt = HAL_ATTENTION_SM90A_OVERLAP_SCHEDULES != 0;

// One CTA: a producer warpgroup (TMA) and two consumer warpgroups of 64
// query rows each, so a work item is kBlockQ = 128 queries of one (head,
// batch); K/V tiles of kBlockK keys stream through a kStages-deep ring.
//
// Tile shape: FA3 takes 128 x 128 for d = 128 causal (as here) and
// 128 x 176 non-causal. 176 keys do not fit this kernel: the S tile is
// m64n176 = 88 fp32 registers, P's split into 16-bit parts (kept for the
// conformance bound, docs/accuracy.md) is 3 x 44 = 132 registers for bf16
// (2 x 44 for f16) where FA3's single-rounded P is 44, and with O (64) the
// overlap schedule holds S + P + O = 284 live registers against the 240 a
// consumer has; shared memory would be 2 x 88 KiB (K/V ring) + 32 KiB (Q)
// + 32 KiB (y staging) = 240 KiB > 227 KiB.
template <int D, int BlockK = 128>
struct AttentionSm90aTile : AttentionSm90aRegisters {
  static_assert(D == 64 || D == 128, "attention_sm90a: head dim 64 or 128");
  static_assert(BlockK == 32 || BlockK == 64 || BlockK == 128, "attention_sm90a: 32, 64 or 128 keys a tile");
  static constexpr int kD = D;
  static constexpr int kBlockQ = 128, kBlockK = BlockK;
  // 128 keys: 2 stages (d 128) / 3 (d 64); 64 keys: 4, 32 keys: 8 (for
  // d 128 the same 128 KiB of K and V in the ring as 2 x 128 keys).
  static constexpr int kStages = BlockK == 32 ? 8 : BlockK == 64 ? 4 : (D == 64 ? 3 : 2);
  // 128B-swizzled boxes are 64 16-bit channels wide: D / 64 boxes per tile.
  static constexpr int kBoxes = D / 64;
  static constexpr int kQBytes = kBlockQ * D * 2;
  static constexpr int kKBytes = kBlockK * D * 2;  // = the V tile (dv == d)
  static constexpr int kBoxBytesQ = kBlockQ * 128, kBoxBytesK = kBlockK * 128;
  // y staging of the TMA store (overlap, pingpong): per consumer its 64 rows
  // as D / 64 boxes of 64 rows x 128 bytes (128B swizzle, as the loads).
  static constexpr int kYRowsPerConsumer = kBlockQ / kConsumerWarpgroups;
  static constexpr int kBoxBytesY = kYRowsPerConsumer * 128;
  static constexpr int kYBytes = kBlockQ * D * 2;
  // mbarriers: k_full, v_full, k_empty, v_empty per stage; q_full, q_empty.
  static constexpr int kBarriers = 4 * kStages + 2;
  // Ring (K and V per stage) + Q [+ y staging] + barriers + slack to align
  // the tiles to 1024 bytes (the 128B swizzle atom).
  static constexpr int kSharedBytes = kStages * 2 * kKBytes + kQBytes + kBarriers * 8 + 1024;
  static constexpr int kSharedBytesTmaStore = kSharedBytes + kYBytes;
  static constexpr int shared_bytes(AttentionSm90aSchedule s) {
    return s == AttentionSm90aSchedule::serial ? kSharedBytes : kSharedBytesTmaStore;
  }
  // Threads, warpgroup roles, register split: AttentionSm90aRegisters.
  static_assert(kSharedBytesTmaStore <= 227 * 1024, "shared memory per block on sm_90");
};

// Keys a tile per schedule and type: serial 128; overlap and pingpong 64,
// and 32 for bf16 d = 128, so that the overlapped S tile (kBlockK / 2 fp32
// registers), P's 16-bit parts (kBlockK / 4 x parts) and O (d / 2) fit the
// consumers' 240 registers without spills (with 128 keys they spilled, see
// HAL_ATTENTION_SM90A_OVERLAP_SCHEDULES; bf16 d 128 still spilled 40 bytes
// at 64 keys).
inline constexpr int attention_sm90a_block_k(AttentionSm90aSchedule s, int d, bool bf16) {
  return s == AttentionSm90aSchedule::serial ? 128 : (d == 128 && bf16 ? 32 : 64);
}
// The tile a schedule's kernels are built with (kSchedule: AttentionSm90aSchedule's value).
template <int D, int kSchedule, bool kBf16>
using AttentionSm90aScheduleTile =
    AttentionSm90aTile<D, attention_sm90a_block_k(static_cast<AttentionSm90aSchedule>(kSchedule), D, kBf16)>;

// Dynamic shared memory of a schedule's kernel (its tile's ring, Q, y
// staging where it stores y by TMA, barriers, alignment slack).
inline constexpr int attention_sm90a_shared_bytes(AttentionSm90aSchedule s, int d, bool bf16) {
  const int bk = attention_sm90a_block_k(s, d, bf16);
  if (d == 64)
    return bk == 128 ? AttentionSm90aTile<64, 128>::shared_bytes(s) : AttentionSm90aTile<64, 64>::shared_bytes(s);
  return bk == 128 ? AttentionSm90aTile<128, 128>::shared_bytes(s)
         : bk == 64 ? AttentionSm90aTile<128, 64>::shared_bytes(s)
                    : AttentionSm90aTile<128, 32>::shared_bytes(s);
}

// Keys [0, attention_sm90a_kv_unmasked) are visible to EVERY query of
// [q0, q0 + rows) that exists: key tiles below it skip the mask.
#if defined(__CUDACC__)
__host__ __device__
#endif
inline int64_t attention_sm90a_kv_unmasked(int64_t q0, int64_t sq, int64_t sk, bool causal) {
  if (!causal) return sk;
  const int64_t lim = q0 + (sk - sq) + 1;
  return lim < 0 ? 0 : (lim < sk ? lim : sk);
}

// The last key of tile n0 a row sees, relative to n0 (key n0 + c visible
// iff c <= the limit), clamped to [-1, block_k]: keys >= sk never, under
// the causal mask keys > diag (the row's index + sk - sq) neither. The
// overlap / pingpong softmax masks with it (one 32-bit compare an element);
// the same mask as the serial one's per-element test
// (tests/unit/attention_sm90a_plan_test.cpp).
#if defined(__CUDACC__)
__host__ __device__
#endif
inline int attention_sm90a_key_limit(int64_t n0, int64_t sk, bool causal, int64_t diag, int block_k) {
  int64_t lim = sk - 1 - n0;
  if (causal && diag - n0 < lim) lim = diag - n0;
  return static_cast<int>(lim < -1 ? -1 : (lim > block_k ? block_k : lim));
}

// The persistent scheduler's order of work items (query tile m, head h,
// batch b), a bijection of [0, m_tiles * hq * batch): query tiles from the
// last to the first, so under a causal mask the longest items (they see the
// most keys) start first and the short ones fill the tail (longest
// processing time first); within one query tile heads vary fastest, so the
// hq / hkv query heads that read one kv head run side by side and share it
// in L2. CTA c takes items c, c + grid, c + 2 grid, ... (static: the same
// work lands on the same CTA every run).
struct AttentionWorkItem {
  int32_t m, h, b;
};

// 32-bit: the launcher keeps m_tiles * hq * batch below 2^31 (the producer
// warpgroup runs in 24 registers, where 64-bit division spills).
#if defined(__CUDACC__)
__host__ __device__
#endif
inline AttentionWorkItem attention_sm90a_work_item(int32_t item, int32_t m_tiles, int32_t hq, int32_t batch) {
  const int32_t per_tile = hq * batch;  // items of one query tile
  const int32_t tile = item / per_tile, rest = item - tile * per_tile;
  return AttentionWorkItem{m_tiles - 1 - tile, rest % hq, rest / hq};
}

struct AttentionSm90aParams {
  TmaDescriptorBytes q_map;  // Q as (d, sq, hq, batch); box {64, kBlockQ, 1, 1}, 128B swizzle
  TmaDescriptorBytes k_map;  // K as (d, sk, hkv, batch); box {64, kBlockK, 1, 1}
  TmaDescriptorBytes v_map;  // V as (dv, sk, hkv, batch); box {64, kBlockK, 1, 1}
  // y as (dv, sq, hq, batch); box {64, kYRowsPerConsumer, 1, 1}: the TMA
  // store of the overlap and pingpong schedules (serial leaves it unset).
  TmaDescriptorBytes y_map;
  // Sizes, y (serial: written from registers, channel stride 1, 4-byte
  // aligned pairs; overlap / pingpong: through y_map), scale, causal and the optional lse (f32 [b, sq, hq], natural
  // log-sum-exp, -inf for a row with no visible key); its q/k/v pointers are
  // not read (the maps are).
  kernel_params::AttentionParams a;
  int32_t m_tiles = 0;  // ceil(sq / kBlockQ)
  int32_t items = 0;    // m_tiles * hq * batch, < 2^31
};

}  // namespace hal::ptx
