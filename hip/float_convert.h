#pragma once
// Bit-exact float conversions of the HIP kernels, host/device portable so the
// host tests (tests/hip/float_convert_test.cpp) check them exhaustively
// against hal/dtype.h without a GPU:
//   - f16 / bf16: round to nearest even, overflow to infinity, NaN becomes
//     0x7FFF (what the host reference and NVIDIA's cvt.rn produce);
//   - fp8: hal's OCP encodings (e4m3fn max 448, e5m2 max 57344), saturating,
//     NaN keeps its sign. Done in integer arithmetic on purpose: MI300X's
//     hardware fp8 converters produce the FNUZ variants (e4m3fnuz max 240,
//     NaN = 0x80), a different encoding, not a different rounding; see
//     docs/porting.md.
#include <stdint.h>

#include "hal/host_device.h"

namespace hal::hip {

HAL_HOST_DEVICE inline uint32_t f32_bits(float v) { return __builtin_bit_cast(uint32_t, v); }
HAL_HOST_DEVICE inline float bits_f32(uint32_t b) { return __builtin_bit_cast(float, b); }

// |v| = mant * 2^exp encoded in a format with `mant_bits` stored bits and
// smallest normal exponent `exp_min`, rounded to nearest even. May exceed the
// largest finite encoding; callers clamp. Mirrors hal/dtype.cpp encode_magnitude.
HAL_HOST_DEVICE inline uint32_t encode_rne(uint32_t abs_bits, int mant_bits, int exp_min) {
  const uint32_t e = abs_bits >> 23, m = abs_bits & 0x7FFFFFu;
  const uint64_t mant = e == 0 ? m : (m | 0x800000u);
  const int exp = e == 0 ? -149 : static_cast<int>(e) - 150;
  const int top = 63 - __builtin_clzll(mant);
  const int value_exp = exp + top;
  const int q = (value_exp > exp_min ? value_exp : exp_min) - mant_bits;
  const int shift = q - exp;
  uint64_t r;
  if (shift <= 0) {
    r = mant << -shift;
  } else if (shift >= 64) {
    r = 0;
  } else {
    r = mant >> shift;
    const uint64_t rem = mant & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) ++r;
  }
  return static_cast<uint32_t>((static_cast<uint64_t>(q - exp_min + mant_bits) << mant_bits) + r);
}

// Decodes magnitude bits of a narrow format (not Inf/NaN) into f32 bits.
HAL_HOST_DEVICE inline uint32_t decode_bits(uint32_t abs_bits, int mant_bits, int exp_min) {
  const uint32_t mask = (1u << mant_bits) - 1;
  uint32_t m = abs_bits & mask;
  int e = static_cast<int>(abs_bits >> mant_bits);
  if (e == 0) {
    if (m == 0) return 0;
    e = 1;
    while ((m & (1u << mant_bits)) == 0) {
      m <<= 1;
      --e;
    }
    m &= mask;
  }
  return static_cast<uint32_t>(e - 1 + exp_min + 127) << 23 | m << (23 - mant_bits);
}

HAL_HOST_DEVICE inline uint16_t f32_to_ieee16(float v, int mant_bits, int exp_min, uint32_t inf_bits) {
  const uint32_t b = f32_bits(v), sign = b >> 31, abs = b & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return 0x7FFF;
  uint32_t enc;
  if (abs == 0x7F800000u) enc = inf_bits;
  else if (abs == 0) enc = 0;
  else {
    enc = encode_rne(abs, mant_bits, exp_min);
    if (enc > inf_bits) enc = inf_bits;
  }
  return static_cast<uint16_t>(sign << 15 | enc);
}

HAL_HOST_DEVICE inline uint8_t f32_to_fp8(float v, int mant_bits, int exp_min, uint32_t max_bits,
                                              uint32_t nan_bits) {
  const uint32_t b = f32_bits(v), sign = b >> 31, abs = b & 0x7FFFFFFFu;
  uint32_t enc;
  if (abs > 0x7F800000u) enc = nan_bits;
  else if (abs == 0x7F800000u) enc = max_bits;
  else if (abs == 0) enc = 0;
  else {
    enc = encode_rne(abs, mant_bits, exp_min);
    if (enc > max_bits) enc = max_bits;
  }
  return static_cast<uint8_t>(sign << 7 | enc);
}

HAL_HOST_DEVICE inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h >> 15) << 31, abs = h & 0x7FFFu;
  if (abs >= 0x7C00u) return bits_f32(sign | 0x7F800000u | (abs & 0x3FFu) << 13);
  return bits_f32(sign | decode_bits(abs, 10, -14));
}
HAL_HOST_DEVICE inline uint16_t f32_to_f16(float v) { return f32_to_ieee16(v, 10, -14, 0x7C00u); }
HAL_HOST_DEVICE inline float bf16_to_f32(uint16_t h) { return bits_f32(static_cast<uint32_t>(h) << 16); }
HAL_HOST_DEVICE inline uint16_t f32_to_bf16(float v) { return f32_to_ieee16(v, 7, -126, 0x7F80u); }
// The same result as f32_to_bf16 for every input in a few integer ops (the
// carry of the rounding increment runs into the exponent, so overflow gives
// infinity by itself); for hot loops such as the attention kernel's P.
HAL_HOST_DEVICE inline uint16_t f32_to_bf16_fast(float v) {
  const uint32_t b = f32_bits(v);
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FFF;
  return static_cast<uint16_t>((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
}

// OCP e4m3fn: 0x7F / 0xFF is the only NaN, no infinity, max 0x7E = 448.
HAL_HOST_DEVICE inline float f8e4m3_to_f32(uint8_t b) {
  const uint32_t sign = static_cast<uint32_t>(b >> 7) << 31, abs = b & 0x7Fu;
  if (abs == 0x7Fu) return bits_f32(sign | 0x7FC00000u);
  return bits_f32(sign | decode_bits(abs, 3, -6));
}
HAL_HOST_DEVICE inline uint8_t f32_to_f8e4m3(float v) { return f32_to_fp8(v, 3, -6, 0x7Eu, 0x7Fu); }
// OCP e5m2: IEEE-like, max 0x7B = 57344; saturating.
HAL_HOST_DEVICE inline float f8e5m2_to_f32(uint8_t b) {
  const uint32_t sign = static_cast<uint32_t>(b >> 7) << 31, abs = b & 0x7Fu;
  if (abs >= 0x7Cu) return bits_f32(sign | 0x7F800000u | (abs & 0x3u) << 21);
  return bits_f32(sign | decode_bits(abs, 2, -14));
}
HAL_HOST_DEVICE inline uint8_t f32_to_f8e5m2(float v) { return f32_to_fp8(v, 2, -14, 0x7Bu, 0x7Eu); }

}  // namespace hal::hip
