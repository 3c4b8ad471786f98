// LayerNorm / RMSNorm over the last axis, one row per warp (short rows) or per
// 256-thread block (long rows), for any strides and float dtypes.
//
// Two-pass statistics (mean, then the sum of squared deviations) rather than
// E[x^2] - E[x]^2, which cancels catastrophically for rows with a large mean;
// the row is re-read from global memory (it stays in L1/L2).
#include <math.h>

#include "ptx/kernels/rows_common.cuh"

using namespace hal::ptx;
using namespace hal::ptx::rows;

extern "C" __global__ void __launch_bounds__(kBlockThreads) hal_norm_rows(NormParams p) {
  __shared__ float scratch[kBlockThreads / 32];
  const RowsLayout& L = p.layout;
  const int T = L.threads_per_row;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (kBlockThreads / T) + threadIdx.x / T;
  const int lane = threadIdx.x % T;
  if (row >= L.rows) return;

  const ElemType xt = static_cast<ElemType>(p.x_type), yt = static_cast<ElemType>(p.y_type);
  const ElemType wt = static_cast<ElemType>(p.weight_type), bt = static_cast<ElemType>(p.bias_type);
  const RowOffsets o = row_offsets(L, row);
  const void* xrow = offset_ptr(p.x, xt, o.x);
  void* yrow = offset_ptr(p.y, yt, o.y);
  const float n = static_cast<float>(L.cols);
  const auto add = [](float a, float b) { return a + b; };

  float mean = 0.0f;
  float acc = 0.0f;
  if (p.rms) {
    for_each_in_row(xrow, xt, L.cols, L.x_col_stride, L.x_vec8, lane, T, [&](int64_t, float x) { acc += x * x; });
  } else {
    for_each_in_row(xrow, xt, L.cols, L.x_col_stride, L.x_vec8, lane, T, [&](int64_t, float x) { acc += x; });
    mean = group_allreduce(acc, T, add, scratch) / n;
    acc = 0.0f;
    for_each_in_row(xrow, xt, L.cols, L.x_col_stride, L.x_vec8, lane, T, [&](int64_t, float x) {
      const float d = x - mean;
      acc += d * d;
    });
  }
  const float var = group_allreduce(acc, T, add, scratch) / n;
  const float rstd = 1.0f / sqrtf(var + p.eps);

  const void* w = p.weight;
  const void* b = p.bias;
  const int64_t ws = p.weight_stride, bs = p.bias_stride;
  map_row(xrow, xt, L.x_col_stride, yrow, yt, L.y_col_stride, L.cols, L.x_vec8 && L.y_vec8, lane, T,
          [&](int64_t j, float x) {
            float v = (x - mean) * rstd * load_as_float(w, wt, j * ws);
            if (b != nullptr) v += load_as_float(b, bt, j * bs);
            return v;
          });
}
