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
// fused with the fixed-order sum; z[0, valid) holds the scaled row (x's own
// memory or a scratch copy, load_row_max) and m its max and largest magnitude
// (the first pass, done by the caller; the magnitude spares exp_shifted_sum a
// range test and may be NaN).
// The max need not propagate NaN: a NaN entry makes its exp, hence the sum,
// NaN anyway. `out` may be z itself (softmax: the exps overwrite the row, so
// one scratch row stays in L1 instead of two); log_softmax reads z again and
// needs its own.
// The normalisation is left to the caller, who fuses it with the store: every
// out[j] is to be multiplied by the returned factor (1 / sum for softmax; 1
// otherwise, and 1 * v == v for every value written here, masked ones
// included, since sum >= 1). `next` (the row read after this one) is
// requested during the exp pass, the row's compute-bound part.
float softmax_row(const float* z, RowMax m, std::int64_t valid, std::int64_t n, bool log, PrefetchHint next,
                  float* out) {
  const float inf = std::numeric_limits<float>::infinity();
  const float masked = log ? -inf : 0.0f;
  for (std::int64_t j = valid; j < n; ++j) out[j] = masked;
  if (valid == 0) return 1.0f;
  const VectorKernels& vk = vector_kernels();
  const float sum = vk.exp_shifted_sum(z, m.max, out, valid, m.abs_max, next);
  if (std::isnan(sum)) {
    for (std::int64_t j = 0; j < n; ++j) out[j] = std::numeric_limits<float>::quiet_NaN();
    return 1.0f;
  }
  if (!log) return 1.0f / sum;
  const float log_sum = std::log(sum);
  for (std::int64_t j = 0; j < valid; ++j) out[j] = (z[j] - m.max) - log_sum;
  return 1.0f;
}

// The scaled fp32 row softmax computes from, and its max and largest
// magnitude (unused when valid is 0).
struct ScaledRow {
  const float* z;
  RowMax max;
};

// x's row as a ScaledRow: read where it lies when it already is that row
// (contiguous f32, scale 1: no copy), else loaded into z (valid entries,
// times scale) in one fused pass when the row is contiguous f32/bf16/f16,
// or by gather, scale and max (the same bits; the magnitude left unknown,
// NaN).
ScaledRow load_row_max(const Tensor& x, std::int64_t start, std::int64_t stride, std::int64_t valid, float scale,
                       float* z) {
  if (valid == 0) return {z, {0.0f, 0.0f}};
  const VectorKernels& vk = vector_kernels();
  const char* row = static_cast<const char*>(x.data) + start * static_cast<std::int64_t>(dtype_size(x.dtype));
  if (stride == 1 && x.dtype == DType::f32 && scale == 1.0f) {
    const auto* own = reinterpret_cast<const float*>(row);
    return {own, vk.row_max(own, valid)};
  }
  if (stride == 1 && vector_dtype(x.dtype)) return {z, vk.widen_scale_max(row, x.dtype, valid, scale, z)};
  rows::gather(x, start, stride, valid, z);
  if (scale != 1.0f) vk.scale(z, scale, z, valid);
  return {z, {vk.max(z, valid), std::numeric_limits<float>::quiet_NaN()}};
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

  const bool streaming = streams_output(y);
  rows::parallel_rows(count, 4 * lk + 1, [&](std::int64_t begin, std::int64_t end) {
    // Uninitialised scratch (every entry read is written first): zeroing it
    // per task would be a pass over memory of its own. fp32 softmax works in
    // z alone; log_softmax and the fp64 path also need `out`.
    const std::unique_ptr<T[]> z(new T[static_cast<std::size_t>(lk)]);
    const std::unique_ptr<T[]> out(std::is_same_v<T, float> && !call.log ? nullptr
                                                                          : new T[static_cast<std::size_t>(lk)]);
    for (std::int64_t r = begin; r < end; ++r) {
      std::int64_t valid = lk;
      if (call.causal) {
        const std::int64_t i = lq > 0 ? r % lq : 0;
        valid = std::clamp<std::int64_t>(i + (lk - lq) + 1, 0, lk);
      }
      const std::int64_t x_start = rows::offset_of(r, outer, x_outer, x.offset);
      const std::int64_t y_start = rows::offset_of(r, outer, y_outer, y.offset);
      if constexpr (std::is_same_v<T, float>) {
        const ScaledRow row = load_row_max(x, x_start, x.strides[axis], valid, scale, z.get());
        float* o = call.log ? out.get() : z.get();
        const PrefetchHint next =
            r + 1 < end ? rows::row_hint(x, rows::offset_of(r + 1, outer, x_outer, x.offset), x.strides[axis], lk)
                        : PrefetchHint{};
        const float factor = softmax_row(row.z, row.max, valid, lk, call.log, next, o);
        store_row_f32(y, y_start, y.strides[axis], lk, o, factor, streaming);
      } else {
        rows::gather(x, x_start, x.strides[axis], valid, z.get());
        for (std::int64_t j = 0; j < valid; ++j) z[j] *= scale;
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
