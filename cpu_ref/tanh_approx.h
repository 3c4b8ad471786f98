#pragma once
// The fp32 tanh of the vector-kernel tables (vector_kernels.h), built on
// exp_approx.h's exp instead of the C library's tanhf (a libm call per element
// ran at a fortieth of the copy bandwidth on the 2-core VM). This is the
// scalar form; vector_avx2.h writes the same steps with FMA. Both work on
// a = |x| and give the result x's sign (tanh is odd; tanh(-0) = -0):
//
// - a < 0.75: a + a^3 P(a^2), P of degree 5, a least-squares fit of tanh's
//   relative error on Chebyshev nodes over [0, 0.75] (0.61 eps32 worst over
//   every float there, roundings of the FMA form included);
// - above: 1 - 2 / (e^{2a} + 1), no cancellation: the 2 / (e + 1) term is at
//   most 0.37 of the result's size there, so exp's 2 ulp and the two roundings
//   reach the result as about 2 eps32, within the contract's 4 (relative,
//   docs/accuracy.md). e^{2a} overflows to +inf from a ~ 44.4, and then the
//   result is exactly 1, as tanh rounds to 1 from a ~ 9.
#include <cmath>

#include "cpu_ref/exp_approx.h"

namespace hal::cpu_ref::tanh_approx {

inline constexpr float kPolyBelow = 0.75f;
// Not inline, as gelu_approx.h's kErfc: each object keeps its own copy.
constexpr float kP[6] = {-3.333331645e-01f, 1.333272159e-01f,  -5.389472097e-02f,
                                2.145854570e-02f,  -7.667089347e-03f, 1.742537715e-03f};

inline float tanh_scalar(float x) {
  const float a = std::fabs(x);
  float r;
  if (a < kPolyBelow) {
    const float s = a * a;
    float p = kP[5];
    for (int k = 4; k >= 0; --k) p = p * s + kP[k];
    r = (a * s) * p + a;
  } else {
    r = 1.0f - 2.0f / (exp_approx::exp_scalar(2.0f * a) + 1.0f);  // NaN stays NaN
  }
  return std::copysign(r, x);
}

}  // namespace hal::cpu_ref::tanh_approx
