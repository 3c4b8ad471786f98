#pragma once
// Parameters of the row kernels (ptx/kernels/rows.cu): softmax, layernorm /
// rmsnorm, reduce and rope. Plain host/device header: no CUDA includes.
//
// Every tensor is passed as the address of its first element plus strides in
// ELEMENTS, so any strided view is accepted; `vec8` flags tell a kernel that
// a row is contiguous and 16-byte aligned and may be read 8 elements at a time.
// Element types use hal::DType's numbering (ptx/element.cuh ElemType).
#include <stdint.h>

namespace hal::ptx {

inline constexpr int kRowsMaxOuterRank = 7;

// Launch geometry shared by the row kernels (rows_common.cuh) and their
// launcher (backends/cuda/cuda_rows.cpp): 256-thread blocks; the "rows_reg"
// kernels hold a row in registers, at most kRegChunks 8-element chunks per
// thread, so rows of at most kRegMaxCols.
inline constexpr int kRowsBlockThreads = 256;
inline constexpr int kRegChunks = 4;
inline constexpr int64_t kRegMaxCols = 8LL * kRowsBlockThreads * kRegChunks;

// A set of `rows` rows of `cols` elements each. Row r has outer coordinates
// given by r in row-major order over outer_shape; the addresses of its first
// element are x + sum(coord_i * x_outer_stride_i) and likewise for y.
struct RowsLayout {
  int32_t outer_rank = 0;
  int64_t outer_shape[kRowsMaxOuterRank] = {};
  int64_t x_outer_stride[kRowsMaxOuterRank] = {};
  int64_t y_outer_stride[kRowsMaxOuterRank] = {};
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t x_col_stride = 1;
  int64_t y_col_stride = 1;
  // Rows of x (y) are contiguous, 16-byte aligned and of f32/f16/bf16 type.
  uint8_t x_vec8 = 0;
  uint8_t y_vec8 = 0;
  // Threads cooperating on one row: 32 (a warp) or 256 (the whole block);
  // the rows_reg kernels also 64 or 128 (their kernel of that group size).
  int32_t threads_per_row = 32;
};

struct SoftmaxParams {
  RowsLayout layout;
  const void* x = nullptr;
  void* y = nullptr;
  uint8_t x_type = 0, y_type = 0;
  float scale = 1.0f;
  uint8_t causal = 0;   // query index = last outer coordinate; Lq = its extent, Lk = cols
  uint8_t log = 0;
};

struct NormParams {
  RowsLayout layout;
  const void* x = nullptr;
  void* y = nullptr;
  const void* weight = nullptr;
  const void* bias = nullptr;  // nullptr: no bias
  int64_t weight_stride = 1, bias_stride = 1;
  uint8_t x_type = 0, y_type = 0, weight_type = 0, bias_type = 0;
  float eps = 1e-5f;
  uint8_t rms = 0;
};

// Reduce kinds mirror hal::ReduceKind: sum=0, mean=1, max=2, min=3, argmax=4.
// Rows here are the reduced lines: layout.cols is the reduced extent and
// x_col_stride its stride; outer dims are x's other dims (y's dims, keepdim's
// size-1 axis dropped), so a reduce over any axis is one strided row each.
struct ReduceParams {
  RowsLayout layout;
  const void* x = nullptr;
  void* y = nullptr;
  uint8_t x_type = 0, y_type = 0;
  int32_t kind = 0;
};

// x, y: [batch, seq, heads, head_dim] with arbitrary strides; positions i32
// [batch, seq] (pos_batch_stride != 0) or [seq] (pos_batch_stride == 0).
struct RopeParams {
  const void* x = nullptr;
  void* y = nullptr;
  const int32_t* positions = nullptr;
  int64_t shape[4] = {};
  int64_t x_stride[4] = {};
  int64_t y_stride[4] = {};
  int64_t pos_batch_stride = 0, pos_seq_stride = 1;
  uint8_t x_type = 0, y_type = 0;
  int32_t rotary_dim = 0;
  int32_t gptj = 0;  // 0: neox pairs (i, i + r/2); 1: gptj pairs (2i, 2i+1)
  float theta = 10000.0f;
  const float* inv_freq = nullptr;  // per-pair frequencies (f32); nullptr: theta^(-2i/r)
  int64_t inv_freq_stride = 1;
};

}  // namespace hal::ptx
