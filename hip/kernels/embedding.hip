// embedding: an id range check (one block, min/max reduction) and the gather.
// The gather clamps nothing: the launcher has already rejected the call if
// any id was out of [0, vocab), before this kernel is queued.
#include <hip/hip_runtime.h>

#include "kernel_params/embedding.h"

using namespace hal::kernel_params;

namespace {
__device__ __forceinline__ int64_t load_id(const void* ids, int32_t is_i64, int64_t off) {
  return is_i64 ? static_cast<const int64_t*>(ids)[off] : static_cast<int64_t>(static_cast<const int32_t*>(ids)[off]);
}

template <class T>
__device__ __forceinline__ void gather(const EmbeddingGatherParams& p) {
  const int64_t total = p.count * p.dim;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t row = i / p.dim, col = i - row * p.dim;
    const int64_t id = load_id(p.ids, p.ids_are_i64, strided_offset(p.ids_shape, p.ids_strides, row));
    const int64_t yoff = strided_offset(p.ids_shape, p.y_row_strides, row) + col * p.y_col_stride;
    static_cast<T*>(p.y)[yoff] = static_cast<const T*>(p.table)[id * p.table_row_stride + col * p.table_col_stride];
  }
}
}  // namespace

extern "C" __global__ __launch_bounds__(256) void embedding_check_ids(EmbeddingCheckParams p) {
  __shared__ int64_t lo[256], hi[256];
  int64_t mn = INT64_MAX, mx = INT64_MIN;
  for (int64_t i = threadIdx.x; i < p.count; i += blockDim.x) {
    const int64_t id = load_id(p.ids, p.ids_are_i64, strided_offset(p.ids_shape, p.ids_strides, i));
    mn = id < mn ? id : mn;
    mx = id > mx ? id : mx;
  }
  lo[threadIdx.x] = mn;
  hi[threadIdx.x] = mx;
  __syncthreads();
  for (int s = 128; s > 0; s /= 2) {
    if (static_cast<int>(threadIdx.x) < s) {
      lo[threadIdx.x] = lo[threadIdx.x + s] < lo[threadIdx.x] ? lo[threadIdx.x + s] : lo[threadIdx.x];
      hi[threadIdx.x] = hi[threadIdx.x + s] > hi[threadIdx.x] ? hi[threadIdx.x + s] : hi[threadIdx.x];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    p.range->min_id = lo[0];
    p.range->max_id = hi[0];
  }
}

extern "C" __global__ __launch_bounds__(256) void embedding_gather(EmbeddingGatherParams p) {
  switch (p.elem_bytes) {
    case 1: gather<uint8_t>(p); break;
    case 2: gather<uint16_t>(p); break;
    case 4: gather<uint32_t>(p); break;
    case 8: gather<uint64_t>(p); break;
  }
}
