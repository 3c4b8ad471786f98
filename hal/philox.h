#pragma once
// Philox4x32-10 counter-based random numbers (Salmon, Moraes, Dror, Shaw,
// "Parallel random numbers: as easy as 1, 2, 3", SC 2011), usable from host
// C++ and from CUDA/HIP device code.
//
// The fill_random contract (hal/op.h, FillRandomCall): the element with
// row-major logical index i gets
//   block = i / 4, lane = i % 4,
//   bits  = philox4x32_10(counter = {lo32(block), hi32(block), 0, 0},
//                         key     = {lo32(seed), hi32(seed)})[lane]
//   uniform: u = (bits >> 8) * 2^-24 in [0, 1);  value = a + (b - a) * u
//            (computed in float; rounding can make the value equal b when
//            b - a is large relative to a).
//   normal:  Box-Muller on the lane pairs (0, 1) and (2, 3) of the block:
//            u1 = ((bits_even >> 8) + 1) * 2^-24 in (0, 1],
//            u2 = (bits_odd >> 8) * 2^-24 in [0, 1),
//            r  = sqrt(-2 ln u1); even lane z = r cos(2 pi u2), odd lane
//            z = r sin(2 pi u2); value = mean + std * z.
//
// Why the float math is written the way it is: every backend must produce the
// same bits, and the host compiler (g++, built with -ffp-contract=off), nvcc
// (contracts a*b+c into an FMA by default and has its own logf/cosf) and the
// HIP compiler (clang, -ffp-contract=fast by default) disagree on everything
// but the IEEE basic operations. So:
//   - no logf/cosf/sinf: ln and sincos(2 pi u) are fixed polynomial
//     evaluations here (exact range reduction on the bits, then a short
//     series), about 1e-7 relative error;
//   - every multiply/add/divide goes through hal_fmul/hal_fadd/hal_fsub/
//     hal_fdiv, which on CUDA devices are __fmul_rn/__fadd_rn/... (these are
//     never contracted into an FMA); on HIP devices every product passes
//     through an empty asm barrier (HIP's __fmul_rn is a plain `*` and
//     -ffp-contract=fast ignores pragmas), so no add can fuse with it; on the
//     host they are plain operators (hal's host code builds with
//     -ffp-contract=off, which GCC's C++ modes do not imply; `#pragma clang
//     fp contract(off)` also covers clang; baseline x86-64 has no FMA anyway);
//   - sqrt is correctly rounded everywhere (__fsqrt_rn on CUDA, ocml sqrtf on
//     HIP, std::sqrt on the host), as is division;
//   - integer <-> float conversions are of integers below 2^24 (exact).
// Never compile this header with -ffast-math / --use_fast_math.
#include <cstdint>

#include "hal/host_device.h"

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define HAL_PHILOX_DEVICE_PASS 1
#else
#define HAL_PHILOX_DEVICE_PASS 0
#include <cmath>
#include <cstring>
#endif

namespace hal {

struct PhiloxBits {
  std::uint32_t v[4];
};

// --- IEEE basic operations that no compiler may fuse -----------------------

HAL_HOST_DEVICE inline float hal_fmul(float a, float b) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#elif defined(__HIP_DEVICE_COMPILE__)
  // HIP's __fmul_rn is a plain `x * y`, and hipcc's default -ffp-contract=fast
  // ignores the pragma above. An empty asm that "modifies" the product hides
  // it from the optimizer, so no later add can be fused with it.
  float r = a * b;
  __asm__("" : "+v"(r));
  return r;
#else
  return a * b;
#endif
}

HAL_HOST_DEVICE inline float hal_fadd(float a, float b) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;  // not fusable: every product comes out of hal_fmul
#endif
}

HAL_HOST_DEVICE inline float hal_fsub(float a, float b) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;  // not fusable: every product comes out of hal_fmul
#endif
}

HAL_HOST_DEVICE inline float hal_fdiv(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;  // correctly rounded on the host and under hipcc's defaults
#endif
}

HAL_HOST_DEVICE inline float hal_fsqrt(float a) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#elif defined(__HIP_DEVICE_COMPILE__)
  // Not HIP's __fsqrt_rn: in HIP 5.x that is the 1-ulp native sqrt. sqrtf is
  // ocml's sqrt, correctly rounded under hipcc's default
  // -fhip-fp32-correctly-rounded-divide-sqrt.
  return sqrtf(a);
#else
  return std::sqrt(a);
#endif
}

HAL_HOST_DEVICE inline std::uint32_t hal_float_bits(float f) {
#if HAL_PHILOX_DEVICE_PASS
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

HAL_HOST_DEVICE inline float hal_bits_float(std::uint32_t u) {
#if HAL_PHILOX_DEVICE_PASS
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

// --- Philox4x32-10 ----------------------------------------------------------

inline constexpr std::uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr std::uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr std::uint32_t kPhiloxW0 = 0x9E3779B9u;  // golden ratio
inline constexpr std::uint32_t kPhiloxW1 = 0xBB67AE85u;  // sqrt(3) - 1

HAL_HOST_DEVICE inline PhiloxBits philox4x32_10(PhiloxBits counter, std::uint32_t key0, std::uint32_t key1) {
  std::uint32_t c0 = counter.v[0], c1 = counter.v[1], c2 = counter.v[2], c3 = counter.v[3];
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {  // the key schedule bumps the key before every round but the first
      key0 += kPhiloxW0;
      key1 += kPhiloxW1;
    }
    const std::uint64_t p0 = static_cast<std::uint64_t>(kPhiloxM0) * c0;
    const std::uint64_t p1 = static_cast<std::uint64_t>(kPhiloxM1) * c2;
    const std::uint32_t hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const std::uint32_t hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    c0 = hi1 ^ c1 ^ key0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ key1;
    c3 = lo0;
  }
  return PhiloxBits{{c0, c1, c2, c3}};
}

// The four words of the block that holds element `index` (see the contract).
HAL_HOST_DEVICE inline PhiloxBits philox_block(std::uint64_t seed, std::uint64_t index) {
  const std::uint64_t block = index / 4;
  const PhiloxBits counter{{static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32), 0u, 0u}};
  return philox4x32_10(counter, static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
}

HAL_HOST_DEVICE inline std::uint32_t philox_bits(std::uint64_t seed, std::uint64_t index) {
  return philox_block(seed, index).v[index % 4];
}

// --- Deterministic elementary functions ------------------------------------

// Natural logarithm of a positive normal float (the Box-Muller u1 is in
// [2^-24, 1]). x = m * 2^e with m in [sqrt(1/2), sqrt(2)) taken from the bits
// (exact); ln m = 2 atanh(s) = 2 (s + s^3/3 + ... + s^11/11), s = (m-1)/(m+1),
// |s| <= 0.1716, so the truncation error is below 1e-10 relative.
HAL_HOST_DEVICE inline float hal_ln(float x) {
  const std::uint32_t bits = hal_float_bits(x);
  int e = static_cast<int>((bits >> 23) & 0xFFu) - 127;
  std::uint32_t mant_bits = (bits & 0x007FFFFFu) | 0x3F800000u;  // m in [1, 2)
  if (mant_bits > 0x3FB504F3u) {  // m > sqrt(2): use m/2, e+1 (exact)
    mant_bits -= 0x00800000u;
    e += 1;
  }
  const float m = hal_bits_float(mant_bits);
  const float s = hal_fdiv(hal_fsub(m, 1.0f), hal_fadd(m, 1.0f));
  const float s2 = hal_fmul(s, s);
  float p = 1.0f / 11.0f;
  p = hal_fadd(hal_fmul(p, s2), 1.0f / 9.0f);
  p = hal_fadd(hal_fmul(p, s2), 1.0f / 7.0f);
  p = hal_fadd(hal_fmul(p, s2), 1.0f / 5.0f);
  p = hal_fadd(hal_fmul(p, s2), 1.0f / 3.0f);
  // ln m = 2s + 2s * s2 * p: the leading term is added last to keep its accuracy.
  const float two_s = hal_fmul(2.0f, s);
  const float ln_m = hal_fadd(two_s, hal_fmul(two_s, hal_fmul(s2, p)));
  // ln 2 split in two (fdlibm's constants) so that e * ln2_hi is exact:
  // ln2_hi has 17 significant bits and |e| < 2^7.
  constexpr float ln2_hi = 6.9313812256e-01f;  // 0x3f317180
  constexpr float ln2_lo = 9.0580006145e-06f;  // 0x3717f7d1
  const float fe = static_cast<float>(e);
  return hal_fadd(hal_fmul(fe, ln2_hi), hal_fadd(hal_fmul(fe, ln2_lo), ln_m));
}

// sin(2 pi u) and cos(2 pi u) for 0 <= u < 2^22. The quadrant comes from 4u
// by exact float steps: t = 4u, q = nearest integer, r = t - q in [-1/2, 1/2]
// (exact), x = r * pi/2 in [-pi/4, pi/4]; Taylor series to x^11 / x^12
// (truncation below 2e-9), then the quadrant rotation.
struct HalSinCos {
  float sin, cos;
};

HAL_HOST_DEVICE inline HalSinCos hal_sincos_2pi(float u) {
  const float t = hal_fmul(u, 4.0f);
  int q = static_cast<int>(t);  // truncation: t >= 0
  float r = hal_fsub(t, static_cast<float>(q));
  if (r > 0.5f) {
    r = hal_fsub(r, 1.0f);
    q += 1;
  }
  constexpr float half_pi = 1.57079632679489661923f;
  const float x = hal_fmul(r, half_pi);
  const float x2 = hal_fmul(x, x);
  // sin x = x (1 - x2/3! + x2^2/5! - ...)
  float ps = -1.0f / 39916800.0f;
  ps = hal_fadd(hal_fmul(ps, x2), 1.0f / 362880.0f);
  ps = hal_fadd(hal_fmul(ps, x2), -1.0f / 5040.0f);
  ps = hal_fadd(hal_fmul(ps, x2), 1.0f / 120.0f);
  ps = hal_fadd(hal_fmul(ps, x2), -1.0f / 6.0f);
  const float sin_x = hal_fadd(x, hal_fmul(x, hal_fmul(x2, ps)));
  // cos x = 1 - x2/2! + x2^2/4! - ...
  float pc = 1.0f / 479001600.0f;
  pc = hal_fadd(hal_fmul(pc, x2), -1.0f / 3628800.0f);
  pc = hal_fadd(hal_fmul(pc, x2), 1.0f / 40320.0f);
  pc = hal_fadd(hal_fmul(pc, x2), -1.0f / 720.0f);
  pc = hal_fadd(hal_fmul(pc, x2), 1.0f / 24.0f);
  pc = hal_fadd(hal_fmul(pc, x2), -0.5f);
  const float cos_x = hal_fadd(1.0f, hal_fmul(x2, pc));
  switch (q & 3) {
    case 0: return {sin_x, cos_x};
    case 1: return {cos_x, -sin_x};
    case 2: return {-sin_x, -cos_x};
    default: return {-cos_x, sin_x};
  }
}

// --- The fill_random distributions -----------------------------------------

inline constexpr float kPhiloxTwoPowMinus24 = 5.9604644775390625e-08f;

// (bits >> 8) * 2^-24: 24 random bits, exactly representable, in [0, 1).
HAL_HOST_DEVICE inline float philox_unit_float(std::uint32_t bits) {
  return hal_fmul(static_cast<float>(bits >> 8), kPhiloxTwoPowMinus24);
}

HAL_HOST_DEVICE inline float philox_uniform(std::uint64_t seed, std::uint64_t index, float a, float b) {
  const float u = philox_unit_float(philox_bits(seed, index));
  return hal_fadd(a, hal_fmul(hal_fsub(b, a), u));
}

HAL_HOST_DEVICE inline float philox_normal(std::uint64_t seed, std::uint64_t index, float mean, float stddev) {
  const PhiloxBits block = philox_block(seed, index);
  const unsigned lane = static_cast<unsigned>(index % 4);
  const unsigned even = lane & ~1u;
  // (k + 1) * 2^-24 with k + 1 <= 2^24: exact, in (0, 1], so ln never sees 0.
  const float u1 = hal_fmul(static_cast<float>((block.v[even] >> 8) + 1u), kPhiloxTwoPowMinus24);
  const float u2 = philox_unit_float(block.v[even + 1]);
  const float r = hal_fsqrt(hal_fmul(-2.0f, hal_ln(u1)));
  const HalSinCos sc = hal_sincos_2pi(u2);
  const float z = hal_fmul(r, lane == even ? sc.cos : sc.sin);
  return hal_fadd(mean, hal_fmul(stddev, z));
}

}  // namespace hal

#undef HAL_PHILOX_DEVICE_PASS
