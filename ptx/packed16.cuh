#pragma once
// Two 16-bit floats in one 32-bit register, converted to and from two fp32
// values with as few instructions as the hardware allows: the 16-bit row and
// elementwise kernels are issue-bound (Nsight Compute on the H200), so each
// instruction per element costs bandwidth.
//
//   bf16 -> f32: a bf16 is the top half of an f32, so the two values are the
//                word shifted left by 16 and the word with its low half
//                cleared (one integer instruction each, exact).
//   f16  -> f32: two cvt.f32.f16 (no packed form exists; exact).
//   f32 -> bf16x2 / f16x2: one cvt.rn.{bf16x2,f16x2}.f32 (F2FP.PACK_AB,
//                sm_80+) rounds both values to nearest even: the same single
//                rounding per output as __float2bfloat16_rn / __float2half_rn
//                plus a PRMT to pack, in one instruction.
// E is __nv_bfloat16 or __half. Kernels use these only for sm_80 and newer
// (the targets of the CUDA preset).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace hal::ptx {

template <class E>
struct Packed16;

template <>
struct Packed16<__nv_bfloat16> {
  static __device__ __forceinline__ float lo(uint32_t w) { return __uint_as_float(w << 16); }
  static __device__ __forceinline__ float hi(uint32_t w) { return __uint_as_float(w & 0xffff0000u); }
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
};

template <>
struct Packed16<__half> {
  static __device__ __forceinline__ float lo(uint32_t w) {
    return __half2float(__ushort_as_half(static_cast<unsigned short>(w & 0xffffu)));
  }
  static __device__ __forceinline__ float hi(uint32_t w) {
    return __half2float(__ushort_as_half(static_cast<unsigned short>(w >> 16)));
  }
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
};

// 16 bytes (8 values) <-> 8 floats.
template <class E>
__device__ __forceinline__ void unpack8(const uint4& u, float v[8]) {
  const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    v[2 * k] = Packed16<E>::lo(w[k]);
    v[2 * k + 1] = Packed16<E>::hi(w[k]);
  }
}

template <class E>
__device__ __forceinline__ uint4 pack8(const float v[8]) {
  return make_uint4(Packed16<E>::pack(v[0], v[1]), Packed16<E>::pack(v[2], v[3]), Packed16<E>::pack(v[4], v[5]),
                    Packed16<E>::pack(v[6], v[7]));
}

}  // namespace hal::ptx
