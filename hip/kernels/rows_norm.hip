// layernorm / rmsnorm over the last axis. One workgroup per row. layernorm
// uses two passes (mean, then the sum of squared deviations) rather than
// E[x^2] - mean^2, which cancels catastrophically for rows with a large mean.
#include "rows_common.h"

using namespace hal::hip;
using namespace hal::hip::kernels;

extern "C" __global__ __launch_bounds__(kRowThreads) void hal_norm(NormParams p) {
  __shared__ float scratch[kRowWaves];
  const RowsLayout& l = p.layout;
  const float inv_n = 1.0f / static_cast<float>(l.cols);
  for (int64_t r = blockIdx.x; r < l.rows; r += gridDim.x) {
    const RowOffsets o = row_offsets(l, r);
    float mean = 0.0f;
    if (!p.rms) {
      float s = 0.0f;
      for (int64_t j = threadIdx.x; j < l.cols; j += kRowThreads) s += load_f32(p.x, p.x_type, o.x + j * l.x_col_stride);
      mean = block_reduce<kRowWaves, ReduceOp::sum>(s, scratch) * inv_n;
    }
    float ss = 0.0f;
    for (int64_t j = threadIdx.x; j < l.cols; j += kRowThreads) {
      const float d = load_f32(p.x, p.x_type, o.x + j * l.x_col_stride) - mean;
      ss += d * d;
    }
    ss = block_reduce<kRowWaves, ReduceOp::sum>(ss, scratch);
    const float inv_std = 1.0f / sqrtf(ss * inv_n + p.eps);
    for (int64_t j = threadIdx.x; j < l.cols; j += kRowThreads) {
      const float xv = load_f32(p.x, p.x_type, o.x + j * l.x_col_stride);
      float v = (xv - mean) * inv_std * load_f32(p.weight, p.weight_type, j * p.weight_stride);
      if (p.bias) v += load_f32(p.bias, p.bias_type, j * p.bias_stride);
      store_f32(p.y, p.y_type, o.y + j * l.y_col_stride, v);
    }
  }
}
