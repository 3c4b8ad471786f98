#pragma once
// Bit-exact fp8 encode/decode of all four fp8 dtypes (OCP f8e4m3 / f8e5m2,
// FNUZ f8e4m3fnuz / f8e5m2fnuz), in integer arithmetic, for code that host
// C++, CUDA and HIP all compile: the GPU quantize/dequantize and fp8 GEMM
// kernels (ptx/kernels/, hip/kernels/) and hip/float_convert.h. The results
// are those of hal/dtype.h's host conversions (round to nearest even,
// saturating to +-max_finite, Inf included; NaN to the format's NaN; FNUZ
// never produces -0); tests/unit/fp8_codec_test.cpp checks every fp8
// pattern and the rounding boundaries against them.
//
// Why integer arithmetic: NVIDIA's cvt instructions know only the OCP
// formats and MI300X's only the FNUZ ones, so a kernel that must produce
// either on either vendor cannot lean on the hardware converters.
#include <stdint.h>

#include "hal/host_device.h"

namespace hal::fp8_codec {

// hal::DType numbering of the fp8 dtypes (hal/dtype.h), the codes the
// kernels receive.
inline constexpr int32_t kF8E4M3 = 3, kF8E5M2 = 4, kF8E4M3Fnuz = 10, kF8E5M2Fnuz = 11;

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

// OCP encoding: sign kept on every value (NaN, zero included), saturating.
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

// FNUZ encoding: NaN is 0x80 alone, a value rounding to zero is +0, the
// largest magnitude is 0x7F; saturating.
HAL_HOST_DEVICE inline uint8_t f32_to_fp8_fnuz(float v, int mant_bits, int exp_min) {
  const uint32_t b = f32_bits(v), sign = b >> 31, abs = b & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return 0x80u;
  uint32_t enc = abs == 0x7F800000u ? 0x7Fu : abs == 0 ? 0u : encode_rne(abs, mant_bits, exp_min);
  if (enc > 0x7Fu) enc = 0x7Fu;
  return enc == 0 ? uint8_t{0} : static_cast<uint8_t>(sign << 7 | enc);
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
// FNUZ e4m3 (bias 8, smallest normal exponent -7, max 0x7F = 240) and e5m2
// (bias 16, -15, max 0x7F = 57344); 0x80 is NaN.
HAL_HOST_DEVICE inline float f8e4m3fnuz_to_f32(uint8_t b) {
  if (b == 0x80u) return bits_f32(0x7FC00000u);
  return bits_f32(static_cast<uint32_t>(b >> 7) << 31 | decode_bits(b & 0x7Fu, 3, -7));
}
HAL_HOST_DEVICE inline uint8_t f32_to_f8e4m3fnuz(float v) { return f32_to_fp8_fnuz(v, 3, -7); }
HAL_HOST_DEVICE inline float f8e5m2fnuz_to_f32(uint8_t b) {
  if (b == 0x80u) return bits_f32(0x7FC00000u);
  return bits_f32(static_cast<uint32_t>(b >> 7) << 31 | decode_bits(b & 0x7Fu, 2, -15));
}
HAL_HOST_DEVICE inline uint8_t f32_to_f8e5m2fnuz(float v) { return f32_to_fp8_fnuz(v, 2, -15); }

// By dtype code (kF8*); any other code decodes as NaN / encodes as 0.
HAL_HOST_DEVICE inline float fp8_to_f32(uint8_t b, int32_t dtype) {
  switch (dtype) {
    case kF8E4M3: return f8e4m3_to_f32(b);
    case kF8E5M2: return f8e5m2_to_f32(b);
    case kF8E4M3Fnuz: return f8e4m3fnuz_to_f32(b);
    case kF8E5M2Fnuz: return f8e5m2fnuz_to_f32(b);
    default: return bits_f32(0x7FC00000u);
  }
}
HAL_HOST_DEVICE inline uint8_t f32_to_fp8_of(float v, int32_t dtype) {
  switch (dtype) {
    case kF8E4M3: return f32_to_f8e4m3(v);
    case kF8E5M2: return f32_to_f8e5m2(v);
    case kF8E4M3Fnuz: return f32_to_f8e4m3fnuz(v);
    case kF8E5M2Fnuz: return f32_to_f8e5m2fnuz(v);
    default: return 0;
  }
}
// The largest finite value of each format (hal::dtype_max_finite).
HAL_HOST_DEVICE inline float fp8_max_finite(int32_t dtype) {
  return dtype == kF8E4M3 ? 448.0f : dtype == kF8E4M3Fnuz ? 240.0f : 57344.0f;
}

// The quantisation recipe of hal/op_fp8.h, one fp32 operation per step (the
// CPU's cpu_ref/quantize_fp8.cpp computes the same): kernels of both vendors
// call these, so the bits agree with the CPU's wherever the division is the
// correctly rounded one (no fast-math on either compiler).
//
// |x| when it enters the block's amax (finite), else 0.
HAL_HOST_DEVICE inline float amax_term(float x) {
  const float a = bits_f32(f32_bits(x) & 0x7FFFFFFFu);
  return a <= 3.40282347e38f ? a : 0.0f;  // false for NaN and Inf
}
// scale = max(amax / max_finite, 2^-126), then (pow2) the smallest power of
// two at or above it.
HAL_HOST_DEVICE inline float block_scale(float amax, int32_t fp8_dtype, bool pow2) {
  float scale = amax / fp8_max_finite(fp8_dtype);
  if (!(scale >= 0x1p-126f)) scale = 0x1p-126f;
  if (pow2) {
    uint32_t b = f32_bits(scale);  // normal and below 2^121: no overflow
    if ((b & 0x7FFFFFu) != 0) b = (b & 0x7F800000u) + 0x800000u;
    scale = bits_f32(b);
  }
  return scale;
}
HAL_HOST_DEVICE inline uint8_t quantize_one(float x, float scale, int32_t fp8_dtype) {
  return f32_to_fp8_of(x / scale, fp8_dtype);
}
HAL_HOST_DEVICE inline float dequantize_one(uint8_t y, float scale, int32_t fp8_dtype) {
  return fp8_to_f32(y, fp8_dtype) * scale;
}

}  // namespace hal::fp8_codec
