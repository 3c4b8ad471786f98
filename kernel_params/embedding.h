#pragma once
// Parameters of embedding (ptx/kernels/embedding.cu, hip/kernels/embedding.hip);
// packed by the shared launcher backends/gpu/embedding_launcher.h.
//
// Two kernels: embedding_check_ids (one block / workgroup of 256 threads)
// writes the smallest and largest id to an IdRange in device memory; the
// launcher reads it back and throws invalid_argument before the gather ever
// runs, so an out-of-range id is never used as an address.
#include "kernel_params/strided.h"

namespace hal::kernel_params {

// Result of embedding_check_ids: smallest and largest id seen.
struct IdRange {
  int64_t min_id;
  int64_t max_id;
};

// One block scans every id (strided over ids' shape) and writes their range.
struct EmbeddingCheckParams {
  const void* ids;
  IdRange* range;  // device memory, written by thread 0
  int64_t count;   // number of ids
  int32_t ids_are_i64;
  int32_t pad_;
  KernelShape ids_shape;
  KernelStrides ids_strides;
};

// y[p, j] = table[ids[p], j] as raw bits of `elem_bytes` (1, 2, 4 or 8; table
// and y share a dtype). Ids were checked to lie in [0, vocab) before this
// runs; the kernels still skip any id outside that range rather than read out
// of bounds.
struct EmbeddingGatherParams {
  const void* table;
  const void* ids;
  void* y;
  int64_t count;  // number of ids
  int64_t dim;    // row length
  int64_t vocab;
  int64_t table_row_stride, table_col_stride;  // elements
  int64_t y_col_stride;                        // elements (last axis of y)
  int32_t ids_are_i64;
  int32_t elem_bytes;
  KernelShape ids_shape;
  KernelStrides ids_strides;
  KernelStrides y_row_strides;  // y's strides over ids' axes
};


// --- embedding_backward ------------------------------------------------------
//
// dtable[ids[p], :] += dy[p, :] (hal/op_training.h EmbeddingBackwardCall),
// deterministic and without float atomics, in kernels on one parameter struct
// (ptx/kernels/embedding_backward.cu, hip/kernels/embedding_backward.hip; the
// launcher is backends/gpu/training_launcher.h, its plan
// backends/gpu/embedding_backward_plan.h):
//   hal_embedding_backward_check     one block: the first position whose id is
//                                    outside [0, vocab) (read back; the
//                                    launcher throws before dtable is touched);
//   hal_embedding_backward_keys      key[p] = id << 32 | p for p < count, all
//                                    ones for the padding up to `padded`;
//   hal_embedding_backward_sort_*    a bitonic sort of the keys (ascending).
//                                    The keys are unique, so the sorted order
//                                    is the one order of (id, position) --
//                                    whatever network sorts them;
//   hal_embedding_backward_segments_{count,scan,write}
//                                    the first sorted index of every run of
//                                    one id (a segment), in sorted order;
//   hal_embedding_backward_accumulate
//                                    per (segment, column): acc = dtable's
//                                    value, += dy of each position in
//                                    ascending order in fp32, one rounding
//                                    into dtable -- cpu_ref's order exactly.

// The check's result: bad_pos = -1 when every id is in range.
struct EmbeddingBackwardCheck {
  int64_t bad_pos;
  int64_t bad_value;
};

inline constexpr int kEmbeddingBackwardThreads = 256;
// Keys one block sorts in shared memory (16 KiB of uint64); padded >= it.
inline constexpr int64_t kEmbeddingSortChunk = 2048;
// Sorted keys one block of the segment kernels covers: 8 per thread.
inline constexpr int kEmbeddingSegmentItems = 8;
inline constexpr int64_t kEmbeddingSegmentTile = kEmbeddingBackwardThreads * kEmbeddingSegmentItems;
inline constexpr uint64_t kEmbeddingPadKey = ~uint64_t{0};

struct EmbeddingBackwardParams {
  const void* ids;
  const void* dy;
  void* dtable;
  EmbeddingBackwardCheck* check;  // scratch
  uint64_t* keys;                 // scratch, `padded` keys
  int64_t* tile_counts;           // scratch, `tiles` (segments starting in each tile)
  int64_t* tile_offsets;          // scratch, `tiles` (their exclusive prefix sum)
  int64_t* segment_begin;         // scratch, count + 1 (first sorted index of each segment, then count)
  int64_t* segments;              // scratch, 1 (the number of segments)
  int64_t count;                  // positions (ids.numel())
  int64_t padded;                 // power of two >= max(count, kEmbeddingSortChunk)
  int64_t tiles;                  // ceil(count / kEmbeddingSegmentTile)
  int64_t vocab, dim;
  int64_t table_row_stride, table_col_stride;  // elements
  int64_t dy_col_stride;                       // elements (dy's last axis)
  int64_t sort_k, sort_j;  // the bitonic stage of this launch (sort_step: both; sort_merge: k)
  int32_t ids_are_i64;
  int32_t dy_type, table_type;  // hal::DType numbering: f32, f16, bf16
  int32_t group_width;          // accumulate: threads per segment (32, 64, 128 or 256), columns per block
  KernelShape ids_shape;
  KernelStrides ids_strides;
  KernelStrides dy_row_strides;  // dy's strides over ids' axes
};

// The bitonic network, shared by the kernels and the host model of the plan
// (tests/unit/gpu_embedding_backward_plan_test.cpp). Pair q of a stage with
// distance j compares index low = bitonic_low(q, j) with low + j; the pair is
// put in ascending order when bit k of low is 0 (k = the stage's block size;
// k = padded, the last stage, is ascending everywhere), descending otherwise.
HAL_HOST_DEVICE inline int64_t bitonic_low(int64_t q, int64_t j) { return ((q & ~(j - 1)) << 1) | (q & (j - 1)); }
HAL_HOST_DEVICE inline bool bitonic_ascending(int64_t low, int64_t k) { return (low & k) == 0; }
HAL_HOST_DEVICE inline void bitonic_exchange(uint64_t& a, uint64_t& b, bool ascending) {
  if ((a > b) == ascending) {
    const uint64_t t = a;
    a = b;
    b = t;
  }
}

HAL_HOST_DEVICE inline uint64_t embedding_key(int64_t id, int64_t pos) {
  return (static_cast<uint64_t>(id) << 32) | static_cast<uint64_t>(pos);
}
HAL_HOST_DEVICE inline int64_t embedding_key_id(uint64_t key) { return static_cast<int64_t>(key >> 32); }
HAL_HOST_DEVICE inline int64_t embedding_key_pos(uint64_t key) { return static_cast<int64_t>(key & 0xffffffffu); }
// Sorted index i starts a segment (i < count).
HAL_HOST_DEVICE inline bool embedding_segment_starts(const uint64_t* keys, int64_t i) {
  return i == 0 || (keys[i] >> 32) != (keys[i - 1] >> 32);
}

}  // namespace hal::kernel_params
