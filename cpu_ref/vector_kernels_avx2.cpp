// The AVX2 + FMA + F16C table of vector_kernels.h: conversions, maps,
// reductions and the row kernels' fused passes; the fused elementwise maps
// are in vector_fused_avx2.cpp, the 8-wide building blocks in vector_avx2.h.
// Compiled with -mavx2 -mfma -mf16c (cpu_ref/CMakeLists.txt); only called
// after cpu_features() reported all three.
#include <bit>
#include <cmath>
#include <limits>

#include "cpu_ref/vector_avx2.h"

namespace hal::cpu_ref {

namespace avx2 {

// ---- conversions (not file-local: the fused loops' heads and tails use them)

[[gnu::noinline]] void widen(const void* src, DType t, std::int64_t n, float* out) {
  if (n <= 0) return;
  if (t == DType::f32) {
    std::memmove(out, src, static_cast<std::size_t>(n) * sizeof(float));
    return;
  }
  const auto* s = static_cast<const std::uint16_t*>(src);
  std::int64_t i = 0;
  if (t == DType::bf16) {
    for (; i + kW <= n; i += kW) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
      _mm256_storeu_ps(out + i, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)));
    }
    for (; i < n; ++i) out[i] = bf16_bits_to_float(s[i]);
    return;
  }
  // f16: vcvtph2ps sets the quiet bit of a signalling NaN; hal keeps the
  // payload as it is, so a block holding a NaN goes the scalar way.
  const __m128i abs_mask = _mm_set1_epi16(0x7fff), inf = _mm_set1_epi16(0x7c00);
  for (; i + kW <= n; i += kW) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    if (_mm_movemask_epi8(_mm_cmpgt_epi16(_mm_and_si128(h, abs_mask), inf)) != 0) {
      for (std::int64_t j = i; j < i + kW; ++j) out[j] = f16_bits_to_float(s[j]);
    } else {
      _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
    }
  }
  for (; i < n; ++i) out[i] = f16_bits_to_float(s[i]);
}

[[gnu::noinline]] void narrow(void* dst, DType t, std::int64_t n, const float* in) {
  if (n <= 0) return;
  if (t == DType::f32) {
    std::memmove(dst, in, static_cast<std::size_t>(n) * sizeof(float));
    return;
  }
  auto* d = static_cast<std::uint16_t*>(dst);
  std::int64_t i = 0;
  if (t == DType::bf16) {
    for (; i + 2 * kW <= n; i += 2 * kW) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), bf16_pack16(in + i));
    }
    for (; i < n; ++i) d[i] = float_to_bf16_bits(in[i]);
    return;
  }
  // f16: vcvtps2ph keeps a NaN's sign and payload; hal gives 0x7FFF, so a
  // block holding a NaN goes the scalar way.
  for (; i + kW <= n; i += kW) {
    const __m256 v = _mm256_loadu_ps(in + i);
    if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) {
      for (std::int64_t j = i; j < i + kW; ++j) d[j] = float_to_f16_bits(in[j]);
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    }
  }
  for (; i < n; ++i) d[i] = float_to_f16_bits(in[i]);
}

namespace {

HAL_FLATTEN void narrow_streaming(void* dst, DType t, std::int64_t n, const float* in) {
  if (n <= 0) return;
  auto* d = static_cast<char*>(dst);
  const std::int64_t esize = t == DType::f32 ? 4 : 2;
  // Plain stores up to a 32-byte boundary, streaming 32-byte chunks, plain tail.
  const std::int64_t head = streaming_head(d, esize, 32, n);
  if (head < 0) return narrow(dst, t, n, in);
  narrow(d, t, head, in);
  std::int64_t i = head;
  if (t == DType::f32) {
    for (; i + kW <= n; i += kW) _mm256_stream_ps(reinterpret_cast<float*>(d + i * 4), _mm256_loadu_ps(in + i));
  } else if (t == DType::bf16) {
    for (; i + 2 * kW <= n; i += 2 * kW) _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i * 2), bf16_pack16(in + i));
  } else {
    for (; i + 2 * kW <= n; i += 2 * kW) _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i * 2), f16_pack16(in + i));
  }
  narrow(d + i * esize, t, n - i, in + i);
  _mm_sfence();
}

// Plain copies up to a 32-byte boundary of dst and for the tail; streaming
// 32-byte stores between, four per step.
HAL_FLATTEN void copy_streaming(void* dst, const void* src, std::int64_t bytes) {
  if (bytes <= 0) return;
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  const std::int64_t head = streaming_head(d, 1, 32, bytes);
  std::memcpy(d, s, static_cast<std::size_t>(head));
  std::int64_t i = head;
  const auto load = [&](std::int64_t k) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + k)); };
  const auto stream = [&](std::int64_t k, __m256i v) { _mm256_stream_si256(reinterpret_cast<__m256i*>(d + k), v); };
  for (; i + 128 <= bytes; i += 128) {
    const __m256i v0 = load(i), v1 = load(i + 32), v2 = load(i + 64), v3 = load(i + 96);
    stream(i, v0);
    stream(i + 32, v1);
    stream(i + 64, v2);
    stream(i + 96, v3);
  }
  for (; i + 32 <= bytes; i += 32) stream(i, load(i));
  std::memcpy(d + i, s + i, static_cast<std::size_t>(bytes - i));
  _mm_sfence();
}

// ---- maps

HAL_FLATTEN void exp_run(const float* x, float* y, std::int64_t n) { map1(x, y, n, exp8); }
HAL_FLATTEN void sigmoid_run(const float* x, float* y, std::int64_t n) { map1(x, y, n, sigmoid8); }
HAL_FLATTEN void silu_run(const float* x, float* y, std::int64_t n) {
  map1(x, y, n, silu8);
}
HAL_FLATTEN void gelu_run(const float* x, float* y, std::int64_t n) { map1(x, y, n, gelu8); }
HAL_FLATTEN void gelu_tanh_run(const float* x, float* y, std::int64_t n) { map1(x, y, n, gelu_tanh8); }
HAL_FLATTEN void tanh_run(const float* x, float* y, std::int64_t n) { map1(x, y, n, tanh8); }
HAL_FLATTEN void log_run(const float* x, float* y, std::int64_t n) { map1(x, y, n, log8); }
HAL_FLATTEN void swiglu_run(const float* g, const float* u, float* y, std::int64_t n) {
  map2(g, u, y, n, [](__m256 a, __m256 b) { return _mm256_mul_ps(silu8(a), b); });
}
HAL_FLATTEN void scale_run(const float* x, float s, float* y, std::int64_t n) {
  const __m256 sv = _mm256_set1_ps(s);
  map1(x, y, n, [sv](__m256 v) { return _mm256_mul_ps(v, sv); });
}

// ---- reductions

HAL_FLATTEN float max_run(const float* x, std::int64_t n) {
  std::int64_t i = 0;
  float m = x[0];
  if (n >= kW) {
    __m256 acc = _mm256_loadu_ps(x);
    for (i = kW; i + kW <= n; i += kW) acc = _mm256_max_ps(_mm256_loadu_ps(x + i), acc);
    alignas(32) float l[kW];
    _mm256_store_ps(l, acc);
    m = l[0];
    for (int k = 1; k < kW; ++k) m = l[k] > m ? l[k] : m;
  }
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

// rows::first_extreme on 8 lanes. Each lane keeps its first extreme and that
// element's index (a strict compare keeps the earlier of equal values, -0 and
// +0 included); the lanes then give the extreme, the smallest index among
// equal ones. A row holding a NaN, too short for a vector or too long for
// 32-bit lane indices takes the portable table's loop (baseline code, which
// this object may call but not share, cmake/check_isa_objects.cmake).
template <bool kLargest> std::int64_t first_extreme_impl(const float* x, std::int64_t n) {
  if (n < 2 * kW || n > std::numeric_limits<std::int32_t>::max())
    return vector_kernels_portable().first_extreme(x, n, kLargest);
  const auto better = [](__m256 a, __m256 b) {
    return kLargest ? _mm256_cmp_ps(a, b, _CMP_GT_OQ) : _mm256_cmp_ps(a, b, _CMP_LT_OQ);
  };
  __m256 best = _mm256_loadu_ps(x);
  __m256i best_at = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m256i at = best_at;
  __m256 nan = _mm256_cmp_ps(best, best, _CMP_UNORD_Q);
  std::int64_t i = kW;
  for (; i + kW <= n; i += kW) {
    const __m256 v = _mm256_loadu_ps(x + i);
    at = _mm256_add_epi32(at, _mm256_set1_epi32(kW));
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    const __m256 take = better(v, best);
    best = _mm256_blendv_ps(best, v, take);
    best_at = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(best_at), _mm256_castsi256_ps(at), take));
  }
  if (_mm256_movemask_ps(nan) != 0) return vector_kernels_portable().first_extreme(x, n, kLargest);
  alignas(32) std::int32_t lane_at[kW];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lane_at), best_at);
  std::int64_t b = lane_at[0];
  for (int l = 1; l < kW; ++l) {
    const float v = x[lane_at[l]];
    if ((kLargest ? v > x[b] : v < x[b]) || (v == x[b] && lane_at[l] < b)) b = lane_at[l];
  }
  for (; i < n; ++i) {
    if (std::isnan(x[i])) return i;  // the vectors held none
    if (kLargest ? x[i] > x[b] : x[i] < x[b]) b = i;
  }
  return b;
}
HAL_FLATTEN std::int64_t first_extreme_run(const float* x, std::int64_t n, bool largest) {
  return largest ? first_extreme_impl<true>(x, n) : first_extreme_impl<false>(x, n);
}

HAL_FLATTEN float sum_run(const float* x, std::int64_t n) {
  return reduce1(x, n, [](__m256 v) { return v; });
}
HAL_FLATTEN float sum_squares_run(const float* x, std::int64_t n) {
  return reduce1(x, n, [](__m256 v) { return _mm256_mul_ps(v, v); });
}
// The last n < 8 elements of an f32 or bf16 run as a zero-padded fp32 vector.
template <DType T> HAL_ALWAYS_INLINE __m256 load_tail_of(const void* x, std::int64_t i, std::int64_t n) {
  if constexpr (T == DType::f32) return load_tail(static_cast<const float*>(x) + i, n);
  alignas(32) float buf[kW] = {};
  widen(static_cast<const std::uint16_t*>(x) + i, T, n, buf);
  return _mm256_load_ps(buf);
}

// A multiply, then the add: the products round as the portable table's do.
// Two rows at a time share the loads of b and interleave two sets of the four
// lane sums; each row's sums are LaneSums' own, so the bits do not depend on
// the pairing.
template <DType T>
HAL_ALWAYS_INLINE void dot_rows_typed(const float* a, std::int64_t count, std::int64_t a_stride, const void* b,
                                      std::int64_t n, float* out) {
  const auto b_at = [&](std::int64_t i, std::int64_t rest) { return rest == kW ? load8_of<T>(b, i) : load_tail_of<T>(b, i, rest); };
  std::int64_t r = 0;
  for (; r + 2 <= count; r += 2) {
    const float* a0 = a + r * a_stride;
    const float* a1 = a0 + a_stride;
    LaneSums s0, s1;
    std::int64_t i = 0;
    for (; i + 4 * kW <= n; i += 4 * kW) {
      __m256 bv[4];
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) bv[k] = load8_of<T>(b, i + k * kW);
      s0.add4(_mm256_mul_ps(_mm256_loadu_ps(a0 + i), bv[0]), _mm256_mul_ps(_mm256_loadu_ps(a0 + i + kW), bv[1]),
              _mm256_mul_ps(_mm256_loadu_ps(a0 + i + 2 * kW), bv[2]), _mm256_mul_ps(_mm256_loadu_ps(a0 + i + 3 * kW), bv[3]));
      s1.add4(_mm256_mul_ps(_mm256_loadu_ps(a1 + i), bv[0]), _mm256_mul_ps(_mm256_loadu_ps(a1 + i + kW), bv[1]),
              _mm256_mul_ps(_mm256_loadu_ps(a1 + i + 2 * kW), bv[2]), _mm256_mul_ps(_mm256_loadu_ps(a1 + i + 3 * kW), bv[3]));
    }
    for (; i < n; i += kW) {
      const std::int64_t rest = std::min(n - i, kW);
      const __m256 bv = b_at(i, rest);
      const auto at = [&](const float* x) { return rest == kW ? _mm256_loadu_ps(x + i) : load_tail(x + i, rest); };
      s0.add((i / kW) % 4, _mm256_mul_ps(at(a0), bv));
      s1.add((i / kW) % 4, _mm256_mul_ps(at(a1), bv));
    }
    out[r] = s0.total();
    out[r + 1] = s1.total();
  }
  if (r < count) {
    const float* a0 = a + r * a_stride;
    out[r] = lane_sum_run(
        n, [&](std::int64_t i) { return _mm256_mul_ps(_mm256_loadu_ps(a0 + i), load8_of<T>(b, i)); },
        [&](std::int64_t i) { return _mm256_mul_ps(load_tail(a0 + i, n - i), load_tail_of<T>(b, i, n - i)); });
  }
}

HAL_FLATTEN void dot_rows_run(const float* a, std::int64_t count, std::int64_t a_stride, const void* b, DType b_type,
                              std::int64_t n, float* out) {
  if (b_type == DType::bf16) dot_rows_typed<DType::bf16>(a, count, a_stride, b, n, out);
  else dot_rows_typed<DType::f32>(a, count, a_stride, b, n, out);
}

HAL_FLATTEN float sum_squared_deviations_run(const float* x, float mean, std::int64_t n) {
  const __m256 mv = _mm256_set1_ps(mean);
  return reduce1(x, n, [&](__m256 v) {
    const __m256 d = _mm256_sub_ps(v, mv);
    return _mm256_mul_ps(d, d);
  });
}

// exp_shifted_sum with exp8's range test per pair of vectors: for rows where
// some x - m is out of exp8_in_range's range.
__attribute__((noinline)) float exp_shifted_sum_checked(const float* x, float m, float* y, std::int64_t n) {
  const __m256 mv = _mm256_set1_ps(m);
  LaneSums sums;
  std::int64_t i = 0;
  for (; i + 2 * kW <= n; i += 2 * kW) {
    __m256 e0 = _mm256_sub_ps(_mm256_loadu_ps(x + i), mv), e1 = _mm256_sub_ps(_mm256_loadu_ps(x + i + kW), mv);
    exp8x2(e0, e1);
    _mm256_storeu_ps(y + i, e0);
    _mm256_storeu_ps(y + i + kW, e1);
    sums.add((i / kW) % 4, e0);
    sums.add((i / kW + 1) % 4, e1);
  }
  for (; i < n; i += kW) {
    const std::int64_t rest = std::min(n - i, kW);
    const __m256 e = _mm256_and_ps(first_lanes(rest), exp8(_mm256_sub_ps(load_tail(x + i, rest), mv)));
    store_tail(y + i, e, rest);
    sums.add((i / kW) % 4, e);
  }
  return sums.total();
}

// Whether every x[i] - m (as computed in fp32) is in exp8_in_range's range:
// the largest |x - m| as integer bits, where NaN orders above inf above every
// number, two chains.
HAL_ALWAYS_INLINE bool exp_shifted_in_range(const float* x, float m, std::int64_t n) {
  const __m256 mv = _mm256_set1_ps(m);
  __m256i a = _mm256_setzero_si256(), b = _mm256_setzero_si256();
  const auto bits = [mv](__m256 v) { return _mm256_castps_si256(abs8(_mm256_sub_ps(v, mv))); };
  std::int64_t i = 0;
  for (; i + 2 * kW <= n; i += 2 * kW) {
    a = _mm256_max_epi32(a, bits(_mm256_loadu_ps(x + i)));
    b = _mm256_max_epi32(b, bits(_mm256_loadu_ps(x + i + kW)));
  }
  for (; i < n; i += kW) {
    const std::int64_t rest = std::min(n - i, kW);
    a = _mm256_max_epi32(a, _mm256_and_si256(_mm256_castps_si256(first_lanes(rest)), bits(load_tail(x + i, rest))));
  }
  const __m256i limit = _mm256_set1_epi32(std::bit_cast<std::int32_t>(kExpInRange) - 1);
  return _mm256_movemask_epi8(_mm256_cmpgt_epi32(_mm256_max_epi32(a, b), limit)) == 0;
}

// Whether every x with |x| <= abs_bound has |x - m| < 86 as computed (false
// for a NaN or infinite bound): exactly, |x - m| <= abs_bound + |m|, and
// rounding is monotone, so the rounded |x - m| is at most the rounded sum.
HAL_ALWAYS_INLINE bool known_in_range(float abs_bound, float m) { return abs_bound + std::fabs(m) < kExpInRange; }

// Softmax's exp pass. The range test is a pass of its own over the row (x is
// in L1 here, and y may be x itself, so the test must come first), unless
// the caller's bound settles it (softmax's first pass gives one: on the
// 2-core VM about 8% of a softmax row's time); the main
// loop then runs four vectors at a time with no test or branch inside: with
// a test and an out-of-line general path per pair it was latency-bound, and
// every constant was reloaded per step (about 25% slower per element). For
// softmax (m the row's max) only rows spanning 86 or more, or holding -inf or
// NaN, take exp_shifted_sum_checked; lanes in range give the same bits in
// both loops.
HAL_FLATTEN float exp_shifted_sum_run(const float* x, float m, float* y, std::int64_t n, float abs_bound,
                                      PrefetchHint next) {
  if (!known_in_range(abs_bound, m) && !exp_shifted_in_range(x, m, n)) return exp_shifted_sum_checked(x, m, y, n);
  const __m256 mv = _mm256_set1_ps(m);
  SpreadPrefetch prefetch(next, n);
  LaneSums sums;
  std::int64_t i = 0;
  for (; i + 4 * kW <= n; i += 4 * kW) {
    prefetch.at(i);
    __m256 e[4];
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) e[k] = _mm256_sub_ps(_mm256_loadu_ps(x + i + k * kW), mv);
    exp8_in_range(e);
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) _mm256_storeu_ps(y + i + k * kW, e[k]);
    sums.add4(e[0], e[1], e[2], e[3]);
  }
  for (; i < n; i += kW) {
    const std::int64_t rest = std::min(n - i, kW);
    __m256 e[1] = {_mm256_sub_ps(load_tail(x + i, rest), mv)};
    exp8_in_range(e);  // padded lanes may be out of range: masked off
    e[0] = _mm256_and_ps(first_lanes(rest), e[0]);
    store_tail(y + i, e[0], rest);
    sums.add((i / kW) % 4, e[0]);
  }
  return sums.total();
}

// ---- attention

// Four accumulator vectors stay in registers over the whole block of rows;
// a tail of fewer than 8 columns goes through padded vectors, so every
// column is one fused multiply-add per row wherever it lies.
template <DType T>
HAL_ALWAYS_INLINE void weighted_row_sum_typed(const float* p, const void* rows, std::int64_t count,
                                              std::int64_t row_stride, std::int64_t n, float* acc) {
  std::int64_t c = 0;
  for (; c + 4 * kW <= n; c += 4 * kW) {
    __m256 a[4];
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) a[k] = _mm256_loadu_ps(acc + c + k * kW);
    for (std::int64_t j = 0; j < count; ++j) {
      const __m256 pj = _mm256_set1_ps(p[j]);
      const std::int64_t r = j * row_stride + c;
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) a[k] = _mm256_fmadd_ps(pj, load8_of<T>(rows, r + k * kW), a[k]);
    }
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) _mm256_storeu_ps(acc + c + k * kW, a[k]);
  }
  for (; c < n; c += kW) {
    const std::int64_t rest = std::min(n - c, kW);
    const auto load_row = [&](std::int64_t r) { return rest == kW ? load8_of<T>(rows, r) : load_tail_of<T>(rows, r, rest); };
    __m256 a = rest == kW ? _mm256_loadu_ps(acc + c) : load_tail(acc + c, rest);
    for (std::int64_t j = 0; j < count; ++j) a = _mm256_fmadd_ps(_mm256_set1_ps(p[j]), load_row(j * row_stride + c), a);
    store_tail(acc + c, a, rest);
  }
}

HAL_FLATTEN void weighted_row_sum_run(const float* p, const void* rows, DType rows_type, std::int64_t count,
                                      std::int64_t row_stride, std::int64_t n, float* acc) {
  if (rows_type == DType::bf16) weighted_row_sum_typed<DType::bf16>(p, rows, count, row_stride, n, acc);
  else weighted_row_sum_typed<DType::f32>(p, rows, count, row_stride, n, acc);
}

// ---- norm epilogues

HAL_FLATTEN void rms_apply_run(const float* x, float rstd, const float* w, float* y, std::int64_t n) {
  const __m256 rv = _mm256_set1_ps(rstd);
  map2(x, w, y, n, [rv](__m256 v, __m256 wv) { return _mm256_mul_ps(_mm256_mul_ps(v, rv), wv); });
}

HAL_FLATTEN void layer_apply_run(const float* x, float mean, float rstd, const float* w, const float* b, float* y,
                     std::int64_t n) {
  const __m256 mv = _mm256_set1_ps(mean), rv = _mm256_set1_ps(rstd);
  const auto normed = [mv, rv](__m256 v, __m256 wv) { return _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(v, mv), rv), wv); };
  if (!b) {
    map2(x, w, y, n, normed);
    return;
  }
  std::int64_t i = 0;
  for (; i + kW <= n; i += kW)
    _mm256_storeu_ps(y + i, _mm256_add_ps(normed(_mm256_loadu_ps(x + i), _mm256_loadu_ps(w + i)), _mm256_loadu_ps(b + i)));
  if (i < n) {
    const std::int64_t rest = n - i;
    store_tail(y + i, _mm256_add_ps(normed(load_tail(x + i, rest), load_tail(w + i, rest)), load_tail(b + i, rest)), rest);
  }
}

// ---- fused forms

// widen + reduce1 in one pass: the same lane sums as reduce1 over the widened row.
template <class F> inline float widen_reduce(const void* src, DType t, std::int64_t n, float* out, F f) {
  return with_vector_dtype(t, [&]<DType T>() {
    return lane_sum_run(
        n,
        [&](std::int64_t i) {
          const __m256 v = load8_of<T>(src, i);
          _mm256_storeu_ps(out + i, v);
          return f(v);
        },
        [&](std::int64_t i) {
          const std::int64_t rest = n - i;
          widen(static_cast<const char*>(src) + i * static_cast<std::int64_t>(dtype_size(T)), T, rest, out + i);
          return _mm256_and_ps(first_lanes(rest), f(load_tail(out + i, rest)));
        });
  });
}

HAL_FLATTEN float widen_sum_run(const void* src, DType t, std::int64_t n, float* out) {
  return widen_reduce(src, t, n, out, [](__m256 v) { return v; });
}
HAL_FLATTEN float widen_sum_squares_run(const void* src, DType t, std::int64_t n, float* out) {
  return widen_reduce(src, t, n, out, [](__m256 v) { return _mm256_mul_ps(v, v); });
}

// widen (+ scale) + max_run in one pass: the same lane maxima, combined in
// the same order, then the same scalar tail, as max_run over the widened row.
// The largest magnitude rides along as integer bits (|v| with its sign bit
// cleared orders as a signed integer, NaN above +inf): two operations per
// vector, where exp_shifted_sum's own range test is a pass over the row.
// Without kStore (row_max: f32, unscaled) out is not written and the tail is
// read from src itself.
template <DType T, bool kScaled, bool kStore = true>
RowMax widen_scale_max_impl(const void* src, std::int64_t n, float scale, float* out) {
  static_assert(kStore || (T == DType::f32 && !kScaled), "only an unscaled f32 row is its own widened form");
  const __m256 sv = _mm256_set1_ps(scale);
  const auto get = [&](std::int64_t i) {
    const __m256 v = load8_of<T>(src, i);
    return kScaled ? _mm256_mul_ps(v, sv) : v;
  };
  const auto magnitude = [](__m256 v) { return _mm256_castps_si256(abs8(v)); };
  std::int64_t i = 0;
  float m = 0.0f;
  std::uint32_t abs_bits = 0;
  if (n >= kW) {
    __m256 acc = get(0);
    __m256i abs_acc = magnitude(acc);
    if constexpr (kStore) _mm256_storeu_ps(out, acc);
    for (i = kW; i + kW <= n; i += kW) {
      const __m256 v = get(i);
      if constexpr (kStore) _mm256_storeu_ps(out + i, v);
      acc = _mm256_max_ps(v, acc);
      abs_acc = _mm256_max_epi32(abs_acc, magnitude(v));
    }
    alignas(32) float l[kW];
    _mm256_store_ps(l, acc);
    m = l[0];
    for (int k = 1; k < kW; ++k) m = l[k] > m ? l[k] : m;
    alignas(32) std::uint32_t a[kW];
    _mm256_store_si256(reinterpret_cast<__m256i*>(a), abs_acc);
    abs_bits = *std::max_element(a, a + kW);
  }
  const float* row = out;
  if constexpr (kStore) {
    if (i < n) {
      widen(static_cast<const char*>(src) + i * static_cast<std::int64_t>(dtype_size(T)), T, n - i, out + i);
      if (kScaled)
        for (std::int64_t j = i; j < n; ++j) out[j] *= scale;
    }
  } else {
    row = static_cast<const float*>(src);
  }
  if (i == 0 && i < n) m = row[0];
  for (; i < n; ++i) {
    m = row[i] > m ? row[i] : m;
    abs_bits = std::max(abs_bits, std::bit_cast<std::uint32_t>(row[i]) & 0x7fffffffu);
  }
  return {m, std::bit_cast<float>(abs_bits)};
}

HAL_FLATTEN RowMax widen_scale_max_run(const void* src, DType t, std::int64_t n, float scale, float* out) {
  return with_vector_dtype(t, [&]<DType T>() {
    return scale != 1.0f ? widen_scale_max_impl<T, true>(src, n, scale, out)
                         : widen_scale_max_impl<T, false>(src, n, scale, out);
  });
}
HAL_FLATTEN RowMax row_max_run(const float* x, std::int64_t n) {
  return widen_scale_max_impl<DType::f32, false, false>(x, n, 1.0f, nullptr);
}

// The whole-vector part of map3_narrow, from element i on; returns where it
// stopped (fewer than 8 left).
template <DType T, bool kStream, class F>
inline std::int64_t map3_narrow_body(const float* a, const float* b, const float* c, void* d, std::int64_t i,
                                     std::int64_t n, F f, SpreadPrefetch& prefetch) {
  const auto at = [&](std::int64_t k) { return f(_mm256_loadu_ps(a + k), _mm256_loadu_ps(b + k), _mm256_loadu_ps(c + k)); };
  if constexpr (T == DType::bf16)
    for (; i + 2 * kW <= n; i += 2 * kW) {
      prefetch.at(i);
      store16_bf16<kStream>(d, i, at(i), at(i + kW));
    }
  for (; i + kW <= n; i += kW) {
    prefetch.at(i);
    store8<T, kStream>(d, i, at(i));
  }
  return i;
}

// dst[i] = f(a[i], b[i], c[i]) rounded to t, for an 8-wide f: map + narrow in
// one pass. The unaligned head (streaming: up to a 32-byte boundary) and the
// tail go through an 8-float buffer and narrow, computing the same lanes.
// `next` is requested spread over the loop (prefetch.h).
template <class F>
inline void map3_narrow(const float* a, const float* b, const float* c, void* dst, DType t, std::int64_t n,
                        bool streaming, F f, PrefetchHint next = {}) {
  SpreadPrefetch prefetch(next, n);
  const auto esize = static_cast<std::int64_t>(dtype_size(t));
  auto* d = static_cast<char*>(dst);
  std::int64_t head = streaming ? streaming_head(d, esize, 32, n) : 0;
  if (head < 0) {  // misaligned elements: store plainly
    streaming = false;
    head = 0;
  }
  alignas(32) float buf[kW];
  for (std::int64_t h = 0; h < head; h += kW) {  // at most 16 elements: two padded vectors
    const std::int64_t len = std::min<std::int64_t>(kW, head - h);
    _mm256_store_ps(buf, f(load_tail(a + h, len), load_tail(b + h, len), load_tail(c + h, len)));
    narrow(d + h * esize, t, len, buf);
  }
  std::int64_t i = head;
  if (t == DType::f32) {
    i = streaming ? map3_narrow_body<DType::f32, true>(a, b, c, d, i, n, f, prefetch)
                  : map3_narrow_body<DType::f32, false>(a, b, c, d, i, n, f, prefetch);
  } else if (t == DType::bf16) {
    i = streaming ? map3_narrow_body<DType::bf16, true>(a, b, c, d, i, n, f, prefetch)
                  : map3_narrow_body<DType::bf16, false>(a, b, c, d, i, n, f, prefetch);
  } else {
    i = streaming ? map3_narrow_body<DType::f16, true>(a, b, c, d, i, n, f, prefetch)
                  : map3_narrow_body<DType::f16, false>(a, b, c, d, i, n, f, prefetch);
  }
  if (i < n) {
    const std::int64_t rest = n - i;
    _mm256_store_ps(buf, f(load_tail(a + i, rest), load_tail(b + i, rest), load_tail(c + i, rest)));
    narrow(d + i * esize, t, rest, buf);
  }
  if (streaming) _mm_sfence();
}

// Two operands: the third slot repeats the first and is ignored.
template <class F>
inline void map2_narrow(const float* a, const float* b, void* dst, DType t, std::int64_t n, bool streaming, F f,
                        PrefetchHint next = {}) {
  map3_narrow(a, b, a, dst, t, n, streaming, [f](__m256 x, __m256 y, __m256) { return f(x, y); }, next);
}

HAL_FLATTEN void scale_narrow_run(const float* x, float s, void* dst, DType t, std::int64_t n, bool streaming) {
  const __m256 sv = _mm256_set1_ps(s);
  map2_narrow(x, x, dst, t, n, streaming, [sv](__m256 v, __m256) { return _mm256_mul_ps(v, sv); });
}

HAL_FLATTEN void rms_apply_narrow_run(const float* x, float rstd, const float* w, void* dst, DType t, std::int64_t n,
                                      bool streaming, PrefetchHint next) {
  const __m256 rv = _mm256_set1_ps(rstd);
  map2_narrow(
      x, w, dst, t, n, streaming, [rv](__m256 v, __m256 wv) { return _mm256_mul_ps(_mm256_mul_ps(v, rv), wv); },
      next);
}

HAL_FLATTEN void layer_apply_narrow_run(const float* x, float mean, float rstd, const float* w, const float* b, void* dst,
                                        DType t, std::int64_t n, bool streaming, PrefetchHint next) {
  const __m256 mv = _mm256_set1_ps(mean), rv = _mm256_set1_ps(rstd);
  const auto normed = [mv, rv](__m256 v, __m256 wv) {
    return _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(v, mv), rv), wv);
  };
  if (!b) {
    map2_narrow(x, w, dst, t, n, streaming, normed, next);
    return;
  }
  map3_narrow(
      x, w, b, dst, t, n, streaming,
      [normed](__m256 v, __m256 wv, __m256 bv) { return _mm256_add_ps(normed(v, wv), bv); }, next);
}

}  // namespace

}  // namespace avx2

const VectorKernels* vector_kernels_avx2() {
  using namespace avx2;
  static const VectorKernels table{
      "avx2",  widen,   narrow,  narrow_streaming, copy_streaming, exp_run,   sigmoid_run, silu_run, gelu_run,
      gelu_tanh_run, tanh_run, log_run, swiglu_run, scale_run,
      max_run, first_extreme_run, sum_run, sum_squares_run, sum_squared_deviations_run, dot_rows_run, exp_shifted_sum_run,
      rms_apply_run, layer_apply_run, widen_sum_run, widen_sum_squares_run, scale_narrow_run,
      rms_apply_narrow_run, layer_apply_narrow_run, widen_scale_max_run, row_max_run,
      avx2::map1_fused, avx2::map2_fused, weighted_row_sum_run};
  return &table;
}

}  // namespace hal::cpu_ref
