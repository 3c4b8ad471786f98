// The baseline table of vector_kernels.h: plain loops over the inline scalar
// helpers, for CPUs without AVX2 (and the reference the AVX2 table is tested
// against). Compiled for baseline x86-64; the compiler vectorises what it can.
#include <algorithm>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "cpu_ref/exp_approx.h"
#include "cpu_ref/gelu_approx.h"
#include "cpu_ref/log_approx.h"
#include "cpu_ref/tanh_approx.h"
#include "cpu_ref/half_convert.h"
#include "cpu_ref/rows_math.h"
#include "cpu_ref/vector_kernels.h"
#include "hal/dtype.h"

namespace hal::cpu_ref {

namespace {

void widen(const void* src, DType t, std::int64_t n, float* out) {
  if (n <= 0) return;
  if (t == DType::f32) {
    std::memmove(out, src, static_cast<std::size_t>(n) * sizeof(float));
    return;
  }
  const auto* s = static_cast<const std::uint16_t*>(src);
  if (t == DType::bf16) {
    for (std::int64_t i = 0; i < n; ++i) out[i] = bf16_bits_to_float(s[i]);
  } else {
    for (std::int64_t i = 0; i < n; ++i) out[i] = f16_bits_to_float(s[i]);
  }
}

void narrow(void* dst, DType t, std::int64_t n, const float* in) {
  if (n <= 0) return;
  if (t == DType::f32) {
    std::memmove(dst, in, static_cast<std::size_t>(n) * sizeof(float));
    return;
  }
  auto* d = static_cast<std::uint16_t*>(dst);
  if (t == DType::bf16) {
    for (std::int64_t i = 0; i < n; ++i) d[i] = float_to_bf16_bits(in[i]);
  } else {
    for (std::int64_t i = 0; i < n; ++i) d[i] = float_to_f16_bits(in[i]);
  }
}

// Baseline x86-64 has SSE2's streaming stores; elsewhere plain stores.
void narrow_streaming(void* dst, DType t, std::int64_t n, const float* in) {
#if defined(__SSE2__)
  if (n <= 0) return;
  auto* d = static_cast<char*>(dst);
  const std::int64_t esize = t == DType::f32 ? 4 : 2;
  // Plain stores up to a 16-byte boundary, streaming 16-byte chunks, plain tail.
  std::int64_t head = (16 - static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(d) & 15)) & 15;
  if (head % esize != 0) return narrow(dst, t, n, in);  // misaligned elements: never for real tensors
  head = std::min(head / esize, n);
  narrow(d, t, head, in);
  const std::int64_t per_chunk = 16 / esize;
  std::int64_t i = head;
  alignas(16) std::uint16_t chunk[8];
  for (; i + per_chunk <= n; i += per_chunk) {
    __m128i v;
    if (t == DType::f32) {
      v = _mm_castps_si128(_mm_loadu_ps(in + i));
    } else {
      narrow(chunk, t, per_chunk, in + i);
      v = _mm_load_si128(reinterpret_cast<const __m128i*>(chunk));
    }
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i * esize), v);
  }
  narrow(d + i * esize, t, n - i, in + i);
  _mm_sfence();
#else
  narrow(dst, t, n, in);
#endif
}

using exp_approx::sigmoid_scalar;

void exp_run(const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = exp_approx::exp_scalar(x[i]);
}
void sigmoid_run(const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = sigmoid_scalar(x[i]);
}
void silu_run(const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] * sigmoid_scalar(x[i]);
}
void gelu_run(const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = gelu_approx::gelu_scalar(x[i]);
}
void gelu_tanh_run(const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = gelu_approx::gelu_tanh_scalar(x[i]);
}
void log_run(const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = log_approx::log_scalar(x[i]);
}
void tanh_run(const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = tanh_approx::tanh_scalar(x[i]);
}
void swiglu_run(const float* g, const float* u, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = (g[i] * sigmoid_scalar(g[i])) * u[i];
}
void scale_run(const float* x, float s, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] * s;
}

float max_run(const float* x, std::int64_t n) {
  float m = x[0];
  for (std::int64_t i = 1; i < n; ++i) m = rows::nan_max(m, x[i]);
  return m;
}
std::int64_t first_extreme_run(const float* x, std::int64_t n, bool largest) {
  return rows::first_extreme(x, n, largest);
}
float sum_run(const float* x, std::int64_t n) { return rows::fixed_sum(x, n); }
float sum_squares_run(const float* x, std::int64_t n) { return rows::fixed_dot(x, x, n); }
void dot_rows_run(const float* a, std::int64_t count, std::int64_t a_stride, const void* b, DType b_type, std::int64_t n,
                  float* out) {
  for (std::int64_t r = 0; r < count; ++r) {
    const float* ar = a + r * a_stride;
    out[r] = b_type == DType::f32 ? rows::fixed_dot(ar, static_cast<const float*>(b), n)
                                  : rows::lane_sum<float>(n, [&](std::int64_t i) { return ar[i] * load_element_f32(b, b_type, i); });
  }
}
float sum_squared_deviations_run(const float* x, float mean, std::int64_t n) {
  return rows::lane_sum<float>(n, [&](std::int64_t j) {
    const float d = x[j] - mean;
    return d * d;
  });
}
float exp_shifted_sum_run(const float* x, float m, float* y, std::int64_t n, float /*abs_bound*/, PrefetchHint next) {
  SpreadPrefetch prefetch(next, n);
  for (std::int64_t i = 0; i < n; ++i) {
    prefetch.at(i);
    y[i] = exp_approx::exp_scalar(x[i] - m);
  }
  return rows::fixed_sum(y, n);
}

void rms_apply_run(const float* x, float rstd, const float* w, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = (x[i] * rstd) * w[i];
}
void layer_apply_run(const float* x, float mean, float rstd, const float* w, const float* b, float* y,
                     std::int64_t n) {
  if (b) {
    for (std::int64_t i = 0; i < n; ++i) y[i] = ((x[i] - mean) * rstd) * w[i] + b[i];
  } else {
    for (std::int64_t i = 0; i < n; ++i) y[i] = ((x[i] - mean) * rstd) * w[i];
  }
}

// The fused entries, composed (the portable table gains nothing by fusing).
float widen_sum_run(const void* src, DType t, std::int64_t n, float* out) {
  widen(src, t, n, out);
  return sum_run(out, n);
}
float widen_sum_squares_run(const void* src, DType t, std::int64_t n, float* out) {
  widen(src, t, n, out);
  return sum_squares_run(out, n);
}
RowMax row_max_run(const float* x, std::int64_t n) {
  float abs_max = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) abs_max = rows::nan_max(abs_max, std::fabs(x[i]));
  return {max_run(x, n), abs_max};
}
RowMax widen_scale_max_run(const void* src, DType t, std::int64_t n, float scale, float* out) {
  widen(src, t, n, out);
  if (scale != 1.0f) scale_run(out, scale, out, n);
  return row_max_run(out, n);
}
void store(void* dst, DType t, std::int64_t n, const float* in, bool streaming) {
  (streaming ? narrow_streaming : narrow)(dst, t, n, in);
}
constexpr std::int64_t kChunk = 256;  // the composed forms work through an L1 buffer
void scale_narrow_run(const float* x, float s, void* dst, DType t, std::int64_t n, bool streaming) {
  float buf[kChunk];
  const auto esize = static_cast<std::int64_t>(dtype_size(t));
  for (std::int64_t i = 0; i < n; i += kChunk) {
    const std::int64_t m = std::min(kChunk, n - i);
    scale_run(x + i, s, buf, m);
    store(static_cast<char*>(dst) + i * esize, t, m, buf, streaming);
  }
}
void rms_apply_narrow_run(const float* x, float rstd, const float* w, void* dst, DType t, std::int64_t n,
                          bool streaming, PrefetchHint next) {
  float buf[kChunk];
  const auto esize = static_cast<std::int64_t>(dtype_size(t));
  SpreadPrefetch prefetch(next, n);
  for (std::int64_t i = 0; i < n; i += kChunk) {
    prefetch.at(i);
    const std::int64_t m = std::min(kChunk, n - i);
    rms_apply_run(x + i, rstd, w + i, buf, m);
    store(static_cast<char*>(dst) + i * esize, t, m, buf, streaming);
  }
}
void layer_apply_narrow_run(const float* x, float mean, float rstd, const float* w, const float* b, void* dst,
                            DType t, std::int64_t n, bool streaming, PrefetchHint next) {
  float buf[kChunk];
  const auto esize = static_cast<std::int64_t>(dtype_size(t));
  SpreadPrefetch prefetch(next, n);
  for (std::int64_t i = 0; i < n; i += kChunk) {
    prefetch.at(i);
    const std::int64_t m = std::min(kChunk, n - i);
    layer_apply_run(x + i, mean, rstd, w + i, b ? b + i : nullptr, buf, m);
    store(static_cast<char*>(dst) + i * esize, t, m, buf, streaming);
  }
}

// No streaming stores in portable C++: a plain copy, the same bytes.
void copy_streaming(void* dst, const void* src, std::int64_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, static_cast<std::size_t>(bytes));
}

void weighted_row_sum_run(const float* p, const void* rows, DType rows_type, std::int64_t count, std::int64_t row_stride,
                          std::int64_t n, float* acc) {
  for (std::int64_t j = 0; j < count; ++j) {
    const float pj = p[j];
    const std::int64_t r = j * row_stride;
    if (rows_type == DType::f32) {
      const float* row = static_cast<const float*>(rows) + r;
      for (std::int64_t c = 0; c < n; ++c) acc[c] += pj * row[c];
    } else {
      for (std::int64_t c = 0; c < n; ++c) acc[c] += pj * load_element_f32(rows, rows_type, r + c);
    }
  }
}

}  // namespace

const VectorKernels& vector_kernels_portable() {
  static const VectorKernels table{
      "portable", widen,   narrow,  narrow_streaming, copy_streaming, exp_run,   sigmoid_run, silu_run, gelu_run,
      gelu_tanh_run, tanh_run, log_run, swiglu_run, scale_run,
      max_run,    first_extreme_run, sum_run, sum_squares_run, sum_squared_deviations_run, dot_rows_run, exp_shifted_sum_run,
      rms_apply_run, layer_apply_run, widen_sum_run, widen_sum_squares_run, scale_narrow_run,
      rms_apply_narrow_run, layer_apply_narrow_run, widen_scale_max_run, row_max_run,
      nullptr,    nullptr,  // no fused maps: the general path is as fast here
      weighted_row_sum_run};
  return table;
}

}  // namespace hal::cpu_ref
