// The fused elementwise maps of the AVX2 table (VectorKernels::map1_fused /
// map2_fused): widen + op + narrow in registers over contiguous runs of one
// dtype. Compiled with -mavx2 -mfma -mf16c (cpu_ref/CMakeLists.txt).
#include "cpu_ref/vector_avx2.h"

namespace hal::cpu_ref::avx2 {

namespace {

// y[i] = f(a[i], b[i]) for 8-wide f, operands and result of dtype T, the
// whole-vector part from element i on; returns where it stopped (< 8 left).
template <DType T, bool kStream, class F>
inline std::int64_t fused2_body(const void* a, const void* b, void* d, std::int64_t i, std::int64_t n, F f) {
  const auto at = [&](std::int64_t k) { return f(load8_of<T>(a, k), load8_of<T>(b, k)); };
  if constexpr (requires(__m256 v) { f.pair(v, v); }) {  // a unary map with a two-vector form
    for (; i + 2 * kW <= n; i += 2 * kW) {
      __m256 v0 = load8_of<T>(a, i), v1 = load8_of<T>(a, i + kW);
      f.pair(v0, v1);
      if constexpr (T == DType::bf16) {
        store16_bf16<kStream>(d, i, v0, v1);
      } else {
        store8<T, kStream>(d, i, v0);
        store8<T, kStream>(d, i + kW, v1);
      }
    }
  } else if constexpr (T == DType::bf16)
    for (; i + 2 * kW <= n; i += 2 * kW) store16_bf16<kStream>(d, i, at(i), at(i + kW));
  for (; i + kW <= n; i += kW) store8<T, kStream>(d, i, at(i));
  return i;
}

// The head (streaming: up to a 32-byte boundary, at most 16 elements) and the
// tail go through zero-padded 8-float buffers, widened and narrowed by the
// table's widen / narrow: each lane is computed by the same f on the same
// value wherever it lies, which is what the general path does too.
template <DType T, class F>
inline void fused2_padded(const void* a, const void* b, void* d, std::int64_t from, std::int64_t to, F f) {
  constexpr std::int64_t esize = T == DType::f32 ? 4 : 2;
  alignas(32) float fa[kW], fb[kW];
  for (std::int64_t h = from; h < to; h += kW) {
    const std::int64_t len = std::min<std::int64_t>(kW, to - h);
    std::memset(fa, 0, sizeof fa);
    std::memset(fb, 0, sizeof fb);
    widen(static_cast<const char*>(a) + h * esize, T, len, fa);
    widen(static_cast<const char*>(b) + h * esize, T, len, fb);
    _mm256_store_ps(fa, f(_mm256_load_ps(fa), _mm256_load_ps(fb)));
    narrow(static_cast<char*>(d) + h * esize, T, len, fa);
  }
}

// One function per (dtype, map), everything inlined inside it but not into
// its caller: inlined together into one dispatch function, the maps shared
// its registers, and the constants of the larger ones (gelu) pushed silu's
// onto the stack (about 12% slower).
template <DType T, class F>
[[gnu::noinline, gnu::flatten]] void fused2_typed(const void* a, const void* b, void* d, std::int64_t n, bool streaming,
                                                  F f) {
  constexpr std::int64_t esize = T == DType::f32 ? 4 : 2;
  std::int64_t head = streaming ? streaming_head(d, esize, 32, n) : 0;
  if (head < 0) {  // misaligned elements: store plainly
    streaming = false;
    head = 0;
  }
  fused2_padded<T>(a, b, d, 0, head, f);
  const std::int64_t i = streaming ? fused2_body<T, true>(a, b, d, head, n, f) : fused2_body<T, false>(a, b, d, head, n, f);
  fused2_padded<T>(a, b, d, i, n, f);
  if (streaming) _mm_sfence();
}

template <class F>
inline void fused2(const void* a, const void* b, DType t, void* d, std::int64_t n, bool streaming, F f) {
  if (n <= 0) return;
  if (t == DType::f32) fused2_typed<DType::f32>(a, b, d, n, streaming, f);
  else if (t == DType::bf16) fused2_typed<DType::bf16>(a, b, d, n, streaming, f);
  else fused2_typed<DType::f16>(a, b, d, n, streaming, f);
}

// IEEE 754-2019 maximum / minimum as binary.cpp's nan_maximum / nan_minimum:
// a when a is NaN, else b when b is NaN; -0 orders below +0. The blend keeps
// the chosen operand's bits (NaN payloads included).
HAL_ALWAYS_INLINE __m256 nan_maximum8(__m256 a, __m256 b) {
  const __m256 take_a = _mm256_or_ps(
      _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ), _mm256_cmp_ps(a, a, _CMP_UNORD_Q)),
      _mm256_andnot_ps(a, _mm256_cmp_ps(a, b, _CMP_EQ_OQ)));  // equal and a not negative (top bit only)
  return _mm256_blendv_ps(b, a, take_a);
}

HAL_ALWAYS_INLINE __m256 nan_minimum8(__m256 a, __m256 b) {
  const __m256 take_a = _mm256_or_ps(
      _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_LT_OQ), _mm256_cmp_ps(a, a, _CMP_UNORD_Q)),
      _mm256_and_ps(a, _mm256_cmp_ps(a, b, _CMP_EQ_OQ)));  // equal and a negative (top bit only)
  return _mm256_blendv_ps(b, a, take_a);
}

// The op is chosen once per call; each case is its own loop.
HAL_FLATTEN void map2_fused_run(FusedOp op, const void* a, const void* b, DType t, void* y, std::int64_t n, bool streaming) {
  switch (op) {
    case FusedOp::add: return fused2(a, b, t, y, n, streaming, [](__m256 u, __m256 v) { return _mm256_add_ps(u, v); });
    case FusedOp::sub: return fused2(a, b, t, y, n, streaming, [](__m256 u, __m256 v) { return _mm256_sub_ps(u, v); });
    case FusedOp::mul: return fused2(a, b, t, y, n, streaming, [](__m256 u, __m256 v) { return _mm256_mul_ps(u, v); });
    case FusedOp::div: return fused2(a, b, t, y, n, streaming, [](__m256 u, __m256 v) { return _mm256_div_ps(u, v); });
    case FusedOp::maximum: return fused2(a, b, t, y, n, streaming, [](__m256 u, __m256 v) { return nan_maximum8(u, v); });
    case FusedOp::minimum: return fused2(a, b, t, y, n, streaming, [](__m256 u, __m256 v) { return nan_minimum8(u, v); });
    case FusedOp::swiglu:
      return fused2(a, b, t, y, n, streaming, [](__m256 g, __m256 u) { return _mm256_mul_ps(silu8(g), u); });
    default: return;  // not a binary op: callers never pass one
  }
}

// Unary ops reuse the binary loops with b = x, ignored. (hal's unary op looks
// contiguous 16-bit runs up in tables instead, unary_table16.h.)
HAL_FLATTEN void map1_fused_run(FusedOp op, const void* x, DType t, void* y, std::int64_t n, bool streaming) {
  switch (op) {
    case FusedOp::exp: return fused2(x, x, t, y, n, streaming, UnaryMap<exp8, exp8x2>{});
    case FusedOp::sigmoid: return fused2(x, x, t, y, n, streaming, UnaryMap<sigmoid8, sigmoid8x2>{});
    case FusedOp::silu: return fused2(x, x, t, y, n, streaming, UnaryMap<silu8, silu8x2>{});
    case FusedOp::gelu: return fused2(x, x, t, y, n, streaming, UnaryMap<gelu8, gelu8x2>{});
    case FusedOp::gelu_tanh:
      return fused2(x, x, t, y, n, streaming, UnaryMap<gelu_tanh8, gelu_tanh8x2>{});
    case FusedOp::tanh: return fused2(x, x, t, y, n, streaming, UnaryMap<tanh8, tanh8x2>{});
    case FusedOp::log: return fused2(x, x, t, y, n, streaming, UnaryMap<log8, each_of_pair<log8>>{});
    case FusedOp::relu: return fused2(x, x, t, y, n, streaming, UnaryMap<relu8, each_of_pair<relu8>>{});
    case FusedOp::neg: return fused2(x, x, t, y, n, streaming, UnaryMap<neg8, each_of_pair<neg8>>{});
    case FusedOp::abs: return fused2(x, x, t, y, n, streaming, UnaryMap<abs8, each_of_pair<abs8>>{});
    case FusedOp::sqrt: return fused2(x, x, t, y, n, streaming, UnaryMap<sqrt8, each_of_pair<sqrt8>>{});
    case FusedOp::rsqrt: return fused2(x, x, t, y, n, streaming, UnaryMap<rsqrt8, each_of_pair<rsqrt8>>{});
    default: return;  // not a unary op: callers never pass one
  }
}

}  // namespace

void map1_fused(FusedOp op, const void* x, DType t, void* y, std::int64_t n, bool streaming) {
  map1_fused_run(op, x, t, y, n, streaming);
}

void map2_fused(FusedOp op, const void* a, const void* b, DType t, void* y, std::int64_t n, bool streaming) {
  map2_fused_run(op, a, b, t, y, n, streaming);
}

}  // namespace hal::cpu_ref::avx2
