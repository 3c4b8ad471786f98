#pragma once
// Inline scalar conversions between fp32 and the 16-bit float formats, bit for
// bit the same as hal::bf16_to_f32 / f32_to_bf16 / f16_to_f32 / f32_to_f16
// (hal/dtype.cpp), which are out of line and written for clarity, not speed.
// Inline here so contiguous loops vectorise or at least avoid a call per
// element. Rounding is to nearest even; every NaN narrows to the canonical
// 0x7FFF (sign dropped), as cvt.rn.{bf16,f16}.f32 gives; widening keeps a NaN's
// payload without setting the quiet bit. tests/unit/cpu_half_convert_test.cpp
// compares them with hal's over all 16-bit inputs and a sweep of float bits.
#include <bit>
#include <cstdint>

namespace hal::cpu_ref {

inline float bf16_bits_to_float(std::uint16_t bits) { return std::bit_cast<float>(std::uint32_t{bits} << 16); }

inline std::uint16_t float_to_bf16_bits(float v) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

inline float f16_bits_to_float(std::uint16_t bits) {
  const std::uint32_t sign = std::uint32_t{bits & 0x8000u} << 16;
  const std::uint32_t abs = bits & 0x7fffu;
  if (abs >= 0x7c00u) return std::bit_cast<float>(sign | 0x7f800000u | (abs & 0x3ffu) << 13);
  // Normal: rebias the exponent (15 -> 127), widen the mantissa.
  if (abs >= 0x0400u) return std::bit_cast<float>(sign | ((abs << 13) + ((127u - 15u) << 23)));
  // Subnormal or zero: abs * 2^-24 is exact in fp32.
  return std::bit_cast<float>(sign | std::bit_cast<std::uint32_t>(static_cast<float>(abs) * 0x1p-24f));
}

inline std::uint16_t float_to_f16_bits(float v) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(v);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return 0x7fffu;
  // 65520 = 0x477FF000 is halfway between 65504 (odd mantissa) and 2^16: ties
  // to even round it, and everything above, to infinity.
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (abs >= 0x38800000u) {  // a normal f16 (>= 2^-14): round the 13 dropped bits
    const std::uint32_t odd = (abs >> 13) & 1u;
    return static_cast<std::uint16_t>(sign | ((abs - ((127u - 15u) << 23) + 0xfffu + odd) >> 13));
  }
  // Subnormal f16 or zero: |v| < 2^-14, so |v| * 2^24 < 1024 and rounding it
  // to an integer (ties to even, by integer arithmetic) gives the mantissa.
  const std::uint32_t exp = abs >> 23;
  if (exp < 102) return static_cast<std::uint16_t>(sign);  // below 2^-25: rounds to zero (2^-25 itself is a tie to 0)
  const std::uint32_t mant = (abs & 0x7fffffu) | 0x800000u;  // value = mant * 2^(exp - 150)
  const std::uint32_t shift = 126u - exp;                        // value * 2^24 = mant >> shift, shift in [14, 24]
  const std::uint32_t q = mant >> shift;
  const std::uint32_t rem = mant & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1u);
  const std::uint32_t rounded = q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);
  return static_cast<std::uint16_t>(sign | rounded);
}

}  // namespace hal::cpu_ref
