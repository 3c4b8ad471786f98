// embedding_backward, the HIP twin of ptx/kernels/embedding_backward.cu (the
// same kernels, names, order and arithmetic; see there and
// kernel_params/embedding.h): dtable[ids[p], :] += dy[p, :], deterministic,
// with no float atomics. The positions are grouped by id with a bitonic sort
// of the unique 64-bit keys id << 32 | position (one sorted order whatever
// the schedule); each (segment, column) is one work item that starts from
// dtable's value, adds the segment's dy rows in ascending position order in
// fp32 and rounds once, as cpu_ref. Only shared memory and barriers, no wave
// intrinsics, so wave64 changes nothing.
//
// Compiled, never run on a GPU: declined unless HAL_GPU_UNVERIFIED=1.
#include <hip/hip_runtime.h>
#include <stdint.h>

#include "hip/element.h"
#include "kernel_params/embedding.h"

using namespace hal::hip;
using namespace hal::kernel_params;

namespace {

constexpr int kThreads = kEmbeddingBackwardThreads;
constexpr int kChunk = static_cast<int>(kEmbeddingSortChunk);
constexpr int kItems = kEmbeddingSegmentItems;
constexpr int64_t kTile = kEmbeddingSegmentTile;

__device__ __forceinline__ int64_t load_id(const EmbeddingBackwardParams& p, int64_t pos) {
  const int64_t off = strided_offset(p.ids_shape, p.ids_strides, pos);
  return p.ids_are_i64 != 0 ? static_cast<const int64_t*>(p.ids)[off]
                            : static_cast<int64_t>(static_cast<const int32_t*>(p.ids)[off]);
}

// Distances j_first .. 1 of bitonic stage k on the chunk held in s, whose
// first key has global index base (the direction depends on the global index).
__device__ __forceinline__ void shared_stages(uint64_t* s, int64_t base, int64_t k, int j_first) {
  for (int j = j_first; j > 0; j >>= 1) {
    for (int q = threadIdx.x; q < kChunk / 2; q += kThreads) {
      const int low = static_cast<int>(bitonic_low(q, j));
      bitonic_exchange(s[low], s[low + j], bitonic_ascending(base + low, k));
    }
    __syncthreads();
  }
}

__device__ __forceinline__ void load_chunk(uint64_t* s, const uint64_t* keys) {
  for (int i = threadIdx.x; i < kChunk; i += kThreads) s[i] = keys[i];
  __syncthreads();
}
__device__ __forceinline__ void store_chunk(const uint64_t* s, uint64_t* keys) {
  for (int i = threadIdx.x; i < kChunk; i += kThreads) keys[i] = s[i];
  __syncthreads();  // s is refilled by the next chunk
}

// Inclusive prefix sum over the block (Hillis-Steele in shared memory); every
// thread leaves with its own value, and s[kThreads - 1] holds the total until
// the next call.
__device__ __forceinline__ int64_t block_inclusive_scan(int64_t v, int64_t* s) {
  s[threadIdx.x] = v;
  __syncthreads();
  for (int off = 1; off < kThreads; off <<= 1) {
    const int64_t add = threadIdx.x >= off ? s[threadIdx.x - off] : 0;
    __syncthreads();
    s[threadIdx.x] += add;
    __syncthreads();
  }
  return s[threadIdx.x];
}

// Segment starts among this thread's kItems consecutive sorted indices of a tile.
__device__ __forceinline__ int64_t thread_starts(const EmbeddingBackwardParams& p, int64_t first) {
  int64_t n = 0;
  for (int e = 0; e < kItems; ++e) {
    const int64_t i = first + e;
    if (i < p.count && embedding_segment_starts(p.keys, i)) ++n;
  }
  return n;
}

}  // namespace

// One block: the smallest position whose id lies outside [0, vocab).
extern "C" __global__ __launch_bounds__(kThreads) void hal_embedding_backward_check(EmbeddingBackwardParams p) {
  __shared__ int64_t bad_pos[kThreads];
  __shared__ int64_t bad_value[kThreads];
  int64_t bad = -1, value = 0;
  for (int64_t i = threadIdx.x; i < p.count; i += kThreads) {
    const int64_t id = load_id(p, i);
    if (id < 0 || id >= p.vocab) {  // this lane's positions ascend: its first is its smallest
      bad = i;
      value = id;
      break;
    }
  }
  bad_pos[threadIdx.x] = bad;
  bad_value[threadIdx.x] = value;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      const int64_t b = bad_pos[threadIdx.x + half];
      if (b >= 0 && (bad_pos[threadIdx.x] < 0 || b < bad_pos[threadIdx.x])) {
        bad_pos[threadIdx.x] = b;
        bad_value[threadIdx.x] = bad_value[threadIdx.x + half];
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    p.check->bad_pos = bad_pos[0];
    p.check->bad_value = bad_value[0];
  }
}

// key[i] = id << 32 | i, the padding all ones (sorted last). A bad id makes a
// meaningless key, never an address: the launcher throws before the
// accumulate reads any key.
extern "C" __global__ __launch_bounds__(kThreads) void hal_embedding_backward_keys(EmbeddingBackwardParams p) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < p.padded;
       i += static_cast<int64_t>(gridDim.x) * kThreads)
    p.keys[i] = i < p.count ? embedding_key(load_id(p, i), i) : kEmbeddingPadKey;
}

// Every stage k <= kChunk, one chunk per block (grid-stride over chunks).
extern "C" __global__ __launch_bounds__(kThreads) void hal_embedding_backward_sort_local(EmbeddingBackwardParams p) {
  __shared__ uint64_t s[kChunk];
  const int64_t chunks = p.padded / kChunk;
  for (int64_t b = blockIdx.x; b < chunks; b += gridDim.x) {
    load_chunk(s, p.keys + b * kChunk);
    for (int k = 2; k <= kChunk; k <<= 1) shared_stages(s, b * kChunk, k, k / 2);
    store_chunk(s, p.keys + b * kChunk);
  }
}

// Stage sort_k, distance sort_j >= kChunk, in global memory (a thread per pair).
extern "C" __global__ __launch_bounds__(kThreads) void hal_embedding_backward_sort_step(EmbeddingBackwardParams p) {
  const int64_t pairs = p.padded / 2;
  for (int64_t q = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; q < pairs;
       q += static_cast<int64_t>(gridDim.x) * kThreads) {
    const int64_t low = bitonic_low(q, p.sort_j);
    uint64_t a = p.keys[low], b = p.keys[low + p.sort_j];
    bitonic_exchange(a, b, bitonic_ascending(low, p.sort_k));
    p.keys[low] = a;
    p.keys[low + p.sort_j] = b;
  }
}

// Stage sort_k, distances kChunk / 2 .. 1, one chunk per block in shared memory.
extern "C" __global__ __launch_bounds__(kThreads) void hal_embedding_backward_sort_merge(EmbeddingBackwardParams p) {
  __shared__ uint64_t s[kChunk];
  const int64_t chunks = p.padded / kChunk;
  for (int64_t b = blockIdx.x; b < chunks; b += gridDim.x) {
    load_chunk(s, p.keys + b * kChunk);
    shared_stages(s, b * kChunk, p.sort_k, kChunk / 2);
    store_chunk(s, p.keys + b * kChunk);
  }
}

// Segment starts per tile of kTile sorted indices.
extern "C" __global__ __launch_bounds__(kThreads) void hal_embedding_backward_segments_count(EmbeddingBackwardParams p) {
  __shared__ int64_t s[kThreads];
  for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    const int64_t n = block_inclusive_scan(thread_starts(p, t * kTile + threadIdx.x * kItems), s);
    (void)n;
    if (threadIdx.x == kThreads - 1) p.tile_counts[t] = s[kThreads - 1];
    __syncthreads();
  }
}

// One block: the tiles' exclusive offsets, the number of segments, and the
// end of the last segment (segment_begin[segments] = count).
extern "C" __global__ __launch_bounds__(kThreads) void hal_embedding_backward_segments_scan(EmbeddingBackwardParams p) {
  __shared__ int64_t s[kThreads];
  int64_t carry = 0;
  for (int64_t base = 0; base < p.tiles; base += kThreads) {
    const int64_t t = base + threadIdx.x;
    const int64_t v = t < p.tiles ? p.tile_counts[t] : 0;
    const int64_t incl = block_inclusive_scan(v, s);
    if (t < p.tiles) p.tile_offsets[t] = carry + incl - v;
    carry += s[kThreads - 1];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    *p.segments = carry;
    p.segment_begin[carry] = p.count;
  }
}

// segment_begin[k] = the sorted index where segment k starts.
extern "C" __global__ __launch_bounds__(kThreads) void hal_embedding_backward_segments_write(EmbeddingBackwardParams p) {
  __shared__ int64_t s[kThreads];
  for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    const int64_t first = t * kTile + threadIdx.x * kItems;
    const int64_t mine = thread_starts(p, first);
    int64_t at = p.tile_offsets[t] + block_inclusive_scan(mine, s) - mine;
    for (int e = 0; e < kItems; ++e) {
      const int64_t i = first + e;
      if (i < p.count && embedding_segment_starts(p.keys, i)) p.segment_begin[at++] = i;
    }
    __syncthreads();
  }
}

// A group of group_width threads per segment, a thread per column: the
// column's value in dtable, plus dy of each position in ascending order (the
// sorted keys of one id are in position order), stored once. No barrier here,
// so a thread past the last column leaves at once.
extern "C" __global__ __launch_bounds__(kThreads) void hal_embedding_backward_accumulate(EmbeddingBackwardParams p) {
  const int w = p.group_width;
  const int groups = kThreads / w;
  const int g = static_cast<int>(threadIdx.x) / w;
  const int64_t j = static_cast<int64_t>(blockIdx.y) * w + (static_cast<int>(threadIdx.x) - g * w);
  if (j >= p.dim) return;
  const int32_t dt = p.dy_type, tt = p.table_type;
  const int64_t segments = *p.segments;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * groups + g; k < segments;
       k += static_cast<int64_t>(gridDim.x) * groups) {
    const int64_t begin = p.segment_begin[k], end = p.segment_begin[k + 1];
    const int64_t id = embedding_key_id(p.keys[begin]);
    if (id < 0 || id >= p.vocab) continue;  // unreachable after the check; never write out of bounds
    const int64_t at = id * p.table_row_stride + j * p.table_col_stride;
    float acc = load_f32(p.dtable, tt, at);
    for (int64_t e = begin; e < end; ++e) {
      const int64_t pos = embedding_key_pos(p.keys[e]);
      acc += load_f32(p.dy, dt, strided_offset(p.ids_shape, p.dy_row_strides, pos) + j * p.dy_col_stride);
    }
    store_f32(p.dtable, tt, at, acc);
  }
}
