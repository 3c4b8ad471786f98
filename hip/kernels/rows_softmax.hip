// softmax / log_softmax over the last axis, with scale and an optional causal
// mask. One workgroup per row, three passes over the row in global memory
// (max, sum of exp, write): simple and correct for any row length and
// stride; rows are re-read from L2. A NaN anywhere in the row makes the sum
// NaN and so every output NaN; a fully masked row gives 0 (softmax) or -inf
// (log_softmax), as hal/op.h specifies.
#include "rows_common.h"

using namespace hal::hip;
using namespace hal::hip::kernels;

extern "C" __global__ __launch_bounds__(kRowThreads) void hal_softmax(SoftmaxParams p) {
  __shared__ float scratch[kRowWaves];
  const RowsLayout& l = p.layout;
  for (int64_t r = blockIdx.x; r < l.rows; r += gridDim.x) {
    const RowOffsets o = row_offsets(l, r);
    // Keys j > limit are masked (limit = i + Lk - Lq); no mask: all cols.
    int64_t limit = l.cols - 1;
    if (p.causal) limit = o.last_coord + (l.cols - l.outer_shape[l.outer_rank - 1]);
    const int64_t valid = limit + 1 < l.cols ? (limit + 1 > 0 ? limit + 1 : 0) : l.cols;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < valid; j += kRowThreads)
      m = fmaxf(m, p.scale * load_f32(p.x, p.x_type, o.x + j * l.x_col_stride));
    m = block_reduce<kRowWaves, ReduceOp::max>(m, scratch);
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < valid; j += kRowThreads)
      s += expf(p.scale * load_f32(p.x, p.x_type, o.x + j * l.x_col_stride) - m);
    s = block_reduce<kRowWaves, ReduceOp::sum>(s, scratch);
    const float log_s = logf(s);
    for (int64_t j = threadIdx.x; j < l.cols; j += kRowThreads) {
      float v;
      if (j >= valid) {
        v = p.log ? -INFINITY : 0.0f;
      } else {
        const float z = p.scale * load_f32(p.x, p.x_type, o.x + j * l.x_col_stride) - m;
        v = p.log ? z - log_s : expf(z) / s;
      }
      store_f32(p.y, p.y_type, o.y + j * l.y_col_stride, v);
    }
  }
}
