// Sum / mean / max / min / argmax of one axis of a strided tensor. Each output
// is one "row" (the reduced line, stride x_col_stride); a row is handled by
// 1 thread (many short, strided lines: neighbouring threads read neighbouring
// addresses), a warp, or a 256-thread block (few long lines).
//
// max/min propagate NaN; argmax returns the first maximum, a NaN counting as
// larger than everything (the first NaN wins). Empty lines give sum 0,
// mean NaN, max -inf, min +inf, argmax 0.
#include <math.h>

#include "ptx/kernels/rows_common.cuh"

namespace hal::ptx::rows {

enum ReduceKindCode : int { kSum = 0, kMean = 1, kMax = 2, kMin = 3, kArgmax = 4 };

__device__ __forceinline__ float max_nan(float a, float b) { return (a != a || a > b) ? a : (b != b || b > a ? b : a); }
__device__ __forceinline__ float min_nan(float a, float b) { return (a != a || a < b) ? a : (b != b || b < a ? b : a); }

// Prefers NaN, then the larger value, then the smaller index: commutative, so
// the result does not depend on the order partial results meet.
__device__ __forceinline__ ValIdx argmax_combine(ValIdx a, ValIdx b) {
  const bool an = a.v != a.v, bn = b.v != b.v;
  if (an != bn) return an ? a : b;
  if (!an && a.v != b.v) return a.v > b.v ? a : b;
  return a.i <= b.i ? a : b;
}

}  // namespace hal::ptx::rows

using namespace hal::ptx;
using namespace hal::kernel_params;
using namespace hal::ptx::rows;

extern "C" __global__ void __launch_bounds__(kBlockThreads) hal_reduce_rows(ReduceParams p) {
  __shared__ ValIdx scratch_vi[kBlockThreads / 32];
  __shared__ float scratch_f[kBlockThreads / 32];
  const RowsLayout& L = p.layout;
  const int T = L.cuda_threads_per_row;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (kBlockThreads / T) + threadIdx.x / T;
  const int lane = threadIdx.x % T;
  if (row >= L.rows) return;  // T == 256 launches exactly one block per row

  const ElemType xt = static_cast<ElemType>(p.x_type), yt = static_cast<ElemType>(p.y_type);
  const RowOffsets o = row_offsets(L, row);
  const void* xrow = offset_ptr(p.x, xt, o.x);

  if (p.kind == kArgmax) {
    ValIdx best{-INFINITY, 0};
    bool any = false;
    for_each_in_row(xrow, xt, L.cols, L.x_col_stride, L.x_vec16, lane, T, [&](int64_t j, float x) {
      best = any ? argmax_combine(best, ValIdx{x, j}) : ValIdx{x, j};
      any = true;
    });
    if (!any) best = ValIdx{-INFINITY, INT64_MAX};  // loses to every real element
    best = group_allreduce(best, T, argmax_combine, scratch_vi);
    if (lane == 0) static_cast<int64_t*>(p.y)[o.y] = best.i == INT64_MAX ? 0 : best.i;
    return;
  }

  float acc;
  float result;
  if (p.kind == kMax || p.kind == kMin) {
    const bool is_max = p.kind == kMax;
    acc = is_max ? -INFINITY : INFINITY;
    for_each_in_row(xrow, xt, L.cols, L.x_col_stride, L.x_vec16, lane, T,
                    [&](int64_t, float x) { acc = is_max ? max_nan(acc, x) : min_nan(acc, x); });
    result = is_max ? group_allreduce(acc, T, max_nan, scratch_f) : group_allreduce(acc, T, min_nan, scratch_f);
  } else {
    acc = 0.0f;
    for_each_in_row(xrow, xt, L.cols, L.x_col_stride, L.x_vec16, lane, T, [&](int64_t, float x) { acc += x; });
    result = group_allreduce(acc, T, [](float a, float b) { return a + b; }, scratch_f);
    if (p.kind == kMean) result = result / static_cast<float>(L.cols);
  }
  if (lane == 0) store_from_float(p.y, yt, o.y, result);
}
