// Reduction over one axis: sum, mean, max, min, argmax.
//
// Every output element is one task-independent row, reduced in a fixed order
// and rounded once into y. A contiguous row of T's own dtype (f32 for fp32
// compute, f64 for the oracle) is read where it lies; any other row is
// gathered into a contiguous scratch row first (widened exactly). fp32 rows
// are reduced on the vector kernels, whose sum and first_extreme give the bits
// of rows::fixed_sum and rows::first_extreme (vector_kernels.h), which fp64
// rows use directly. Rows are split across oneTBB threads; no reduction ever
// spans two threads, so the bits do not depend on the thread count.
//
// Special values: a NaN makes sum/mean/max/min NaN; argmax returns the index
// of the first NaN if there is one (NaN counts as the maximum), else of the
// first maximum. An empty axis gives sum 0, mean NaN (0/0), max -inf, min +inf
// and argmax 0 (ops/ is expected to reject it for max/min/argmax).
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "cpu_ref/kernels.h"
#include "cpu_ref/rows_access.h"
#include "cpu_ref/rows_math.h"
#include "cpu_ref/vector_kernels.h"

namespace hal::cpu_ref {

namespace {

// The fixed-order sum of v[0, n) (0 when n is 0).
template <class T> T row_sum(const T* v, std::int64_t n) {
  if constexpr (std::is_same_v<T, float>) return n == 0 ? 0.0f : vector_kernels().sum(v, n);
  else return rows::fixed_sum(v, n);
}

// The index of v's first largest / smallest element or first NaN (0 when n is 0).
template <class T> std::int64_t row_extreme(const T* v, std::int64_t n, bool largest) {
  if constexpr (std::is_same_v<T, float>) return n == 0 ? 0 : vector_kernels().first_extreme(v, n, largest);
  else return rows::first_extreme(v, n, largest);
}

// sum, or mean from it.
template <class T> T sum_or_mean(ReduceKind kind, T sum, std::int64_t n) {
  return kind == ReduceKind::mean ? sum / static_cast<T>(n) : sum;
}

// sum or mean of v[0, n); max and min are the first extreme element (or the
// first NaN); an empty row gives -inf / +inf.
template <class T> T reduce_row(ReduceKind kind, const T* v, std::int64_t n) {
  switch (kind) {
    case ReduceKind::sum:
    case ReduceKind::mean: return sum_or_mean(kind, row_sum(v, n), n);
    case ReduceKind::max: return n == 0 ? -std::numeric_limits<T>::infinity() : v[row_extreme(v, n, true)];
    case ReduceKind::min: return n == 0 ? std::numeric_limits<T>::infinity() : v[row_extreme(v, n, false)];
    case ReduceKind::argmax: break;
  }
  return T(0);
}

template <class T> void reduce_typed(const ReduceCall& call, int axis) {
  const Tensor& x = call.x;
  const Tensor& y = call.y;
  const std::int64_t n = x.shape[axis];
  const std::int64_t x_stride = x.strides[axis];
  const Shape outer = rows::without_axis(x.shape, axis);
  const Strides x_outer_strides = rows::without_axis(x.strides, axis);
  // keepdim leaves a size-1 axis in y; its stride never matters.
  const Strides y_outer_strides = call.keepdim ? rows::without_axis(y.strides, axis) : y.strides;
  const std::int64_t count = checked_numel(outer);
  const bool in_place = x_stride == 1 && x.dtype == rows::native_dtype<T>;
  // A contiguous bf16/f16 row's fp32 sum widens and sums in one pass
  // (VectorKernels::widen_sum, the bits of widen + sum) instead of two.
  const bool widen_sum = std::is_same_v<T, float> && !in_place && x_stride == 1 && n > 0 && vector_dtype(x.dtype) &&
                         (call.kind == ReduceKind::sum || call.kind == ReduceKind::mean);

  rows::parallel_rows(count, n + 1, [&](std::int64_t begin, std::int64_t end) {
    std::vector<T> row(in_place ? 0 : static_cast<std::size_t>(n));
    for (std::int64_t r = begin; r < end; ++r) {
      const std::int64_t start = rows::offset_of(r, outer, x_outer_strides, x.offset);
      const std::int64_t out = rows::offset_of(r, outer, y_outer_strides, y.offset);
      if constexpr (std::is_same_v<T, float>) {
        if (widen_sum) {
          const auto* src = static_cast<const char*>(x.data) + start * static_cast<std::int64_t>(dtype_size(x.dtype));
          const float sum = vector_kernels().widen_sum(src, x.dtype, n, row.data());
          rows::store<T>(y.data, y.dtype, out, sum_or_mean(call.kind, sum, n));
          continue;
        }
      }
      const T* v = row.data();
      if (in_place) v = static_cast<const T*>(x.data) + start;
      else rows::gather(x, start, x_stride, n, row.data());
      if (call.kind == ReduceKind::argmax) {
        store_element(y.data, y.dtype, out, static_cast<double>(row_extreme(v, n, true)));
      } else {
        rows::store<T>(y.data, y.dtype, out, reduce_row(call.kind, v, n));
      }
    }
  });
}

}  // namespace

void reduce(const ReduceCall& call) {
  // ops/ normalises the axis; accept a negative one too, defensively.
  const int axis = call.axis < 0 ? call.axis + call.x.rank() : call.axis;
  // fp64 for the oracle (f64 output), or for argmax of f64 data, where fp32
  // would merge distinct values.
  const bool fp64 = call.kind == ReduceKind::argmax ? call.x.dtype == DType::f64 : call.y.dtype == DType::f64;
  if (fp64) {
    reduce_typed<double>(call, axis);
  } else {
    reduce_typed<float>(call, axis);
  }
}

}  // namespace hal::cpu_ref
