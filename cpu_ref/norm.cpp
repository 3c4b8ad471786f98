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
#include <vector>

#include "cpu_ref/kernels.h"
#include "cpu_ref/rows_access.h"
#include "cpu_ref/rows_math.h"

namespace hal::cpu_ref {

namespace {

template <class T> std::vector<T> load_vector(const Tensor& t, std::int64_t n) {
  std::vector<T> out(static_cast<std::size_t>(n));
  rows::gather(t, t.offset, t.rank() > 0 ? t.strides[t.rank() - 1] : 0, n, out.data());
  return out;
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

  rows::parallel_rows(count, 4 * d + 1, [&](std::int64_t begin, std::int64_t end) {
    std::vector<T> v(static_cast<std::size_t>(d));
    for (std::int64_t r = begin; r < end; ++r) {
      T* row = v.data();
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
      rows::scatter(y, rows::offset_of(r, outer, y_outer, y.offset), y.strides[axis], d, row);
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
