#pragma once
// Parameters of the row kernels (hip/kernels/rows_*.hip): softmax, layernorm
// / rmsnorm, reduce and rope. Plain host/device header: no HIP include.
//
// Every tensor is passed as the address of its first element plus strides in
// ELEMENTS, so any strided view is accepted. Element types use hal::DType's
// numbering (hip/element.h ElemType).
#include <stdint.h>

namespace hal::hip::kernels {

inline constexpr int kRowsMaxOuterRank = 7;
// One workgroup of kRowThreads threads (4 waves of 64) works on one row.
inline constexpr int kRowThreads = 256;

// `rows` rows of `cols` elements. Row r has outer coordinates given by r in
// row-major order over outer_shape; its first element is at
// x + sum(coord_i * x_outer_stride_i), likewise for y.
struct RowsLayout {
  int32_t outer_rank;
  int32_t pad_;
  int64_t outer_shape[kRowsMaxOuterRank];
  int64_t x_outer_stride[kRowsMaxOuterRank];
  int64_t y_outer_stride[kRowsMaxOuterRank];
  int64_t rows;
  int64_t cols;
  int64_t x_col_stride;
  int64_t y_col_stride;
  // 16-byte vector path flags, decided by the launcher (backends/hip/hip_rows.cpp):
  // x_vec16: x is f32/f16/bf16, x_col_stride == 1 and every row of x starts on
  //   a 16-byte boundary (first element aligned, every outer stride of an
  //   extent > 1 a multiple of 16 bytes), so a lane loads 16-byte chunks
  //   (4 x f32, 8 x f16/bf16) of the row: chunk k covers columns
  //   [k * 16/size, (k+1) * 16/size); the last cols % (16/size) columns are
  //   read one by one.
  // y_vec16 (implies x_vec16): the same holds for y, and y's elements have
  //   x's size, so a chunk of x maps to one 16-byte chunk of y.
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
  // weight / bias contiguous (stride 1), 16-byte aligned and of x's element
  // size while x_vec16: read as 16-byte chunks next to x's chunks.
  int32_t weight_vec16;
  int32_t bias_vec16;
};

// kind: hal::ReduceKind (sum=0, mean=1, max=2, min=3, argmax=4). The rows are
// the reduced lines: cols = reduced extent, x_col_stride its stride; outer
// dims are x's other dims; y is written at the row's y offset (argmax: i64).
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
  int32_t pad_;
  const float* inv_freq;  // per-pair frequencies (f32); nullptr: theta^(-2i/r)
  int64_t inv_freq_stride;
};

}  // namespace hal::hip::kernels
