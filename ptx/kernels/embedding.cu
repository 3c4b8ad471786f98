// Embedding lookup in two kernels, so an out-of-range id is never used as an
// address:
//   embedding_check_ids  ONE block scans all ids and writes their min and max
//                        to device memory; the launcher copies that back,
//                        SYNCHRONIZES the stream and throws invalid_argument
//                        before the gather is queued (the only host sync in
//                        the simple ops; ids are few, so one block suffices).
//   embedding_gather     y[p, :] = table[ids[p], :] as raw bits.
#include <stdint.h>

#include "kernel_params/embedding.h"

using namespace hal::kernel_params;

namespace {
constexpr int kCheckThreads = 256;

__device__ __forceinline__ int64_t load_id(const void* ids, bool i64, int64_t off) {
  return i64 ? static_cast<const int64_t*>(ids)[off] : static_cast<int64_t>(static_cast<const int32_t*>(ids)[off]);
}

template <class Word>
__device__ __forceinline__ void gather_words(const EmbeddingGatherParams& p) {
  const int64_t total = p.count * p.dim;
  const Word* table = static_cast<const Word*>(p.table);
  Word* y = static_cast<Word*>(p.y);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = i / p.dim;
    const int64_t col = i - row * p.dim;
    const int64_t id = load_id(p.ids, p.ids_are_i64 != 0, strided_offset(p.ids_shape, p.ids_strides, row));
    if (id < 0 || id >= p.vocab) continue;  // unreachable after the check; never read out of bounds
    const int64_t dst = strided_offset(p.ids_shape, p.y_row_strides, row) + col * p.y_col_stride;
    y[dst] = table[id * p.table_row_stride + col * p.table_col_stride];
  }
}
}  // namespace

extern "C" __global__ void __launch_bounds__(kCheckThreads) embedding_check_ids(const EmbeddingCheckParams p) {
  __shared__ int64_t mins[kCheckThreads];
  __shared__ int64_t maxs[kCheckThreads];
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (int64_t i = threadIdx.x; i < p.count; i += blockDim.x) {
    const int64_t id = load_id(p.ids, p.ids_are_i64 != 0, strided_offset(p.ids_shape, p.ids_strides, i));
    lo = id < lo ? id : lo;
    hi = id > hi ? id : hi;
  }
  mins[threadIdx.x] = lo;
  maxs[threadIdx.x] = hi;
  __syncthreads();
  for (int half = kCheckThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      const int64_t l = mins[threadIdx.x + half], h = maxs[threadIdx.x + half];
      if (l < mins[threadIdx.x]) mins[threadIdx.x] = l;
      if (h > maxs[threadIdx.x]) maxs[threadIdx.x] = h;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    p.range->min_id = mins[0];
    p.range->max_id = maxs[0];
  }
}

extern "C" __global__ void embedding_gather(const EmbeddingGatherParams p) {
  switch (p.elem_bytes) {
    case 1: gather_words<uint8_t>(p); return;
    case 2: gather_words<uint16_t>(p); return;
    case 4: gather_words<uint32_t>(p); return;
    case 8: gather_words<uint64_t>(p); return;
  }
}
