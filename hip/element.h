#pragma once
// Element loads and stores by run-time dtype (hal::DType numbering), with
// every conversion bit-exact to hal/dtype.h's host conversions (the
// conversions live in hip/float_convert.h; fp8 is hal's OCP encoding, never
// MI300X's FNUZ hardware format).
// The dtype argument is uniform across a launch, so the switch costs a
// scalar branch, not divergence.
#include <hip/hip_runtime.h>
#include <stdint.h>

#include "hip/float_convert.h"

namespace hal::hip {

enum ElemType : int32_t { kF32 = 0, kF16 = 1, kBF16 = 2, kF8E4M3 = 3, kF8E5M2 = 4, kI8 = 5, kI32 = 6, kI64 = 7, kBool = 8 };

// Saturating float -> integer with round to nearest even (NaN -> 0), as the
// host's store_element does for integer outputs.
template <class I>
__device__ __forceinline__ I to_int_sat(float v, double lo, double hi) {
  if (v != v) return 0;
  const double r = rint(static_cast<double>(v));
  return static_cast<I>(r < lo ? lo : (r > hi ? hi : r));
}

__device__ __forceinline__ float load_f32(const void* base, int32_t t, int64_t i) {
  switch (t) {
    case kF32: return static_cast<const float*>(base)[i];
    case kF16: return f16_to_f32(static_cast<const uint16_t*>(base)[i]);
    case kBF16: return bf16_to_f32(static_cast<const uint16_t*>(base)[i]);
    case kF8E4M3: return f8e4m3_to_f32(static_cast<const uint8_t*>(base)[i]);
    case kF8E5M2: return f8e5m2_to_f32(static_cast<const uint8_t*>(base)[i]);
    case kI8: return static_cast<float>(static_cast<const int8_t*>(base)[i]);
    case kI32: return static_cast<float>(static_cast<const int32_t*>(base)[i]);
    case kI64: return static_cast<float>(static_cast<const int64_t*>(base)[i]);
    case kBool: return static_cast<const uint8_t*>(base)[i] != 0 ? 1.0f : 0.0f;
  }
  return 0.0f;
}

__device__ __forceinline__ void store_f32(void* base, int32_t t, int64_t i, float v) {
  switch (t) {
    case kF32: static_cast<float*>(base)[i] = v; return;
    case kF16: static_cast<uint16_t*>(base)[i] = f32_to_f16(v); return;
    case kBF16: static_cast<uint16_t*>(base)[i] = f32_to_bf16(v); return;
    case kF8E4M3: static_cast<uint8_t*>(base)[i] = f32_to_f8e4m3(v); return;
    case kF8E5M2: static_cast<uint8_t*>(base)[i] = f32_to_f8e5m2(v); return;
    case kI8: static_cast<int8_t*>(base)[i] = to_int_sat<int8_t>(v, -128.0, 127.0); return;
    case kI32: static_cast<int32_t*>(base)[i] = to_int_sat<int32_t>(v, -2147483648.0, 2147483647.0); return;
    case kI64:
      static_cast<int64_t*>(base)[i] = to_int_sat<int64_t>(v, -9223372036854775808.0, 9223372036854774784.0);
      return;
    case kBool: static_cast<uint8_t*>(base)[i] = v != 0.0f ? 1 : 0; return;
  }
}

}  // namespace hal::hip
