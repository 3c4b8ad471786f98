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

#include "hal/fp8_codec.h"
#include "hal/host_device.h"

namespace hal::hip {

// The generic narrow-format encode/decode and the fp8 codecs are shared with
// the CUDA kernels (hal/fp8_codec.h).
using fp8_codec::bits_f32;
using fp8_codec::decode_bits;
using fp8_codec::encode_rne;
using fp8_codec::f32_bits;
using fp8_codec::f32_to_fp8;

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

using fp8_codec::f32_to_f8e4m3;
using fp8_codec::f32_to_f8e5m2;
using fp8_codec::f8e4m3_to_f32;
using fp8_codec::f8e5m2_to_f32;

}  // namespace hal::hip
