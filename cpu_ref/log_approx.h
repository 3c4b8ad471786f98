#pragma once
// The fp32 natural log of the vector-kernel tables (vector_kernels.h) instead
// of the C library's logf, a call per element that held the f32 log op at
// 1.4 GB/s on the 2-core VM (a twentieth of its copy bandwidth). This is the
// scalar form; vector_avx2.h writes the same steps with FMA.
//
// Cephes' logf: x = m 2^e with m in [sqrt(1/2), sqrt(2)] (subnormals scaled
// by 2^23 first), f = m - 1 exactly (Sterbenz), log x = f - f^2/2 + f^3 P(f)
// + e ln2, P of degree 8 (Cephes' minimax coefficients), ln2 split in a high
// part exact in e * ln2_hi (eight bits) and a low part, so no term cancels
// more than the result allows: about 1 ulp relative over the whole range,
// unit-tested over a dense sweep against the contract's bound (4 eps32
// (|log x| + 1), docs/accuracy.md). Special values as the C library: log(+0)
// = log(-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, NaN stays NaN.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace hal::cpu_ref::log_approx {

inline constexpr float kSqrt2 = 1.41421356237309504880f;
inline constexpr float kLn2Hi = 0.693359375f;        // 355 / 512: e * kLn2Hi is exact for |e| < 2^15
inline constexpr float kLn2Lo = -2.12194440e-4f;     // ln 2 - kLn2Hi
inline constexpr float kSubnormalScale = 8388608.0f;  // 2^23
// P(f), highest degree first. Not inline, as gelu_approx.h's kErfc: each
// object keeps its own copy.
constexpr float kP[9] = {7.0376836292e-2f, -1.1514610310e-1f, 1.1676998740e-1f, -1.2420140846e-1f, 1.4249322787e-1f,
                         -1.6668057665e-1f, 2.0000714765e-1f, -2.4999993993e-1f, 3.3333331174e-1f};

inline float log_scalar(float x) {
  if (!(x > 0.0f) || x == std::numeric_limits<float>::infinity()) {
    if (x == 0.0f) return -std::numeric_limits<float>::infinity();
    if (x < 0.0f) return std::numeric_limits<float>::quiet_NaN();
    return x + x;  // +inf, or NaN (quietened, payload kept)
  }
  int e = 0;
  if (x < std::numeric_limits<float>::min()) {
    x *= kSubnormalScale;
    e = -23;
  }
  std::uint32_t bits;
  std::memcpy(&bits, &x, 4);
  e += static_cast<int>(bits >> 23) - 127;
  bits = (bits & 0x007fffffu) | 0x3f800000u;
  float m;
  std::memcpy(&m, &bits, 4);
  if (m > kSqrt2) {
    m *= 0.5f;
    e += 1;
  }
  const float f = m - 1.0f, z = f * f, ef = static_cast<float>(e);
  float p = kP[0];
  for (int k = 1; k < 9; ++k) p = p * f + kP[k];
  float y = f * z * p;
  y += kLn2Lo * ef;
  y += -0.5f * z;
  return (f + y) + kLn2Hi * ef;
}

}  // namespace hal::cpu_ref::log_approx
