// layernorm and rmsnorm over the last axis.
//
// layernorm: mean in one pass, then the variance as the mean of squared
// deviations in a second pass (two passes rather than E[x^2] - E[x]^2, which
// cancels catastrophically when |mean| >> std). rmsnorm: the mean of squares.
// Both sums use the fixed lane order of rows_math.h; each row is one task, so
// the result does not depend on the thread count. weight and bias ([D], x's
// dtype, any stride) are widened once, before the rows run.
#include <cmath>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "cpu_ref/kernels.h"
#include "cpu_ref/rows_access.h"
#include "cpu_ref/rows_math.h"
#include "cpu_ref/vector_kernels.h"

namespace hal::cpu_ref {

namespace {

template <class T> std::vector<T> load_vector(const Tensor& t, std::int64_t n) {
  std::vector<T> out(static_cast<std::size_t>(n));
  rows::gather(t, t.offset, t.rank() > 0 ? t.strides[t.rank() - 1] : 0, n, out.data());
  return out;
}

// One fp32 row on the vector kernels: the same sums (fixed lane order) and
// formulas as the generic loop below. A contiguous f32 row is read where it
// lies; a contiguous bf16/f16 row is widened into `row` fused with its first
// sum; a strided one is gathered into `row` first. All three give the same
// bits, and so does the output side: fused with the final rounding when
// contiguous, else computed into `row` and scattered. `row` is d floats of
// scratch. `next` is the row read after this one: the fused store pass
// requests it as it writes this one (vector_kernels.h); a strided output asks
// for it up front.
void normalize_row_f32(const Tensor& x, std::int64_t x_start, std::int64_t x_stride, const Tensor& y,
                       std::int64_t y_start, std::int64_t y_stride, std::int64_t d, bool rms, float eps,
                       const float* weight, const float* bias, bool streaming, PrefetchHint next, float* row) {
  const VectorKernels& vk = vector_kernels();
  const float length = static_cast<float>(d);
  const bool own = x_stride == 1 && x.dtype == DType::f32;
  const bool widened = !own && x_stride == 1 && vector_dtype(x.dtype);
  const bool fused_out = y_stride == 1 && vector_dtype(y.dtype);
  const void* src = static_cast<const char*>(x.data) + x_start * static_cast<std::int64_t>(dtype_size(x.dtype));
  void* dst = static_cast<char*>(y.data) + y_start * static_cast<std::int64_t>(dtype_size(y.dtype));
  const float* in = own ? static_cast<const float*>(src) : row;  // the fp32 row the passes read
  if (!own && !widened) rows::gather(x, x_start, x_stride, d, row);
  if (!fused_out && next.data) prefetch_for_read(next.data, next.bytes);
  if (rms) {
    const float sum_squares = widened ? vk.widen_sum_squares(src, x.dtype, d, row) : vk.sum_squares(in, d);
    const float rstd = 1.0f / std::sqrt(sum_squares / length + eps);
    if (fused_out) {
      vk.rms_apply_narrow(in, rstd, weight, dst, y.dtype, d, streaming, next);
      return;
    }
    vk.rms_apply(in, rstd, weight, row, d);
  } else {
    const float sum = widened ? vk.widen_sum(src, x.dtype, d, row) : vk.sum(in, d);
    const float mean = sum / length;
    const float var = vk.sum_squared_deviations(in, mean, d) / length;
    const float rstd = 1.0f / std::sqrt(var + eps);
    if (fused_out) {
      vk.layer_apply_narrow(in, mean, rstd, weight, bias, dst, y.dtype, d, streaming, next);
      return;
    }
    vk.layer_apply(in, mean, rstd, weight, bias, row, d);
  }
  rows::scatter(y, y_start, y_stride, d, row, streaming);
}

template <class T> void norm_typed(const NormCall& call) {
  const Tensor& x = call.x;
  const Tensor& y = call.y;
  const int rank = x.rank();
  if (rank == 0) return;
  const int axis = rank - 1;
  const std::int64_t d = x.shape[axis];
  const Shape outer = rows::without_axis(x.shape, axis);
  const Strides x_outer = rows::without_axis(x.strides, axis);
  const Strides y_outer = rows::without_axis(y.strides, axis);
  const std::int64_t count = checked_numel(outer);
  const std::vector<T> weight = load_vector<T>(call.weight, d);
  const bool has_bias = !call.rms && call.bias.has_value();
  const std::vector<T> bias = has_bias ? load_vector<T>(*call.bias, d) : std::vector<T>{};
  const T eps = static_cast<T>(call.eps);
  const T length = static_cast<T>(d);

  const bool streaming = streams_output(y);
  rows::parallel_rows(count, 4 * d + 1, [&](std::int64_t begin, std::int64_t end) {
    // Uninitialised scratch: gather writes all of it before it is read.
    const std::unique_ptr<T[]> v(new T[static_cast<std::size_t>(d)]);
    for (std::int64_t r = begin; r < end; ++r) {
      T* row = v.get();
      if constexpr (std::is_same_v<T, float>) {
        // The next row loads while this one computes.
        const PrefetchHint next =
            r + 1 < end ? rows::row_hint(x, rows::offset_of(r + 1, outer, x_outer, x.offset), x.strides[axis], d)
                        : PrefetchHint{};
        normalize_row_f32(x, rows::offset_of(r, outer, x_outer, x.offset), x.strides[axis], y,
                          rows::offset_of(r, outer, y_outer, y.offset), y.strides[axis], d, call.rms, eps,
                          weight.data(), has_bias ? bias.data() : nullptr, streaming, next, row);
      } else {
        rows::gather(x, rows::offset_of(r, outer, x_outer, x.offset), x.strides[axis], d, row);
        if (call.rms) {
          const T mean_square = rows::fixed_dot(row, row, d) / length;
          const T rstd = T(1) / std::sqrt(mean_square + eps);
          for (std::int64_t j = 0; j < d; ++j) row[j] = row[j] * rstd * weight[j];
        } else {
          const T mean = rows::fixed_sum(row, d) / length;
          const T var = rows::lane_sum<T>(d, [&](std::int64_t j) {
                          const T dev = row[j] - mean;
                          return dev * dev;
                        }) / length;
          const T rstd = T(1) / std::sqrt(var + eps);
          for (std::int64_t j = 0; j < d; ++j) {
            const T normed = (row[j] - mean) * rstd * weight[j];
            row[j] = has_bias ? normed + bias[j] : normed;
          }
        }
        rows::scatter(y, rows::offset_of(r, outer, y_outer, y.offset), y.strides[axis], d, row, streaming);
      }
    }
  });
}

}  // namespace

void norm(const NormCall& call) {
  if (call.y.dtype == DType::f64) {
    norm_typed<double>(call);
  } else {
    norm_typed<float>(call);
  }
}

}  // namespace hal::cpu_ref
