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

// The same conversions on an element's bits held in a register (zero-
// extended to 64 bits), for the 16-byte vector paths: decode_f32(t, bits of
// element i) == load_f32(base, t, i), and encode_f32 gives the bits
// store_f32 would write.
__device__ __forceinline__ float decode_f32(int32_t t, uint64_t raw) {
  switch (t) {
    case kF32: return bits_f32(static_cast<uint32_t>(raw));
    case kF16: return f16_to_f32(static_cast<uint16_t>(raw));
    case kBF16: return bf16_to_f32(static_cast<uint16_t>(raw));
    case kF8E4M3: return f8e4m3_to_f32(static_cast<uint8_t>(raw));
    case kF8E5M2: return f8e5m2_to_f32(static_cast<uint8_t>(raw));
    case kI8: return static_cast<float>(static_cast<int8_t>(static_cast<uint8_t>(raw)));
    case kI32: return static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(raw)));
    case kI64: return static_cast<float>(static_cast<int64_t>(raw));
    case kBool: return static_cast<uint8_t>(raw) != 0 ? 1.0f : 0.0f;
  }
  return 0.0f;
}

__device__ __forceinline__ uint64_t encode_f32(int32_t t, float v) {
  switch (t) {
    case kF32: return f32_bits(v);
    case kF16: return f32_to_f16(v);
    case kBF16: return f32_to_bf16(v);
    case kF8E4M3: return f32_to_f8e4m3(v);
    case kF8E5M2: return f32_to_f8e5m2(v);
    case kI8: return static_cast<uint8_t>(to_int_sat<int8_t>(v, -128.0, 127.0));
    case kI32: return static_cast<uint32_t>(to_int_sat<int32_t>(v, -2147483648.0, 2147483647.0));
    case kI64: return static_cast<uint64_t>(to_int_sat<int64_t>(v, -9223372036854775808.0, 9223372036854774784.0));
    case kBool: return v != 0.0f ? 1u : 0u;
  }
  return 0;
}

// A 16-byte chunk of a contiguous, 16-byte-aligned tensor: 16 / kSize
// elements of kSize bytes (Chunk8 / Chunk4: the narrower side of a cast).
// Element e is constant after unrolling, so a chunk stays in registers.
typedef unsigned int Chunk16 __attribute__((ext_vector_type(4)));
typedef unsigned int Chunk8 __attribute__((ext_vector_type(2)));
typedef unsigned int Chunk4 __attribute__((ext_vector_type(1)));

template <int kBytes> struct ChunkOf;
template <> struct ChunkOf<16> { using T = Chunk16; };
template <> struct ChunkOf<8> { using T = Chunk8; };
template <> struct ChunkOf<4> { using T = Chunk4; };

template <int kSize, class C>
__device__ __forceinline__ uint64_t chunk_get(const C& c, int e) {
  static_assert(kSize == 1 || kSize == 2 || kSize == 4 || kSize == 8, "chunk_get: element sizes 1, 2, 4, 8");
  if constexpr (kSize == 8) {
    return static_cast<uint64_t>(c[2 * e]) | static_cast<uint64_t>(c[2 * e + 1]) << 32;
  } else if constexpr (kSize == 4) {
    return c[e];
  } else {
    constexpr int kPerWord = 4 / kSize;
    return (c[e / kPerWord] >> (8 * kSize * (e % kPerWord))) & ((1u << (8 * kSize)) - 1u);
  }
}

// ORs element e into c (c starts zeroed; `bits` has no bits above kSize bytes).
template <int kSize, class C>
__device__ __forceinline__ void chunk_put(C& c, int e, uint64_t bits) {
  if constexpr (kSize == 8) {
    c[2 * e] = static_cast<uint32_t>(bits);
    c[2 * e + 1] = static_cast<uint32_t>(bits >> 32);
  } else if constexpr (kSize == 4) {
    c[e] = static_cast<uint32_t>(bits);
  } else {
    constexpr int kPerWord = 4 / kSize;
    c[e / kPerWord] |= static_cast<uint32_t>(bits) << (8 * kSize * (e % kPerWord));
  }
}

// decode_f32 / encode_f32 for a dtype known to be kSize bytes wide: the
// switch shrinks to that size's dtypes, so an unrolled chunk loop does not
// carry every conversion of every dtype.
template <int kSize>
__device__ __forceinline__ float decode_sized(int32_t t, uint64_t raw) {
  if constexpr (kSize == 8) return decode_f32(kI64, raw);
  else if constexpr (kSize == 4) return t == kI32 ? decode_f32(kI32, raw) : decode_f32(kF32, raw);
  else if constexpr (kSize == 2) return t == kBF16 ? decode_f32(kBF16, raw) : decode_f32(kF16, raw);
  else {
    switch (t) {
      case kF8E5M2: return decode_f32(kF8E5M2, raw);
      case kI8: return decode_f32(kI8, raw);
      case kBool: return decode_f32(kBool, raw);
    }
    return decode_f32(kF8E4M3, raw);
  }
}

template <int kSize>
__device__ __forceinline__ uint64_t encode_sized(int32_t t, float v) {
  if constexpr (kSize == 8) return encode_f32(kI64, v);
  else if constexpr (kSize == 4) return t == kI32 ? encode_f32(kI32, v) : encode_f32(kF32, v);
  else if constexpr (kSize == 2) return t == kBF16 ? encode_f32(kBF16, v) : encode_f32(kF16, v);
  else {
    switch (t) {
      case kF8E5M2: return encode_f32(kF8E5M2, v);
      case kI8: return encode_f32(kI8, v);
      case kBool: return encode_f32(kBool, v);
    }
    return encode_f32(kF8E4M3, v);
  }
}

__device__ __forceinline__ int elem_size(int32_t t) {
  switch (t) {
    case kF16: case kBF16: return 2;
    case kF8E4M3: case kF8E5M2: case kI8: case kBool: return 1;
    case kI64: return 8;
  }
  return 4;
}

}  // namespace hal::hip
