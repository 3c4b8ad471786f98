#pragma once
// The fp32 exp shared in spirit by every vector-kernel table: Cody-Waite range
// reduction x = n ln2 + r, |r| <= ln2/2, a degree-6 polynomial for e^r (a
// minimax fit, below), and the scale by 2^n applied as two exact
// power-of-two multiplies so that results in the subnormal range are rounded
// once and overflow reaches +inf naturally. This is the scalar form, without
// FMA; vector_kernels_avx2.cpp writes the same steps with FMA.
//
// Range: inputs are clamped to [-104, 89] first. e^89 > FLT_MAX (-> +inf) and
// e^-104 < 2^-150 (-> +0, as the exact value rounds), so the clamp changes no
// result; NaN passes the clamp (the comparisons keep it) and stays NaN.
#include <bit>
#include <cstdint>

namespace hal::cpu_ref::exp_approx {

inline constexpr float kHi = 89.0f;
inline constexpr float kLo = -104.0f;
inline constexpr float kLog2e = 1.44269504088896341f;
// ln2 split so that n * kLn2Hi is exact for |n| <= 2^15 (kLn2Hi has 9 bits).
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;
// e^r = 1 + r (1 + r P(r)), P of degree 4: a minimax fit of the relative
// error over |r| <= ln2/2 (Lawson's iterations; 0.05 ulp before rounding,
// about 0.7 ulp after the float FMA steps). Cephes' degree-5 P is one FMA
// more for no accuracy that survives the rounding.
inline constexpr float kP0 = 1.381461276e-03f;
inline constexpr float kP1 = 8.368710056e-03f;
inline constexpr float kP2 = 4.166838899e-02f;
inline constexpr float kP3 = 1.666652113e-01f;
inline constexpr float kP4 = 4.999999404e-01f;
// Adding and subtracting 1.5 * 2^23 rounds |t| < 2^22 to an integer (ties to
// even, the default rounding mode).
inline constexpr float kRoundMagic = 12582912.0f;

// 2^k as a float, for k in [-126, 127].
inline float pow2(std::int32_t k) { return std::bit_cast<float>(static_cast<std::uint32_t>(k + 127) << 23); }

inline float exp_scalar(float x) {
  if (x != x) return x + x;
  x = x > kHi ? kHi : (x < kLo ? kLo : x);
  const float n = (x * kLog2e + kRoundMagic) - kRoundMagic;
  float r = x - n * kLn2Hi;
  r = r - n * kLn2Lo;
  float p = kP0;
  p = p * r + kP1;
  p = p * r + kP2;
  p = p * r + kP3;
  p = p * r + kP4;
  // e^r = 1 + r + r^2 P(r) = 1 + r (1 + r P(r)).
  p = p * r + 1.0f;
  const float e = p * r + 1.0f;
  // n in [-150, 128]: split into two halves, each a normal power of two.
  const auto k = static_cast<std::int32_t>(n);
  const std::int32_t k1 = k >> 1;
  return (e * pow2(k1)) * pow2(k - k1);
}

// 1 / (1 + e^-x) on this exp: the portable table's sigmoid, and gelu_tanh's.
inline float sigmoid_scalar(float x) { return 1.0f / (1.0f + exp_scalar(-x)); }

}  // namespace hal::cpu_ref::exp_approx
