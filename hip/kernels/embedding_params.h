#pragma once
// Parameters of hip/kernels/embedding.hip. Plain host/device header.
//
// Two kernels: embedding_check_ids (one block of 256 threads) writes the
// smallest and largest id to an IdRange in device memory; the launcher reads
// it back and throws invalid_argument before the gather ever runs, so an
// out-of-range id is never used as an address.
#include "elementwise_params.h"

namespace hal::hip::kernels {

struct IdRange {
  int64_t min_id;
  int64_t max_id;
};

struct EmbeddingCheckParams {
  const void* ids;
  IdRange* range;
  int64_t count;
  int32_t ids_are_i64;
  int32_t pad_;
  KernelShape ids_shape;
  KernelStrides ids_strides;
};

// y[i..., :] = table[ids[i...], :], raw element bits (elem_bytes 1, 2, 4, 8).
struct EmbeddingGatherParams {
  const void* table;
  const void* ids;
  void* y;
  int64_t count, dim, vocab;
  int64_t table_row_stride, table_col_stride;
  int64_t y_col_stride;
  int32_t ids_are_i64;
  int32_t elem_bytes;
  KernelShape ids_shape;
  KernelStrides ids_strides;
  KernelStrides y_row_strides;  // y's strides over the ids dims
};

}  // namespace hal::hip::kernels
