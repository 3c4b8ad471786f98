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

}  // namespace hal::kernel_params
