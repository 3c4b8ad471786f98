#pragma once
// Parameter structs of ptx/kernels/embedding.cu.
#include "elementwise_params.h"

namespace hal::ptx {

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

// y[p, j] = table[ids[p], j] as raw bits of `elem_bytes` (table and y share a
// dtype). Ids were checked to lie in [0, vocab) before this runs; the kernel
// still skips any id outside that range rather than read out of bounds.
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

}  // namespace hal::ptx
