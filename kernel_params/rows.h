#pragma once
// Parameters of the row kernels: softmax, layernorm / rmsnorm, reduce and
// rope (ptx/kernels/rows_*.cu, hip/kernels/rows_*.hip); packed by
// backends/gpu/rows_args.h.
//
// Every tensor is passed as the address of its first element plus strides in
// ELEMENTS, so any strided view is accepted.
#include <stdint.h>

namespace hal::kernel_params {

inline constexpr int kRowsMaxOuterRank = 7;

// `rows` rows of `cols` elements. Row r has outer coordinates given by r in
// row-major order over outer_shape; its first element is at
// x + sum(coord_i * x_outer_stride_i), likewise for y.
//
// x_vec16: every row of x is unit-stride, starts on a 16-byte boundary
// (first element aligned, every outer stride of an extent > 1 a multiple of
// 16 bytes) and holds f32, f16 or bf16, so a kernel may read it in 16-byte
// chunks, 4 x f32 or 8 x f16/bf16, and the last columns that fill no chunk
// one by one. y_vec16 (implies x_vec16): the same holds for y, and y's
// elements have x's size, so a chunk of x maps to one 16-byte chunk of y.
struct RowsLayout {
  int32_t outer_rank;
  // CUDA extension: threads cooperating on one row, picked by
  // backends/cuda/cuda_rows.cpp: 1 (a thread per strided reduce line), 32 (a
  // warp) or 256 (the whole block); the rows_reg kernels also 64 or 128. The
  // HIP kernels give every row one workgroup and do not read it.
  int32_t cuda_threads_per_row;
  int64_t outer_shape[kRowsMaxOuterRank];
  int64_t x_outer_stride[kRowsMaxOuterRank];
  int64_t y_outer_stride[kRowsMaxOuterRank];
  int64_t rows;
  int64_t cols;
  int64_t x_col_stride;
  int64_t y_col_stride;
  int32_t x_vec16;
  int32_t y_vec16;
};

struct SoftmaxParams {
  RowsLayout layout;
  const void* x;
  void* y;
  int32_t x_type, y_type;
  float scale;
  int32_t causal;  // query index = last outer coordinate; Lq = its extent, Lk = cols
  int32_t log;
  int32_t pad_;
};

// LayerNorm (rms == 0) or RMSNorm over each row, weight and bias [cols].
// weight_vec16 / bias_vec16 (imply x_vec16): the vector is unit-stride (or
// of one element), 16-byte aligned and of x's element size, so it is read in
// 16-byte chunks next to x's.
struct NormParams {
  RowsLayout layout;
  const void* x;
  void* y;
  const void* weight;
  const void* bias;  // nullptr: no bias
  int64_t weight_stride, bias_stride;
  int32_t x_type, y_type, weight_type, bias_type;
  float eps;
  int32_t rms;
  int32_t weight_vec16;
  int32_t bias_vec16;
};

// kind: hal::ReduceKind (sum=0, mean=1, max=2, min=3, argmax=4). The rows are
// the reduced lines: cols = the reduced extent, x_col_stride its stride;
// outer dims are x's other dims (y's dims, keepdim's size-1 axis dropped), so
// a reduce over any axis is one strided row each; y is written at the row's y
// offset (argmax: i64).
struct ReduceParams {
  RowsLayout layout;
  const void* x;
  void* y;
  int32_t x_type, y_type;
  int32_t kind;
  int32_t pad_;
};

// x, y: [batch, seq, heads, head_dim], any strides; positions i32 [batch,
// seq] (pos_batch_stride != 0) or [seq] (pos_batch_stride == 0).
struct RopeParams {
  const void* x;
  void* y;
  const int32_t* positions;
  int64_t shape[4];
  int64_t x_stride[4];
  int64_t y_stride[4];
  int64_t pos_batch_stride, pos_seq_stride;
  int32_t x_type, y_type;
  int32_t rotary_dim;
  int32_t gptj;  // 0: neox pairs (i, i + r/2); 1: gptj pairs (2i, 2i+1)
  float theta;
  int32_t inverse;  // 1: rotate by -angle (rope_backward: the rotation's transpose); 0: rope
  const float* inv_freq;  // per-pair frequencies (f32); nullptr: theta^(-2i/r)
  int64_t inv_freq_stride;
};

}  // namespace hal::kernel_params
