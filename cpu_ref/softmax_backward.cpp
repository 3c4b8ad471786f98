// softmax_backward / log_softmax_backward over the last axis, from the
// forward's output y:
//   softmax:     dx = scale * (y * (dy - S)),  S = sum_j dy_j y_j
//   log_softmax: dx = scale * (dy - exp(y) * T), T = sum_j dy_j
// over the row's visible keys (causal as in the forward); masked entries get
// 0 and are not read. Each row is one task and its sum runs in the fixed lane
// order of rows_math.h, so the bits do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "cpu_ref/kernels.h"
#include "cpu_ref/rows_access.h"
#include "cpu_ref/rows_math.h"

namespace hal::cpu_ref {

namespace {

template <class T> void softmax_backward_typed(const SoftmaxBackwardCall& call) {
  const Tensor& y = call.y;
  const Tensor& dy = call.dy;
  const Tensor& dx = call.dx;
  const int rank = y.rank();
  if (rank == 0) return;
  const int axis = rank - 1;
  const std::int64_t lk = y.shape[axis];
  const std::int64_t lq = rank >= 2 ? y.shape[rank - 2] : 1;
  const Shape outer = rows::without_axis(y.shape, axis);
  const Strides y_outer = rows::without_axis(y.strides, axis);
  const Strides dy_outer = rows::without_axis(dy.strides, axis);
  const Strides dx_outer = rows::without_axis(dx.strides, axis);
  const std::int64_t count = checked_numel(outer);
  const T scale = static_cast<T>(call.scale);

  rows::parallel_rows(count, 6 * lk + 1, [&](std::int64_t begin, std::int64_t end) {
    std::vector<T> yr(static_cast<std::size_t>(lk)), gr(static_cast<std::size_t>(lk)), out(static_cast<std::size_t>(lk));
    for (std::int64_t r = begin; r < end; ++r) {
      std::int64_t valid = lk;
      if (call.causal) valid = std::clamp<std::int64_t>(r % std::max<std::int64_t>(lq, 1) + (lk - lq) + 1, 0, lk);
      rows::gather(y, rows::offset_of(r, outer, y_outer, y.offset), y.strides[axis], valid, yr.data());
      rows::gather(dy, rows::offset_of(r, outer, dy_outer, dy.offset), dy.strides[axis], valid, gr.data());
      if (call.log) {
        const T total = rows::fixed_sum(gr.data(), valid);
        for (std::int64_t j = 0; j < valid; ++j) out[j] = scale * (gr[j] - std::exp(yr[j]) * total);
      } else {
        const T s = rows::fixed_dot(gr.data(), yr.data(), valid);
        for (std::int64_t j = 0; j < valid; ++j) out[j] = scale * (yr[j] * (gr[j] - s));
      }
      for (std::int64_t j = valid; j < lk; ++j) out[j] = T(0);
      rows::scatter(dx, rows::offset_of(r, outer, dx_outer, dx.offset), dx.strides[axis], lk, out.data());
    }
  });
}

}  // namespace

void softmax_backward(const SoftmaxBackwardCall& call) {
  if (call.dx.dtype == DType::f64)
    softmax_backward_typed<double>(call);
  else
    softmax_backward_typed<float>(call);
}

}  // namespace hal::cpu_ref
