// layernorm_backward / rmsnorm_backward over the last axis D.
//
// Per row (statistics recomputed from x as in the forward, two passes for
// the variance): xhat = (x - mean) r or x r, g = dy * weight, and
//   layernorm: dx = r (g - mean(g) - xhat mean(g xhat))
//   rmsnorm:   dx = r (g - xhat mean(g xhat))
// Row sums use the fixed lane order. dweight = sum over rows of dy xhat and
// dbias = sum of dy: rows are split into fixed blocks (row_blocks.h); a task
// takes whole blocks, sums each block's rows in order into that block's
// partial, and the partials are added in block order afterwards. Nothing
// depends on the thread count.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "cpu_ref/kernels.h"
#include "cpu_ref/row_blocks.h"
#include "cpu_ref/rows_access.h"
#include "cpu_ref/rows_math.h"

namespace hal::cpu_ref {

namespace {

template <class T> void norm_backward_typed(const NormBackwardCall& call) {
  const Tensor& x = call.x;
  const Tensor& dy = call.dy;
  const Tensor& dx = call.dx;
  const int rank = x.rank();
  if (rank == 0) return;
  const int axis = rank - 1;
  const std::int64_t d = x.shape[axis];
  const Shape outer = rows::without_axis(x.shape, axis);
  const Strides x_outer = rows::without_axis(x.strides, axis);
  const Strides dy_outer = rows::without_axis(dy.strides, axis);
  const Strides dx_outer = rows::without_axis(dx.strides, axis);
  const std::int64_t count = checked_numel(outer);
  const bool with_bias = call.dbias.has_value();
  std::vector<T> weight(static_cast<std::size_t>(d));
  rows::gather(call.weight, call.weight.offset, d > 0 ? call.weight.strides[0] : 1, d, weight.data());
  const T eps = static_cast<T>(call.eps);
  const T length = static_cast<T>(d);

  const rows::RowBlocks blocks(count);
  const auto du = static_cast<std::size_t>(d);
  std::vector<T> partial_w(static_cast<std::size_t>(blocks.count) * du, T(0));
  std::vector<T> partial_b(with_bias ? partial_w.size() : 0, T(0));

  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, blocks.count), [&](const tbb::blocked_range<std::int64_t>& br) {
    std::vector<T> xr(du), gr(du), xhat(du), g(du), out(du);
    for (std::int64_t blk = br.begin(); blk != br.end(); ++blk) {
      T* pw = partial_w.data() + static_cast<std::size_t>(blk) * du;
      T* pb = with_bias ? partial_b.data() + static_cast<std::size_t>(blk) * du : nullptr;
      const std::int64_t first = blk * blocks.size, last = std::min(count, first + blocks.size);
      for (std::int64_t r = first; r < last; ++r) {
        rows::gather(x, rows::offset_of(r, outer, x_outer, x.offset), x.strides[axis], d, xr.data());
        rows::gather(dy, rows::offset_of(r, outer, dy_outer, dy.offset), dy.strides[axis], d, gr.data());
        T mean = T(0);
        T var;
        if (call.rms) {
          var = rows::fixed_dot(xr.data(), xr.data(), d) / length;
        } else {
          mean = rows::fixed_sum(xr.data(), d) / length;
          var = rows::lane_sum<T>(d, [&](std::int64_t j) {
                  const T dev = xr[j] - mean;
                  return dev * dev;
                }) / length;
        }
        const T rstd = T(1) / std::sqrt(var + eps);
        for (std::int64_t j = 0; j < d; ++j) {
          xhat[j] = (call.rms ? xr[j] : xr[j] - mean) * rstd;
          g[j] = gr[j] * weight[j];
        }
        const T mean_gx = rows::fixed_dot(g.data(), xhat.data(), d) / length;
        const T mean_g = call.rms ? T(0) : rows::fixed_sum(g.data(), d) / length;
        for (std::int64_t j = 0; j < d; ++j) {
          out[j] = call.rms ? rstd * (g[j] - xhat[j] * mean_gx) : rstd * ((g[j] - mean_g) - xhat[j] * mean_gx);
          pw[j] += gr[j] * xhat[j];
          if (pb) pb[j] += gr[j];
        }
        rows::scatter(dx, rows::offset_of(r, outer, dx_outer, dx.offset), dx.strides[axis], d, out.data());
      }
    }
  });

  // The partials in block order, column by column.
  auto finish = [&](const std::vector<T>& partial, const Tensor& out) {
    std::vector<T> total(du, T(0));
    for (std::int64_t blk = 0; blk < blocks.count; ++blk)
      for (std::int64_t j = 0; j < d; ++j) total[j] += partial[static_cast<std::size_t>(blk) * du + j];
    rows::scatter(out, out.offset, d > 0 ? out.strides[0] : 1, d, total.data());
  };
  finish(partial_w, call.dweight);
  if (with_bias) finish(partial_b, *call.dbias);
}

}  // namespace

void norm_backward(const NormBackwardCall& call) {
  if (call.dx.dtype == DType::f64)
    norm_backward_typed<double>(call);
  else
    norm_backward_typed<float>(call);
}

}  // namespace hal::cpu_ref
