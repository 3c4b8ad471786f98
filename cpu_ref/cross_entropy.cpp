// Fused softmax cross-entropy over logits [N, V] (hal/op_training.h).
//
// Two passes over the targets and rows: every target is read and checked
// first (in [0, V) or ignore_index), so a bad one throws before anything is
// written; then each row is one task: its max, the sum of exp(z - max) in the
// fixed lane order (kept in scratch, so exp runs once per logit), lse, the
// row's loss and, when asked, its dlogits row, which therefore never needs
// the probabilities stored on their own. The reduction over rows is one
// fixed-order sum of the per-row losses. Nothing depends on the thread count.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "cpu_ref/kernels.h"
#include "cpu_ref/rows_access.h"
#include "cpu_ref/rows_math.h"
#include "hal/error.h"

namespace hal::cpu_ref {

namespace {

std::vector<std::int64_t> checked_targets(const CrossEntropyCall& c, std::int64_t vocab) {
  const Tensor& t = c.targets;
  const std::int64_t n = t.shape[0];
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t at = t.offset + i * t.strides[0];
    const std::int64_t id = t.dtype == DType::i64 ? static_cast<const std::int64_t*>(t.data)[at]
                                                  : static_cast<const std::int32_t*>(t.data)[at];
    if (id != c.ignore_index && (id < 0 || id >= vocab))
      throw_invalid_argument("cross_entropy", "targets",
                             fmt::format("targets in [0, {}) or ignore_index {}", vocab, c.ignore_index),
                             fmt::format("{} at row {}", id, i));
    out[static_cast<std::size_t>(i)] = id;
  }
  return out;
}

template <class T> void cross_entropy_typed(const CrossEntropyCall& c) {
  const Tensor& z = c.logits;
  const std::int64_t n = z.shape[0], v = z.shape[1];
  const std::vector<std::int64_t> targets = checked_targets(c, v);
  std::int64_t counted = 0;
  for (std::int64_t t : targets) counted += t != c.ignore_index;
  const T smoothing = static_cast<T>(c.label_smoothing);
  const T keep = T(1) - smoothing;
  const T spread = v > 0 ? smoothing / static_cast<T>(v) : T(0);
  const T weight = c.reduction == LossReduction::mean ? T(1) / static_cast<T>(counted) : T(1);
  std::vector<T> losses(static_cast<std::size_t>(n), T(0));

  rows::parallel_rows(n, 8 * v + 1, [&](std::int64_t begin, std::int64_t end) {
    std::vector<T> row(static_cast<std::size_t>(v)), e(static_cast<std::size_t>(v));
    for (std::int64_t i = begin; i < end; ++i) {
      const std::int64_t target = targets[static_cast<std::size_t>(i)];
      const bool ignored = target == c.ignore_index;
      if (ignored || v == 0) {
        if (c.dlogits) {
          for (std::int64_t j = 0; j < v; ++j) row[j] = T(0);
          rows::scatter(*c.dlogits, c.dlogits->offset + i * c.dlogits->strides[0], c.dlogits->strides[1], v, row.data());
        }
        continue;  // loss 0
      }
      rows::gather(z, z.offset + i * z.strides[0], z.strides[1], v, row.data());
      T m = row[0];
      for (std::int64_t j = 1; j < v; ++j) m = rows::nan_max(m, row[j]);
      for (std::int64_t j = 0; j < v; ++j) e[j] = std::exp(row[j] - m);
      const T sum = rows::fixed_sum(e.data(), v);
      const T lse = m + std::log(sum);
      T loss = lse - row[target];
      if (smoothing != T(0)) {
        const T mean = rows::fixed_sum(row.data(), v) / static_cast<T>(v);
        loss = keep * loss + smoothing * (lse - mean);
      }
      losses[static_cast<std::size_t>(i)] = loss;
      if (c.dlogits) {
        const T inv = T(1) / sum;
        for (std::int64_t j = 0; j < v; ++j) {
          T g = e[j] * inv;
          if (j == target) g -= keep;
          if (smoothing != T(0)) g -= spread;
          row[j] = weight * g;
        }
        rows::scatter(*c.dlogits, c.dlogits->offset + i * c.dlogits->strides[0], c.dlogits->strides[1], v, row.data());
      }
    }
  });

  const Tensor& out = c.loss;
  if (c.reduction == LossReduction::none) {
    rows::scatter(out, out.offset, n > 0 ? out.strides[0] : 1, n, losses.data());
    return;
  }
  T total = rows::fixed_sum(losses.data(), n);
  if (c.reduction == LossReduction::mean) total = total / static_cast<T>(counted);  // 0/0: NaN, as in PyTorch
  rows::store<T>(out.data, out.dtype, out.offset, total);
}

}  // namespace

void cross_entropy(const CrossEntropyCall& call) {
  if (call.loss.dtype == DType::f64)
    cross_entropy_typed<double>(call);
  else
    cross_entropy_typed<float>(call);
}

}  // namespace hal::cpu_ref
