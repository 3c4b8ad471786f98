// softmax / log_softmax over the last axis, with scale and causal mask.
//
// Each row of x's last axis is one task-independent unit: gathered into a
// contiguous scratch row, scaled, reduced in a fixed order (max, then the sum
// of exp(z - max)), and written with one rounding per element.
//
// Causal: x is [..., Lq, Lk] (rank 1 means Lq = 1); key j of query i is masked
// when j > i + (Lk - Lq). Masked keys give 0 (softmax) / -inf (log_softmax); a
// row with every key masked gives zeros / -inf.
//
// Special values, as PyTorch's max-subtracted kernel gives them: a NaN among
// the unmasked entries makes the whole row NaN; so does +inf (inf - inf is
// NaN), and so does a row whose unmasked entries are all -inf (the max is
// -inf and -inf - -inf is NaN). Other -inf entries give 0 / -inf. Masked
// entries are never read, so a NaN there does not reach the row.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "cpu_ref/kernels.h"
#include "cpu_ref/rows_access.h"
#include "cpu_ref/rows_math.h"
#include "cpu_ref/vector_kernels.h"

namespace hal::cpu_ref {

namespace {

// Writes softmax (or log_softmax) of z[0, valid) into out[0, n); the entries
// from `valid` on are masked.
template <class T> void softmax_row(T* z, std::int64_t valid, std::int64_t n, bool log, T* out) {
  const T inf = std::numeric_limits<T>::infinity();
  const T masked = log ? -inf : T(0);
  if (valid == 0) {
    for (std::int64_t j = 0; j < n; ++j) out[j] = masked;
    return;
  }
  T m = z[0];
  for (std::int64_t j = 1; j < valid; ++j) m = rows::nan_max(m, z[j]);
  // exp of (z - max) in place; the sum in the fixed lane order.
  for (std::int64_t j = 0; j < valid; ++j) out[j] = std::exp(z[j] - m);
  const T sum = rows::fixed_sum(out, valid);
  if (std::isnan(sum)) {
    for (std::int64_t j = 0; j < n; ++j) out[j] = std::numeric_limits<T>::quiet_NaN();
    return;
  }
  if (log) {
    const T log_sum = std::log(sum);
    for (std::int64_t j = 0; j < valid; ++j) out[j] = (z[j] - m) - log_sum;
  } else {
    const T inv = T(1) / sum;
    for (std::int64_t j = 0; j < valid; ++j) out[j] *= inv;
  }
  for (std::int64_t j = valid; j < n; ++j) out[j] = masked;
}

// The fp32 row: the same steps on the vector kernels (vector_kernels.h), exp
// fused with the fixed-order sum. The max need not propagate NaN: a NaN entry
// makes its exp, hence the sum, NaN anyway. The normalisation is left to the
// caller, who fuses it with the store: every out[j] is to be multiplied by the
// returned factor (1 / sum for softmax; 1 otherwise, and 1 * v == v for every
// value written here, masked ones included, since sum >= 1).
float softmax_row(float* z, std::int64_t valid, std::int64_t n, bool log, float* out) {
  const float inf = std::numeric_limits<float>::infinity();
  const float masked = log ? -inf : 0.0f;
  for (std::int64_t j = valid; j < n; ++j) out[j] = masked;
  if (valid == 0) return 1.0f;
  const VectorKernels& vk = vector_kernels();
  const float m = vk.max(z, valid);
  const float sum = vk.exp_shifted_sum(z, m, out, valid);
  if (std::isnan(sum)) {
    for (std::int64_t j = 0; j < n; ++j) out[j] = std::numeric_limits<float>::quiet_NaN();
    return 1.0f;
  }
  if (!log) return 1.0f / sum;
  const float log_sum = std::log(sum);
  for (std::int64_t j = 0; j < valid; ++j) out[j] = (z[j] - m) - log_sum;
  return 1.0f;
}

// Writes out * factor to y's row, fused into one pass when the row is
// contiguous f32/bf16/f16, else scaled in place and scattered (same bits).
void store_row_f32(const Tensor& y, std::int64_t start, std::int64_t stride, std::int64_t n, float* out, float factor,
                   bool streaming) {
  const VectorKernels& vk = vector_kernels();
  if (stride == 1 && vector_dtype(y.dtype)) {
    vk.scale_narrow(out, factor, static_cast<char*>(y.data) + start * static_cast<std::int64_t>(dtype_size(y.dtype)),
                    y.dtype, n, streaming);
    return;
  }
  vk.scale(out, factor, out, n);
  rows::scatter(y, start, stride, n, out, streaming);
}

template <class T> void softmax_typed(const SoftmaxCall& call) {
  const Tensor& x = call.x;
  const Tensor& y = call.y;
  const int rank = x.rank();
  if (rank == 0) return;
  const int axis = rank - 1;
  const std::int64_t lk = x.shape[axis];
  const std::int64_t lq = rank >= 2 ? x.shape[rank - 2] : 1;
  const Shape outer = rows::without_axis(x.shape, axis);
  const Strides x_outer = rows::without_axis(x.strides, axis);
  const Strides y_outer = rows::without_axis(y.strides, axis);
  const std::int64_t count = checked_numel(outer);
  const T scale = static_cast<T>(call.scale);

  const bool streaming = rows::streams_output(y);
  rows::parallel_rows(count, 4 * lk + 1, [&](std::int64_t begin, std::int64_t end) {
    // Uninitialised scratch (every entry read is written first): zeroing two
    // rows per task would be a pass over memory of its own.
    const std::unique_ptr<T[]> z(new T[static_cast<std::size_t>(lk)]), out(new T[static_cast<std::size_t>(lk)]);
    for (std::int64_t r = begin; r < end; ++r) {
      std::int64_t valid = lk;
      if (call.causal) {
        const std::int64_t i = lq > 0 ? r % lq : 0;
        valid = std::clamp<std::int64_t>(i + (lk - lq) + 1, 0, lk);
      }
      if (std::is_same_v<T, float> && r + 1 < end)  // the next row loads while this one computes
        rows::prefetch_row(x, rows::offset_of(r + 1, outer, x_outer, x.offset), x.strides[axis], lk);
      rows::gather(x, rows::offset_of(r, outer, x_outer, x.offset), x.strides[axis], valid, z.get());
      if constexpr (std::is_same_v<T, float>) {
        if (scale != 1.0f) vector_kernels().scale(z.get(), scale, z.get(), valid);
      } else {
        for (std::int64_t j = 0; j < valid; ++j) z[j] *= scale;
      }
      const std::int64_t y_start = rows::offset_of(r, outer, y_outer, y.offset);
      if constexpr (std::is_same_v<T, float>) {
        const float factor = softmax_row(z.get(), valid, lk, call.log, out.get());
        store_row_f32(y, y_start, y.strides[axis], lk, out.get(), factor, streaming);
      } else {
        softmax_row(z.get(), valid, lk, call.log, out.get());
        rows::scatter(y, y_start, y.strides[axis], lk, out.get(), streaming);
      }
    }
  });
}

}  // namespace

void softmax(const SoftmaxCall& call) {
  if (call.y.dtype == DType::f64) {
    softmax_typed<double>(call);
  } else {
    softmax_typed<float>(call);
  }
}

}  // namespace hal::cpu_ref
