// Reduction over one axis: sum, mean, max, min, argmax.
//
// Every output element is one task-independent row: the reduced axis of x is
// gathered into a contiguous scratch row (a plain copy when it is already
// contiguous f32/f64), reduced in a fixed order, and the result is rounded
// once into y. fp32 rows of contiguous f32/bf16/f16 take the vector kernels
// instead (vector_kernels.h): sum and mean their sum, in the same lane order,
// max, min and argmax their first_extreme; the same bits either way, and f32
// rows are then read where they lie. Rows are split across oneTBB threads; no reduction ever spans
// two threads, so the bits do not depend on the thread count.
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

// sum or mean of v[0, n) in the fixed lane order; max and min are the first
// extreme element (or the first NaN), rows::first_extreme; an empty row gives
// -inf / +inf.
template <class T> T reduce_row(ReduceKind kind, const T* v, std::int64_t n) {
  switch (kind) {
    case ReduceKind::sum: return rows::fixed_sum(v, n);
    case ReduceKind::mean: return rows::fixed_sum(v, n) / static_cast<T>(n);
    case ReduceKind::max: return n == 0 ? -std::numeric_limits<T>::infinity() : v[rows::first_extreme(v, n, true)];
    case ReduceKind::min: return n == 0 ? std::numeric_limits<T>::infinity() : v[rows::first_extreme(v, n, false)];
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

  // fp32 rows of contiguous f32/bf16/f16 go to the vector kernels: sum and mean
  // on their sum (f32 read in place), the others on first_extreme (bf16/f16
  // widened first, exactly).
  const bool vector_row = std::is_same_v<T, float> && x_stride == 1 && n > 0 && vector_dtype(x.dtype);
  const bool is_sum = call.kind == ReduceKind::sum || call.kind == ReduceKind::mean;
  rows::parallel_rows(count, n + 1, [&](std::int64_t begin, std::int64_t end) {
    std::vector<T> row(static_cast<std::size_t>(n));
    for (std::int64_t r = begin; r < end; ++r) {
      const std::int64_t start = rows::offset_of(r, outer, x_outer_strides, x.offset);
      const std::int64_t out = rows::offset_of(r, outer, y_outer_strides, y.offset);
      if constexpr (std::is_same_v<T, float>) {
        if (vector_row) {
          const VectorKernels& vk = vector_kernels();
          const char* src = static_cast<const char*>(x.data) + start * static_cast<std::int64_t>(dtype_size(x.dtype));
          const bool own = x.dtype == DType::f32;
          if (is_sum) {
            const float sum =
                own ? vk.sum(reinterpret_cast<const float*>(src), n) : vk.widen_sum(src, x.dtype, n, row.data());
            rows::store<T>(y.data, y.dtype, out, call.kind == ReduceKind::mean ? sum / static_cast<float>(n) : sum);
            continue;
          }
          if (!own) vk.widen(src, x.dtype, n, row.data());
          const float* v = own ? reinterpret_cast<const float*>(src) : row.data();
          const std::int64_t at = vk.first_extreme(v, n, call.kind != ReduceKind::min);
          if (call.kind == ReduceKind::argmax) store_element(y.data, y.dtype, out, static_cast<double>(at));
          else rows::store<T>(y.data, y.dtype, out, v[at]);
          continue;
        }
      }
      rows::gather(x, start, x_stride, n, row.data());
      if (call.kind == ReduceKind::argmax) {
        store_element(y.data, y.dtype, out, static_cast<double>(rows::first_extreme(row.data(), n, true)));
      } else {
        rows::store<T>(y.data, y.dtype, out, reduce_row(call.kind, row.data(), n));
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
