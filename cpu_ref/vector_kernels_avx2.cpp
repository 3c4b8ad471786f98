// The AVX2 + FMA + F16C table of vector_kernels.h. This file alone is compiled
// with -mavx2 -mfma -mf16c (cpu_ref/CMakeLists.txt); it is only called after
// cpu_features() reported all three.
//
// Loops run 8 floats (one __m256) at a time (bf16 stores: 16, one 32-byte
// store per two vectors, the same bits); a tail of fewer than 8 goes
// through a zero-padded 8-float buffer, so each element is computed by the
// same instructions wherever it lies in the run. Sums keep four accumulator
// vectors, which are exactly the 32 interleaved lanes of rows_math.h, and
// combine them in the same order (LaneSums); with no multiply in the way
// (sum) the bits equal the portable table's.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "cpu_ref/exp_approx.h"
#include "cpu_ref/half_convert.h"
#include "cpu_ref/unary_table16.h"
#include "cpu_ref/vector_kernels.h"

namespace hal::cpu_ref {

namespace {

// The 8-wide helpers must inline: called across a function boundary, every
// live vector register is spilled (all ymm are caller-saved) and constants are
// reloaded, which made the fused loops two to three times slower.
#define HAL_ALWAYS_INLINE inline __attribute__((always_inline))
// On the table entries: everything they call inlines (lambdas and function
// arguments included), except what is marked noinline.
#define HAL_FLATTEN [[gnu::flatten]]

constexpr std::int64_t kW = 8;

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
// neighbours.
HAL_ALWAYS_INLINE __m256 exp_poly8(__m256 x, __m256& t) {
  using namespace exp_approx;
  const __m256 magic = _mm256_set1_ps(kRoundMagic);
  t = _mm256_fmadd_ps(x, _mm256_set1_ps(kLog2e), magic);
  const __m256 n = _mm256_sub_ps(t, magic);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
  __m256 p = _mm256_set1_ps(kP0);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP4));
  const __m256 one = _mm256_set1_ps(1.0f);
  p = _mm256_fmadd_ps(p, r, one);
  return _mm256_fmadd_ps(p, r, one);
}

// Rare (a lane out of range, inf or NaN): kept out of line so the hot loops
// stay small.
[[gnu::noinline]] __m256 exp8_general(__m256 x) {
  using namespace exp_approx;
  // min/max return their second operand when either is NaN: NaN passes.
  x = _mm256_min_ps(_mm256_set1_ps(kHi), x);
  x = _mm256_max_ps(_mm256_set1_ps(kLo), x);
  __m256 t;
  const __m256 e = exp_poly8(x, t);
  // n in [-150, 128] as n1 + n2, each a normal power of two; a NaN lane's
  // garbage exponent is harmless, e is NaN there.
  const __m256i k = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(_mm256_set1_ps(kRoundMagic)));
  const __m256i k1 = _mm256_srai_epi32(k, 1);
  const __m256i k2 = _mm256_sub_epi32(k, k1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(e, s1), s2);
}

HAL_ALWAYS_INLINE __m256 exp8(__m256 x) {
  const __m256 abs = _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
  if (_mm256_movemask_ps(_mm256_cmp_ps(abs, _mm256_set1_ps(86.0f), _CMP_NLT_UQ)) != 0) return exp8_general(x);
  __m256 t;
  const __m256 e = exp_poly8(x, t);
  // e * 2^n as an integer add of n to e's exponent field: exact, hence the
  // multiply's bits, while the result is normal (here n is in [-125, 125] and
  // e in [0.7, 1.5]); it frees an FMA-port slot, the port exp is bound by.
  // t's bits are magic + n; shifted left by 23 the magic's bits leave.
  return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(e), _mm256_slli_epi32(_mm256_castps_si256(t), 23)));
}

// exp8 of two vectors, the steps of the two interleaved: the polynomial is a
// chain of dependent FMAs, and a single chain leaves the FMA ports idle
// (about 25% slower per element here). One range test covers both: when
// either needs the general path both take it (the same bits for |x| < 86).
HAL_ALWAYS_INLINE void exp8x2(__m256& x0, __m256& x1) {
  using namespace exp_approx;
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 big = _mm256_max_ps(_mm256_and_ps(x0, abs_mask), _mm256_and_ps(x1, abs_mask));
  // max_ps passes its second operand on NaN: test x0's and x1's NaN lanes too.
  const __m256 out = _mm256_or_ps(_mm256_cmp_ps(big, _mm256_set1_ps(86.0f), _CMP_NLT_UQ),
                                  _mm256_cmp_ps(x0, x1, _CMP_UNORD_Q));
  if (_mm256_movemask_ps(out) != 0) {
    x0 = exp8_general(x0);
    x1 = exp8_general(x1);
    return;
  }
  const __m256 magic = _mm256_set1_ps(kRoundMagic), log2e = _mm256_set1_ps(kLog2e);
  const __m256 ln2_hi = _mm256_set1_ps(kLn2Hi), ln2_lo = _mm256_set1_ps(kLn2Lo);
  const __m256 t0 = _mm256_fmadd_ps(x0, log2e, magic), t1 = _mm256_fmadd_ps(x1, log2e, magic);
  const __m256 n0 = _mm256_sub_ps(t0, magic), n1 = _mm256_sub_ps(t1, magic);
  __m256 r0 = _mm256_fnmadd_ps(n0, ln2_hi, x0), r1 = _mm256_fnmadd_ps(n1, ln2_hi, x1);
  r0 = _mm256_fnmadd_ps(n0, ln2_lo, r0);
  r1 = _mm256_fnmadd_ps(n1, ln2_lo, r1);
  const __m256 c1 = _mm256_set1_ps(kP1);
  __m256 p0 = _mm256_fmadd_ps(_mm256_set1_ps(kP0), r0, c1), p1 = _mm256_fmadd_ps(_mm256_set1_ps(kP0), r1, c1);
  const auto step = [&](float c) {
    const __m256 cv = _mm256_set1_ps(c);
    p0 = _mm256_fmadd_ps(p0, r0, cv);
    p1 = _mm256_fmadd_ps(p1, r1, cv);
  };
  step(kP2);
  step(kP3);
  step(kP4);
  step(1.0f);
  step(1.0f);
  x0 = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p0), _mm256_slli_epi32(_mm256_castps_si256(t0), 23)));
  x1 = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p1), _mm256_slli_epi32(_mm256_castps_si256(t1), 23)));
}

HAL_ALWAYS_INLINE __m256 sigmoid8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 e = exp8(_mm256_xor_ps(x, _mm256_set1_ps(-0.0f)));
  return _mm256_div_ps(one, _mm256_add_ps(one, e));
}

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

// ---- conversions

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

HAL_FLATTEN void narrow_streaming(void* dst, DType t, std::int64_t n, const float* in) {
  if (n <= 0) return;
  auto* d = static_cast<char*>(dst);
  const std::int64_t esize = t == DType::f32 ? 4 : 2;
  // Plain stores up to a 32-byte boundary, streaming 32-byte chunks, plain tail.
  std::int64_t head = (32 - static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(d) & 31)) & 31;
  if (head % esize != 0) return narrow(dst, t, n, in);  // misaligned elements: never for real tensors
  head = std::min(head / esize, n);
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
  const std::int64_t head =
      std::min(bytes, static_cast<std::int64_t>((32 - (reinterpret_cast<std::uintptr_t>(d) & 31)) & 31));
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

HAL_FLATTEN float sum_run(const float* x, std::int64_t n) {
  return reduce1(x, n, [](__m256 v) { return v; });
}
HAL_FLATTEN float sum_squares_run(const float* x, std::int64_t n) {
  return reduce1(x, n, [](__m256 v) { return _mm256_mul_ps(v, v); });
}
HAL_FLATTEN float sum_squared_deviations_run(const float* x, float mean, std::int64_t n) {
  const __m256 mv = _mm256_set1_ps(mean);
  return reduce1(x, n, [&](__m256 v) {
    const __m256 d = _mm256_sub_ps(v, mv);
    return _mm256_mul_ps(d, d);
  });
}

HAL_FLATTEN float exp_shifted_sum_run(const float* x, float m, float* y, std::int64_t n, PrefetchHint next) {
  const __m256 mv = _mm256_set1_ps(m);
  SpreadPrefetch prefetch(next, n);
  LaneSums sums;
  std::int64_t i = 0;
  for (; i + 4 * kW <= n; i += 4 * kW) {
    prefetch.at(i);
    __m256 e0 = _mm256_sub_ps(_mm256_loadu_ps(x + i), mv), e1 = _mm256_sub_ps(_mm256_loadu_ps(x + i + kW), mv);
    __m256 e2 = _mm256_sub_ps(_mm256_loadu_ps(x + i + 2 * kW), mv);
    __m256 e3 = _mm256_sub_ps(_mm256_loadu_ps(x + i + 3 * kW), mv);
    exp8x2(e0, e1);
    exp8x2(e2, e3);
    _mm256_storeu_ps(y + i, e0);
    _mm256_storeu_ps(y + i + kW, e1);
    _mm256_storeu_ps(y + i + 2 * kW, e2);
    _mm256_storeu_ps(y + i + 3 * kW, e3);
    sums.add4(e0, e1, e2, e3);
  }
  for (; i + kW <= n; i += kW) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv));
    _mm256_storeu_ps(y + i, e);
    sums.add((i / kW) % 4, e);
  }
  if (i < n) {
    const std::int64_t rest = n - i;
    const __m256 e = _mm256_and_ps(first_lanes(rest), exp8(_mm256_sub_ps(load_tail(x + i, rest), mv)));
    store_tail(y + i, e, rest);
    sums.add((i / kW) % 4, e);
  }
  return sums.total();
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
template <DType T, bool kScaled>
float widen_scale_max_impl(const void* src, std::int64_t n, float scale, float* out) {
  const __m256 sv = _mm256_set1_ps(scale);
  const auto get = [&](std::int64_t i) {
    const __m256 v = load8_of<T>(src, i);
    return kScaled ? _mm256_mul_ps(v, sv) : v;
  };
  std::int64_t i = 0;
  float m = 0.0f;
  if (n >= kW) {
    __m256 acc = get(0);
    _mm256_storeu_ps(out, acc);
    for (i = kW; i + kW <= n; i += kW) {
      const __m256 v = get(i);
      _mm256_storeu_ps(out + i, v);
      acc = _mm256_max_ps(v, acc);
    }
    alignas(32) float l[kW];
    _mm256_store_ps(l, acc);
    m = l[0];
    for (int k = 1; k < kW; ++k) m = l[k] > m ? l[k] : m;
  }
  if (i < n) {
    widen(static_cast<const char*>(src) + i * static_cast<std::int64_t>(dtype_size(T)), T, n - i, out + i);
    if (kScaled)
      for (std::int64_t j = i; j < n; ++j) out[j] *= scale;
    if (i == 0) m = out[0];
  }
  for (; i < n; ++i) m = out[i] > m ? out[i] : m;
  return m;
}

HAL_FLATTEN float widen_scale_max_run(const void* src, DType t, std::int64_t n, float scale, float* out) {
  return with_vector_dtype(t, [&]<DType T>() {
    return scale != 1.0f ? widen_scale_max_impl<T, true>(src, n, scale, out)
                         : widen_scale_max_impl<T, false>(src, n, scale, out);
  });
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
  constexpr std::int64_t align = 32;
  auto* d = static_cast<char*>(dst);
  std::int64_t head = 0;
  if (streaming) {
    const auto mis = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(d) & static_cast<std::uintptr_t>(align - 1));
    if (mis % esize != 0) streaming = false;  // misaligned elements: never for real tensors
    else head = std::min(n, ((align - mis) & (align - 1)) / esize);
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


// ---- fused elementwise maps (map1_fused / map2_fused)


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

template <DType T, class F>
inline void fused2_typed(const void* a, const void* b, void* d, std::int64_t n, bool streaming, F f) {
  constexpr std::int64_t esize = T == DType::f32 ? 4 : 2;
  std::int64_t head = 0;
  if (streaming) {
    const auto mis = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(d) & 31);
    if (mis % esize != 0) streaming = false;  // misaligned elements: never for real tensors
    else head = std::min(n, ((32 - mis) & 31) / esize);
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

// y[i] = table[x[i]] over a 16-bit run (unary_table16.h), four elements per
// step through 64-bit words: scalar loads beat AVX2 gathers here (vpgatherdd
// is microcoded on AMD; about 1.4x slower per element on the 2-core VM).
// Streaming writes each word with movnti (write-combined into whole lines).
template <bool kStream>
HAL_ALWAYS_INLINE std::int64_t lookup16_body(const std::uint16_t* table, const std::uint16_t* x, std::uint16_t* y,
                                             std::int64_t i, std::int64_t n) {
  for (; i + 4 <= n; i += 4) {
    std::uint64_t in;
    std::memcpy(&in, x + i, sizeof in);
    const std::uint64_t out = std::uint64_t{table[in & 0xffff]} | (std::uint64_t{table[(in >> 16) & 0xffff]} << 16) |
                              (std::uint64_t{table[(in >> 32) & 0xffff]} << 32) | (std::uint64_t{table[in >> 48]} << 48);
    if constexpr (kStream) _mm_stream_si64(reinterpret_cast<long long*>(y + i), static_cast<long long>(out));
    else std::memcpy(y + i, &out, sizeof out);
  }
  return i;
}

void lookup16(const std::uint16_t* table, const void* src, void* dst, std::int64_t n, bool streaming) {
  const auto* x = static_cast<const std::uint16_t*>(src);
  auto* y = static_cast<std::uint16_t*>(dst);
  std::int64_t i = 0;
  if (streaming) {  // movnti needs an 8-byte aligned y + i
    const auto mis = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(y) & 7);
    if (mis % 2 != 0) streaming = false;  // misaligned elements: never for real tensors
    else for (const std::int64_t head = std::min(n, ((8 - mis) & 7) / 2); i < head; ++i) y[i] = table[x[i]];
  }
  i = streaming ? lookup16_body<true>(table, x, y, i, n) : lookup16_body<false>(table, x, y, i, n);
  for (; i < n; ++i) y[i] = table[x[i]];
  if (streaming) _mm_sfence();
}

// Unary ops: 16-bit runs look the result up (unary_table16.h); f32 runs reuse
// the binary loops with b = x, ignored.
HAL_FLATTEN void map1_fused_run(FusedOp op, const void* x, DType t, void* y, std::int64_t n, bool streaming) {
  if (t != DType::f32) {
    static UnaryTables16 tables;
    if (const std::uint16_t* table = tables.get(*vector_kernels_avx2(), op, t))
      return lookup16(table, x, y, n, streaming);
  }
  switch (op) {
    case FusedOp::exp: return fused2(x, x, t, y, n, streaming, UnaryMap<exp8, exp8x2>{});
    case FusedOp::sigmoid: return fused2(x, x, t, y, n, streaming, UnaryMap<sigmoid8, sigmoid8x2>{});
    case FusedOp::silu: return fused2(x, x, t, y, n, streaming, UnaryMap<silu8, silu8x2>{});
    default: return;  // not a unary op: callers never pass one
  }
}

}  // namespace

const VectorKernels* vector_kernels_avx2() {
  static const VectorKernels table{
      "avx2",  widen,   narrow,  narrow_streaming, copy_streaming, exp_run,   sigmoid_run, silu_run, swiglu_run, scale_run,
      max_run, sum_run, sum_squares_run, sum_squared_deviations_run, exp_shifted_sum_run,
      rms_apply_run, layer_apply_run, widen_sum_run, widen_sum_squares_run, scale_narrow_run,
      rms_apply_narrow_run, layer_apply_narrow_run, widen_scale_max_run,
      map1_fused_run, map2_fused_run};
  return &table;
}

}  // namespace hal::cpu_ref
