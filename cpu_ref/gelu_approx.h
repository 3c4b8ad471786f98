#pragma once
// The fp32 gelus of the vector-kernel tables (vector_kernels.h), built on
// exp_approx.h's exp instead of the C library's erfc / tanh (a libm call per
// element ran at a twentieth of the copy bandwidth). This is the scalar form;
// vector_avx2.h writes the same steps with FMA, P below by Estrin's scheme
// (four dependent steps instead of nine: about 9% faster there; other
// roundings, the same bound). The contract bounds them
// absolutely in |x| (docs/accuracy.md: 4 eps32 (|ref| + |x|) + FLT_MIN), which
// both meet with room:
//
// gelu(x) = x Phi(x), Phi(x) = erfc(-x / sqrt2) / 2. erfc(z), z >= 0, is
// t exp(-z^2 + P(t)), t = 1 / (1 + z/2), P of degree 9 (Numerical Recipes'
// erfcc, Chebyshev-fitted: relative error below 1.2e-7 for every z >= 0, so no
// cancellation in either tail). With E = erfc(|x| / sqrt2), Phi is E/2 for
// x <= 0 and 1 - E/2 above: the relative error of E (a few eps from the
// roundings of z^2 and P) reaches y as |y| times it for x <= 0, and as at
// most |x| E/2 times it above.
//
// gelu_tanh(x) = x (1 + tanh(u)) / 2 = x sigmoid(2u), u = sqrt(2/pi) (x +
// 0.044715 x^3): sigmoid's few ulps, and u's, move y by a few eps |x|.
#include <cmath>

#include "cpu_ref/exp_approx.h"

namespace hal::cpu_ref::gelu_approx {

inline constexpr float kInvSqrt2 = 0.70710678118654752440f;
// erfc's exponent: -1.26551223 + t (1.00002368 + t (... + t 0.17087277)).
// Not inline: an inline array indexed at run time is a weak symbol, defined
// by the AVX2 objects and the baseline ones alike, which
// cmake/check_isa_objects.cmake forbids; const gives each object its own.
constexpr float kErfc[10] = {-1.26551223f, 1.00002368f, 0.37409196f,  0.09678418f,  -0.18628806f,
                                    0.27886807f,  -1.13520398f, 1.48851587f, -0.82215223f, 0.17087277f};
inline constexpr float kTwoSqrt2OverPi = 1.59576912160573071176f;  // 2 sqrt(2/pi)
inline constexpr float kCubic = 0.044715f;

inline float gelu_scalar(float x) {
  const float z = std::fabs(x) * kInvSqrt2;
  const float t = 1.0f / (0.5f * z + 1.0f);
  float p = kErfc[9];
  for (int k = 8; k >= 0; --k) p = p * t + kErfc[k];
  const float half_e = 0.5f * (t * exp_approx::exp_scalar(p - z * z));
  return x * (x <= 0.0f ? half_e : 1.0f - half_e);
}

inline float gelu_tanh_scalar(float x) {
  const float a = kTwoSqrt2OverPi * ((kCubic * (x * x)) * x + x);
  return x * exp_approx::sigmoid_scalar(a);
}

}  // namespace hal::cpu_ref::gelu_approx
