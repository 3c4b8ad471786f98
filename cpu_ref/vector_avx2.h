#pragma once
// The 8-wide building blocks of the AVX2 + FMA + F16C vector kernels
// (vector_kernels_avx2.cpp: the table; vector_fused_avx2.cpp: the fused
// elementwise maps). Include only from files compiled with -mavx2 -mfma
// -mf16c, whose names end in _avx2.cpp (cpu_ref/CMakeLists.txt).
//
// Loops run 8 floats (one __m256) at a time (bf16 stores: 16, one 32-byte
// store per two vectors, the same bits); a tail of fewer than 8 goes
// through a zero-padded 8-float buffer, so each element is computed by the
// same instructions wherever it lies in the run. Sums keep four accumulator
// vectors, which are exactly the 32 interleaved lanes of rows_math.h, and
// combine them in the same order (LaneSums); with no multiply in the way
// (sum) the bits equal the portable table's.
#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#error "cpu_ref/vector_avx2.h needs -mavx2 -mfma -mf16c: include it only from *_avx2.cpp files"
#endif

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "cpu_ref/exp_approx.h"
#include "cpu_ref/gelu_approx.h"
#include "cpu_ref/log_approx.h"
#include "cpu_ref/tanh_approx.h"
#include "cpu_ref/half_convert.h"
#include "cpu_ref/vector_kernels.h"

namespace hal::cpu_ref::avx2 {

// The 8-wide helpers must inline: called across a function boundary, every
// live vector register is spilled (all ymm are caller-saved) and constants are
// reloaded, which made the fused loops two to three times slower.
#define HAL_ALWAYS_INLINE inline __attribute__((always_inline))
// On the table entries: everything they call inlines (lambdas and function
// arguments included), except what is marked noinline.
#define HAL_FLATTEN [[gnu::flatten]]

constexpr std::int64_t kW = 8;

// The elements (of esize bytes, at most n) a streaming loop stores plainly
// before dst reaches an `align`-byte boundary (a power of two); -1 when dst is
// not even element-aligned (never for real tensors): then store plainly.
HAL_ALWAYS_INLINE std::int64_t streaming_head(const void* dst, std::int64_t esize, std::int64_t align, std::int64_t n) {
  const auto mis = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(dst) & static_cast<std::uintptr_t>(align - 1));
  if (mis % esize != 0) return -1;
  return std::min(n, ((align - mis) & (align - 1)) / esize);
}

// Copies the last n < 8 floats into a zero-padded vector.
HAL_ALWAYS_INLINE __m256 load_tail(const float* x, std::int64_t n) {
  alignas(32) float buf[kW] = {};
  std::memcpy(buf, x, static_cast<std::size_t>(n) * sizeof(float));
  return _mm256_load_ps(buf);
}

HAL_ALWAYS_INLINE void store_tail(float* y, __m256 v, std::int64_t n) {
  alignas(32) float buf[kW];
  _mm256_store_ps(buf, v);
  std::memcpy(y, buf, static_cast<std::size_t>(n) * sizeof(float));
}

// ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), as rows::combine_lanes.
HAL_ALWAYS_INLINE float combine_lanes(__m256 acc) {
  alignas(32) float l[kW];
  _mm256_store_ps(l, acc);
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

// exp_approx.h's algorithm, 8 lanes, with FMA. n = round(x log2e) comes from
// adding 1.5 * 2^23 (the rounding add leaves n in the low mantissa bits, and
// (bits + 127) << 23 is then 2^n: the magic's own bits shift out), and the
// polynomial is 1 + r (1 + r P(r)) in Horner form.
//
// The common case |x| < 86 needs no clamp and one power-of-two multiply (n in
// [-125, 125]). A vector holding anything else (large, NaN, inf) takes the
// general path: clamp to [-104, 89] and scale by two powers of two, so
// subnormal results round once and overflow gives +inf. For |x| < 86 both
// paths compute the same bits, so a lane's result does not depend on its
// neighbours, nor on how many vectors are computed together.
//
// The steps run over N vectors at once, step by step: the polynomial is a
// chain of dependent FMAs, and with one chain in flight the FMA ports idle
// (two vectors: about 25% faster per element than one; four, in the softmax
// loop, about 10% more). Sets e = e^r and t = magic + n, lane for lane.
template <int N> HAL_ALWAYS_INLINE void exp_poly8xN(const __m256 (&x)[N], __m256 (&e)[N], __m256 (&t)[N]) {
  using namespace exp_approx;
  const __m256 magic = _mm256_set1_ps(kRoundMagic), log2e = _mm256_set1_ps(kLog2e);
  const __m256 ln2_hi = _mm256_set1_ps(kLn2Hi), ln2_lo = _mm256_set1_ps(kLn2Lo);
  __m256 n[N], r[N];
#pragma GCC unroll 4
  for (int k = 0; k < N; ++k) t[k] = _mm256_fmadd_ps(x[k], log2e, magic);
#pragma GCC unroll 4
  for (int k = 0; k < N; ++k) n[k] = _mm256_sub_ps(t[k], magic);
#pragma GCC unroll 4
  for (int k = 0; k < N; ++k) r[k] = _mm256_fnmadd_ps(n[k], ln2_hi, x[k]);
#pragma GCC unroll 4
  for (int k = 0; k < N; ++k) r[k] = _mm256_fnmadd_ps(n[k], ln2_lo, r[k]);
  const __m256 p0 = _mm256_set1_ps(kP0), p1 = _mm256_set1_ps(kP1);
#pragma GCC unroll 4
  for (int k = 0; k < N; ++k) e[k] = _mm256_fmadd_ps(p0, r[k], p1);
  const auto step = [&](float c) {
    const __m256 cv = _mm256_set1_ps(c);
#pragma GCC unroll 4
    for (int k = 0; k < N; ++k) e[k] = _mm256_fmadd_ps(e[k], r[k], cv);
  };
  step(kP2);
  step(kP3);
  step(kP4);
  step(1.0f);
  step(1.0f);
}

// x = e^x for N vectors whose every lane has |x| < 86 (no NaN, no inf).
template <int N> HAL_ALWAYS_INLINE void exp8_in_range(__m256 (&x)[N]) {
  __m256 e[N], t[N];
  exp_poly8xN(x, e, t);
  // e * 2^n as an integer add of n to e's exponent field: exact, hence the
  // multiply's bits, while the result is normal (here n is in [-125, 125] and
  // e in [0.7, 1.5]); it frees an FMA-port slot, the port exp is bound by.
  // t's bits are magic + n; shifted left by 23 the magic's bits leave.
#pragma GCC unroll 4
  for (int k = 0; k < N; ++k)
    x[k] = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(e[k]), _mm256_slli_epi32(_mm256_castps_si256(t[k]), 23)));
}

// Rare (a lane out of range, inf or NaN): kept out of line so the hot loops
// stay small.
inline __attribute__((noinline)) __m256 exp8_general(__m256 x) {
  using namespace exp_approx;
  // min/max return their second operand when either is NaN: NaN passes.
  x = _mm256_min_ps(_mm256_set1_ps(kHi), x);
  x = _mm256_max_ps(_mm256_set1_ps(kLo), x);
  const __m256 xs[1] = {x};
  __m256 e[1], t[1];
  exp_poly8xN(xs, e, t);
  // n in [-150, 128] as n1 + n2, each a normal power of two; a NaN lane's
  // garbage exponent is harmless, e is NaN there.
  const __m256i k = _mm256_sub_epi32(_mm256_castps_si256(t[0]), _mm256_castps_si256(_mm256_set1_ps(kRoundMagic)));
  const __m256i k1 = _mm256_srai_epi32(k, 1);
  const __m256i k2 = _mm256_sub_epi32(k, k1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(e[0], s1), s2);
}

// |x| with NaN lanes unchanged in kind (still NaN).
HAL_ALWAYS_INLINE __m256 abs8(__m256 x) { return _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))); }

// exp8_in_range takes |x| < kExpInRange.
inline constexpr float kExpInRange = 86.0f;

// Lanes that need exp8_general: |x| >= 86, inf or NaN (the compare is
// unordered-true).
HAL_ALWAYS_INLINE __m256 exp_out_of_range(__m256 abs_x) {
  return _mm256_cmp_ps(abs_x, _mm256_set1_ps(kExpInRange), _CMP_NLT_UQ);
}

HAL_ALWAYS_INLINE __m256 exp8(__m256 x) {
  if (_mm256_movemask_ps(exp_out_of_range(abs8(x))) != 0) return exp8_general(x);
  __m256 v[1] = {x};
  exp8_in_range(v);
  return v[0];
}

// exp8 of two vectors, interleaved, with one range test for both: when
// either needs the general path both take it (the same bits for |x| < 86).
HAL_ALWAYS_INLINE void exp8x2(__m256& x0, __m256& x1) {
  // max_ps passes its second operand on NaN: test x0's and x1's NaN lanes too.
  const __m256 out = _mm256_or_ps(exp_out_of_range(_mm256_max_ps(abs8(x0), abs8(x1))), _mm256_cmp_ps(x0, x1, _CMP_UNORD_Q));
  if (_mm256_movemask_ps(out) != 0) {
    x0 = exp8_general(x0);
    x1 = exp8_general(x1);
    return;
  }
  __m256 v[2] = {x0, x1};
  exp8_in_range(v);
  x0 = v[0];
  x1 = v[1];
}

HAL_ALWAYS_INLINE __m256 sigmoid8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 e = exp8(_mm256_xor_ps(x, _mm256_set1_ps(-0.0f)));
  return _mm256_div_ps(one, _mm256_add_ps(one, e));
}

// x's own lanes where x is NaN, y's elsewhere. x * f(x) for a NaN x multiplies
// two NaNs (f's, from |x| or -x, has another sign), and which one a multiply
// returns depends on its operand order, which the compiler may swap: the fused
// and the plain loops gave NaNs of opposite signs (gelu, 967b4eb). This pins
// the bits. (silu has the same pattern and has agreed so far; pinning it cost
// about 10% of its speed on the VM, so it is left.)
HAL_ALWAYS_INLINE __m256 keep_nan(__m256 x, __m256 y) { return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q)); }

HAL_ALWAYS_INLINE __m256 silu8(__m256 x) { return _mm256_mul_ps(x, sigmoid8(x)); }

// Two-vector forms (exp8x2's interleaving), lane for lane the bits of the
// one-vector ones.
HAL_ALWAYS_INLINE void sigmoid8x2(__m256& x0, __m256& x1) {
  const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
  __m256 e0 = _mm256_xor_ps(x0, sign), e1 = _mm256_xor_ps(x1, sign);
  exp8x2(e0, e1);
  x0 = _mm256_div_ps(one, _mm256_add_ps(one, e0));
  x1 = _mm256_div_ps(one, _mm256_add_ps(one, e1));
}

HAL_ALWAYS_INLINE void silu8x2(__m256& x0, __m256& x1) {
  __m256 s0 = x0, s1 = x1;
  sigmoid8x2(s0, s1);
  x0 = _mm256_mul_ps(x0, s0);
  x1 = _mm256_mul_ps(x1, s1);
}

// gelu_approx.h's gelus, 8 lanes, with FMA; the two-vector forms go through
// exp8x2 / sigmoid8x2 (lane for lane the one-vector bits).
HAL_ALWAYS_INLINE __m256 erfc_z8(__m256 x) {  // z = |x| / sqrt2
  return _mm256_mul_ps(abs8(x), _mm256_set1_ps(gelu_approx::kInvSqrt2));
}
HAL_ALWAYS_INLINE __m256 erfc_t8(__m256 z) {  // t = 1 / (1 + z / 2)
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_fmadd_ps(_mm256_set1_ps(0.5f), z, one));
}
HAL_ALWAYS_INLINE __m256 erfc_exponent8(__m256 z, __m256 t) {  // -z^2 + P(t)
  using namespace gelu_approx;
  const auto c = [](int k) { return _mm256_set1_ps(kErfc[k]); };
  const __m256 t2 = _mm256_mul_ps(t, t), t4 = _mm256_mul_ps(t2, t2), t8 = _mm256_mul_ps(t4, t4);
  const __m256 q0 = _mm256_fmadd_ps(c(1), t, c(0)), q1 = _mm256_fmadd_ps(c(3), t, c(2)),
               q2 = _mm256_fmadd_ps(c(5), t, c(4)), q3 = _mm256_fmadd_ps(c(7), t, c(6)),
               q4 = _mm256_fmadd_ps(c(9), t, c(8));
  const __m256 low = _mm256_fmadd_ps(_mm256_fmadd_ps(q3, t2, q2), t4, _mm256_fmadd_ps(q1, t2, q0));
  return _mm256_fnmadd_ps(z, z, _mm256_fmadd_ps(q4, t8, low));
}
HAL_ALWAYS_INLINE __m256 gelu_finish8(__m256 x, __m256 t, __m256 e) {  // x Phi(x), e = exp(exponent)
  const __m256 half = _mm256_set1_ps(0.5f);
  const __m256 half_e = _mm256_mul_ps(half, _mm256_mul_ps(t, e));
  const __m256 non_positive = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LE_OQ);
  return keep_nan(x, _mm256_mul_ps(x, _mm256_blendv_ps(_mm256_sub_ps(_mm256_set1_ps(1.0f), half_e), half_e, non_positive)));
}
HAL_ALWAYS_INLINE __m256 gelu8(__m256 x) {
  const __m256 z = erfc_z8(x), t = erfc_t8(z);
  return gelu_finish8(x, t, exp8(erfc_exponent8(z, t)));
}
HAL_ALWAYS_INLINE void gelu8x2(__m256& x0, __m256& x1) {
  const __m256 z0 = erfc_z8(x0), z1 = erfc_z8(x1), t0 = erfc_t8(z0), t1 = erfc_t8(z1);
  __m256 e0 = erfc_exponent8(z0, t0), e1 = erfc_exponent8(z1, t1);
  exp8x2(e0, e1);
  x0 = gelu_finish8(x0, t0, e0);
  x1 = gelu_finish8(x1, t1, e1);
}

HAL_ALWAYS_INLINE __m256 gelu_tanh_arg8(__m256 x) {  // 2u = 2 sqrt(2/pi) (x + 0.044715 x^3)
  using namespace gelu_approx;
  const __m256 cubic = _mm256_mul_ps(_mm256_set1_ps(kCubic), _mm256_mul_ps(x, x));
  return _mm256_mul_ps(_mm256_set1_ps(kTwoSqrt2OverPi), _mm256_fmadd_ps(cubic, x, x));
}
HAL_ALWAYS_INLINE __m256 gelu_tanh8(__m256 x) { return keep_nan(x, _mm256_mul_ps(x, sigmoid8(gelu_tanh_arg8(x)))); }
HAL_ALWAYS_INLINE void gelu_tanh8x2(__m256& x0, __m256& x1) {
  __m256 s0 = gelu_tanh_arg8(x0), s1 = gelu_tanh_arg8(x1);
  sigmoid8x2(s0, s1);
  x0 = keep_nan(x0, _mm256_mul_ps(x0, s0));
  x1 = keep_nan(x1, _mm256_mul_ps(x1, s1));
}

// tanh_approx.h's tanh, 8 lanes, with FMA: both forms on |x|, x's sign after;
// the two-vector form goes through exp8x2 (lane for lane the same bits).
HAL_ALWAYS_INLINE __m256 tanh_finish8(__m256 x, __m256 e) {  // e = exp(2|x|)
  using namespace tanh_approx;
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 a = abs8(x), s = _mm256_mul_ps(a, a);
  __m256 p = _mm256_set1_ps(kP[5]);
  for (int k = 4; k >= 0; --k) p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(kP[k]));
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(a, s), p, a);
  const __m256 large = _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, one)));
  const __m256 r = _mm256_blendv_ps(large, small, _mm256_cmp_ps(a, _mm256_set1_ps(kPolyBelow), _CMP_LT_OQ));
  return keep_nan(x, _mm256_or_ps(r, _mm256_and_ps(x, _mm256_set1_ps(-0.0f))));
}
HAL_ALWAYS_INLINE __m256 twice_abs8(__m256 x) {
  const __m256 a = abs8(x);
  return _mm256_add_ps(a, a);
}
HAL_ALWAYS_INLINE __m256 tanh8(__m256 x) { return tanh_finish8(x, exp8(twice_abs8(x))); }
HAL_ALWAYS_INLINE void tanh8x2(__m256& x0, __m256& x1) {
  __m256 e0 = twice_abs8(x0), e1 = twice_abs8(x1);
  exp8x2(e0, e1);
  x0 = tanh_finish8(x0, e0);
  x1 = tanh_finish8(x1, e1);
}

// The exact maps: relu (+0 for every number <= 0, -0 included; NaN kept), neg
// and abs (the sign bit).
HAL_ALWAYS_INLINE __m256 relu8(__m256 x) { return _mm256_and_ps(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_NLE_UQ), x); }
HAL_ALWAYS_INLINE __m256 neg8(__m256 x) { return _mm256_xor_ps(x, _mm256_set1_ps(-0.0f)); }
// log_approx.h's log, 8 lanes, with FMA: m 2^e with m in [sqrt(1/2), sqrt(2)],
// then the polynomial in f = m - 1. x must be a positive normal number or
// have gone through log8_general's scaling (tiny: the lanes scaled by 2^23).
HAL_ALWAYS_INLINE __m256 log8_core(__m256 x, __m256 tiny) {
  using namespace log_approx;
  const __m256i bits = _mm256_castps_si256(x);
  __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127));
  e = _mm256_sub_epi32(e, _mm256_and_si256(_mm256_castps_si256(tiny), _mm256_set1_epi32(23)));
  __m256 m = _mm256_castsi256_ps(
      _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x3f800000)));
  const __m256 big = _mm256_cmp_ps(m, _mm256_set1_ps(kSqrt2), _CMP_GT_OQ);
  m = _mm256_blendv_ps(m, _mm256_mul_ps(m, _mm256_set1_ps(0.5f)), big);
  e = _mm256_sub_epi32(e, _mm256_castps_si256(big));  // all-ones lanes: e + 1
  const __m256 f = _mm256_sub_ps(m, _mm256_set1_ps(1.0f)), z = _mm256_mul_ps(f, f), ef = _mm256_cvtepi32_ps(e);
  __m256 p = _mm256_set1_ps(kP[0]);
  for (int k = 1; k < 9; ++k) p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kP[k]));
  __m256 y = _mm256_mul_ps(_mm256_mul_ps(f, z), p);
  y = _mm256_fmadd_ps(_mm256_set1_ps(kLn2Lo), ef, y);
  y = _mm256_fmadd_ps(_mm256_set1_ps(-0.5f), z, y);
  return _mm256_fmadd_ps(_mm256_set1_ps(kLn2Hi), ef, _mm256_add_ps(f, y));
}

// Rare (a lane subnormal, <= 0, inf or NaN): out of line, as exp8_general.
// Special lanes as log_scalar returns them: +-0 -> -inf; negative -> NaN;
// +inf -> +inf; NaN -> x quietened.
inline __attribute__((noinline)) __m256 log8_general(__m256 x) {
  const __m256 tiny = _mm256_cmp_ps(x, _mm256_set1_ps(std::numeric_limits<float>::min()), _CMP_LT_OQ);
  __m256 r = log8_core(_mm256_blendv_ps(x, _mm256_mul_ps(x, _mm256_set1_ps(log_approx::kSubnormalScale)), tiny), tiny);
  const __m256 inf = _mm256_set1_ps(std::numeric_limits<float>::infinity());
  r = _mm256_blendv_ps(r, _mm256_add_ps(x, x), _mm256_or_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q), _mm256_cmp_ps(x, inf, _CMP_EQ_OQ)));
  r = _mm256_blendv_ps(r, _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN()), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
  return _mm256_blendv_ps(r, _mm256_xor_ps(inf, _mm256_set1_ps(-0.0f)), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_EQ_OQ));
}

HAL_ALWAYS_INLINE __m256 log8(__m256 x) {
  // Every lane a positive normal finite number, or the general path (the
  // compare is unordered-true, so NaN lanes go there too).
  const __m256 normal = _mm256_and_ps(_mm256_cmp_ps(x, _mm256_set1_ps(std::numeric_limits<float>::min()), _CMP_GE_OQ),
                                      _mm256_cmp_ps(x, _mm256_set1_ps(std::numeric_limits<float>::infinity()), _CMP_LT_OQ));
  if (_mm256_movemask_ps(normal) != 0xff) return log8_general(x);
  return log8_core(x, _mm256_setzero_ps());
}

// IEEE square root and its correctly rounded reciprocal: the bits of the
// scalar std::sqrt and 1 / std::sqrt (the NaN of a negative input included).
HAL_ALWAYS_INLINE __m256 sqrt8(__m256 x) { return _mm256_sqrt_ps(x); }
HAL_ALWAYS_INLINE __m256 rsqrt8(__m256 x) { return _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_sqrt_ps(x)); }

// Two vectors through a one-vector map, for the maps with no interleaved form.
template <__m256 (*kOne)(__m256)> HAL_ALWAYS_INLINE void each_of_pair(__m256& x0, __m256& x1) {
  x0 = kOne(x0);
  x1 = kOne(x1);
}

// The unary maps as functors for the fused loops: operator() on one vector
// (the second operand is ignored), pair() on two at once.
template <__m256 (*kOne)(__m256), void (*kPair)(__m256&, __m256&)> struct UnaryMap {
  HAL_ALWAYS_INLINE __m256 operator()(__m256 v, __m256) const { return kOne(v); }
  HAL_ALWAYS_INLINE void pair(__m256& v0, __m256& v1) const { kPair(v0, v1); }
};

// y = f(x) for 8-wide f, with the padded tail.
template <class F> inline void map1(const float* x, float* y, std::int64_t n, F f) {
  std::int64_t i = 0;
  for (; i + kW <= n; i += kW) _mm256_storeu_ps(y + i, f(_mm256_loadu_ps(x + i)));
  if (i < n) store_tail(y + i, f(load_tail(x + i, n - i)), n - i);
}

template <class F> inline void map2(const float* a, const float* b, float* y, std::int64_t n, F f) {
  std::int64_t i = 0;
  for (; i + kW <= n; i += kW) _mm256_storeu_ps(y + i, f(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
  if (i < n) store_tail(y + i, f(load_tail(a + i, n - i), load_tail(b + i, n - i)), n - i);
}

// The 32 lanes of rows_math.h's fixed-order sums as four vectors: lane 8j + l
// of the order is lane l of vector j. Four independent add chains: with one
// vector every add waits for the one before (3 cycles per 8 elements, which
// bounded the norms' sums).
struct LaneSums {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
  HAL_ALWAYS_INLINE void add4(__m256 v0, __m256 v1, __m256 v2, __m256 v3) {
    a0 = _mm256_add_ps(a0, v0);
    a1 = _mm256_add_ps(a1, v1);
    a2 = _mm256_add_ps(a2, v2);
    a3 = _mm256_add_ps(a3, v3);
  }
  // Adds v to vector j (0..3).
  HAL_ALWAYS_INLINE void add(std::int64_t j, __m256 v) {
    switch (j) {
      case 0: a0 = _mm256_add_ps(a0, v); break;
      case 1: a1 = _mm256_add_ps(a1, v); break;
      case 2: a2 = _mm256_add_ps(a2, v); break;
      default: a3 = _mm256_add_ps(a3, v); break;
    }
  }
  // rows::combine_lanes: the four groups lane by lane, then the eight lanes.
  HAL_ALWAYS_INLINE float total() const {
    return combine_lanes(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  }
};

// The fixed-order sum over a run of n: value(i) gives the 8 terms from element
// i of the whole vectors, in order; tail(i) those of the last, partial one
// (its padded lanes must be +0: adding +0 leaves every lane's bits unchanged,
// as a lane sum starting at +0 is never -0).
template <class Value, class Tail> HAL_ALWAYS_INLINE float lane_sum_run(std::int64_t n, Value value, Tail tail) {
  LaneSums sums;
  std::int64_t i = 0;
  for (; i + 4 * kW <= n; i += 4 * kW) {
    const __m256 v0 = value(i), v1 = value(i + kW), v2 = value(i + 2 * kW), v3 = value(i + 3 * kW);
    sums.add4(v0, v1, v2, v3);
  }
  for (; i + kW <= n; i += kW) sums.add((i / kW) % 4, value(i));
  if (i < n) sums.add((i / kW) % 4, tail(i));
  return sums.total();
}

// The lanes of a partial last vector of `rest` < 8 elements, as a mask.
HAL_ALWAYS_INLINE __m256 first_lanes(std::int64_t rest) {
  return _mm256_castsi256_ps(
      _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(rest)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
}

// Fixed-order sum of f(x[i]) over the run; the padded tail lanes add f(0),
// which `f` must map to +0.
template <class F> inline float reduce1(const float* x, std::int64_t n, F f) {
  return lane_sum_run(
      n, [&](std::int64_t i) { return f(_mm256_loadu_ps(x + i)); },
      [&](std::int64_t i) { return _mm256_and_ps(first_lanes(n - i), f(load_tail(x + i, n - i))); });
}

// Eight floats to bf16 bits in the low 16 bits of each 32-bit lane.
HAL_ALWAYS_INLINE __m256i bf16_round8(__m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb), 16);
  // One unordered compare finds the NaN lanes (|u| > 0x7f800000 as integers).
  const __m256 is_nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
  return _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(rounded), _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff)), is_nan));
}

// Sixteen floats to bf16 / f16 bits, in order, bit for bit the scalar
// converters. bf16: packus works per 128-bit half ([lo0-3 hi0-3 | lo4-7
// hi4-7]); the permute puts the quarters back in order. f16: vcvtps2ph keeps a
// NaN's sign and payload where hal gives 0x7FFF, so a chunk holding a NaN goes
// the scalar way.
HAL_ALWAYS_INLINE __m256i bf16_pack16(const float* in) {
  const __m256i lo = bf16_round8(_mm256_loadu_ps(in));
  const __m256i hi = bf16_round8(_mm256_loadu_ps(in + kW));
  return _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xD8);
}

HAL_ALWAYS_INLINE __m256i f16_pack16(const float* in) {
  const __m256 a = _mm256_loadu_ps(in), b = _mm256_loadu_ps(in + kW);
  if (_mm256_movemask_ps(_mm256_or_ps(_mm256_cmp_ps(a, a, _CMP_UNORD_Q), _mm256_cmp_ps(b, b, _CMP_UNORD_Q))) != 0) {
    alignas(32) std::uint16_t h[2 * kW];
    for (std::int64_t j = 0; j < 2 * kW; ++j) h[j] = float_to_f16_bits(in[j]);
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(h));
  }
  return _mm256_set_m128i(_mm256_cvtps_ph(b, _MM_FROUND_TO_NEAREST_INT), _mm256_cvtps_ph(a, _MM_FROUND_TO_NEAREST_INT));
}

// Eight elements of src (f32, bf16 or f16) at index i, widened exactly. The
// dtype is a template parameter so that the loops carry no per-vector branch.
template <DType T> HAL_ALWAYS_INLINE __m256 load8_of(const void* src, std::int64_t i) {
  if constexpr (T == DType::f32) return _mm256_loadu_ps(static_cast<const float*>(src) + i);
  const auto* s = static_cast<const std::uint16_t*>(src) + i;
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
  if constexpr (T == DType::bf16) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  if (_mm_movemask_epi8(_mm_cmpgt_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7fff)), _mm_set1_epi16(0x7c00))) != 0) {
    alignas(32) float f[kW];
    for (std::int64_t j = 0; j < kW; ++j) f[j] = f16_bits_to_float(s[j]);
    return _mm256_load_ps(f);
  }
  return _mm256_cvtph_ps(h);
}

// Calls body.template operator()<T>() with t's vector dtype as T: the one
// per-call dtype dispatch of the fused loops.
template <class Body> HAL_ALWAYS_INLINE decltype(auto) with_vector_dtype(DType t, Body&& body) {
  if (t == DType::f32) return body.template operator()<DType::f32>();
  if (t == DType::bf16) return body.template operator()<DType::bf16>();
  return body.template operator()<DType::f16>();
}

// Eight results into dst (dtype T) at element i, rounded as narrow rounds;
// streaming needs dst + i aligned (32 bytes for f32, 16 for 16-bit types).
// The dtype and the store kind are template parameters so that the loops
// below carry no per-vector branch and keep their constants in registers.
template <DType T, bool kStream> HAL_ALWAYS_INLINE void store8(void* dst, std::int64_t i, __m256 v) {
  if constexpr (T == DType::f32) {
    float* p = static_cast<float*>(dst) + i;
    if constexpr (kStream) _mm256_stream_ps(p, v);
    else _mm256_storeu_ps(p, v);
    return;
  } else {
    auto* p = reinterpret_cast<__m128i*>(static_cast<std::uint16_t*>(dst) + i);
    __m128i h;
    if constexpr (T == DType::bf16) {
      const __m256i r = bf16_round8(v);
      h = _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08));
    } else if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) {
      alignas(32) float f[kW];
      alignas(16) std::uint16_t b[kW];
      _mm256_store_ps(f, v);
      for (std::int64_t j = 0; j < kW; ++j) b[j] = float_to_f16_bits(f[j]);
      h = _mm_load_si128(reinterpret_cast<const __m128i*>(b));
    } else {
      h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
    }
    if constexpr (kStream) _mm_stream_si128(p, h);
    else _mm_storeu_si128(p, h);
  }
}

// Sixteen bf16 results at element i, one 32-byte store (aligned when
// streaming): the same bits as two store8, fewer shuffles and stores.
template <bool kStream> HAL_ALWAYS_INLINE void store16_bf16(void* dst, std::int64_t i, __m256 lo, __m256 hi) {
  auto* p = reinterpret_cast<__m256i*>(static_cast<std::uint16_t*>(dst) + i);
  const __m256i h = _mm256_permute4x64_epi64(_mm256_packus_epi32(bf16_round8(lo), bf16_round8(hi)), 0xD8);
  if constexpr (kStream) _mm256_stream_si256(p, h);
  else _mm256_storeu_si256(p, h);
}

// widen / narrow of the table (vector_kernels.h), for the padded heads and
// tails of the fused loops; defined in vector_kernels_avx2.cpp.
void widen(const void* src, DType t, std::int64_t n, float* out);
void narrow(void* dst, DType t, std::int64_t n, const float* in);

// VectorKernels::map1_fused / map2_fused (vector_fused_avx2.cpp).
void map1_fused(FusedOp op, const void* x, DType t, void* y, std::int64_t n, bool streaming);
void map2_fused(FusedOp op, const void* a, const void* b, DType t, void* y, std::int64_t n, bool streaming);

}  // namespace hal::cpu_ref::avx2
