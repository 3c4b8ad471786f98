#pragma once
// CDNA matrix-core instructions, one struct per instruction, named after what
// it emits: v_mfma_f32_<M>x<N>x<K><type>. Each struct gives its operand
// register types and a static fma(). Fragment layouts (CDNA3 ISA guide,
// "Matrix fused-multiply-add"; lane l of a 64-lane wave):
//
//   32x32x8 (f16, bf16_1k): A (32x8):  lane l holds A[l%32][4*(l/32) + 0..3]
//                           B (8x32):  lane l holds B[4*(l/32) + 0..3][l%32]
//                           D (32x32): lane l, reg r holds
//                                      D[8*(r/4) + 4*(l/32) + r%4][l%32]
//   16x16x16 (f16, bf16_1k): A (16x16): lane l holds A[l%16][4*(l/16) + 0..3]
//                            B (16x16): lane l holds B[4*(l/16) + 0..3][l%16]
//                            D (16x16): lane l, reg r holds D[4*(l/16) + r][l%16]
//
//   32x32x16 (fp8/bf8, FNUZ encodings): A (32x16): lane l holds 8 bytes
//                           A[l%32][8*(l/32) + 0..7]; B (16x32): B[8*(l/32) + 0..7][l%32];
//                           D as 32x32x8
//
// A wave executes the instruction together: call fma() from all 64 lanes.
#include <hip/hip_runtime.h>

#include "hip/arch_config.h"

namespace hal::hip {

typedef _Float16 Half4 __attribute__((ext_vector_type(4)));
typedef short Bf16x4 __attribute__((ext_vector_type(4)));  // bf16 bit patterns
typedef float Float4 __attribute__((ext_vector_type(4)));
typedef float Float16 __attribute__((ext_vector_type(16)));

struct Mfma_F32_32x32x8_F16 {
  using A = Half4;
  using B = Half4;
  using D = Float16;
  static constexpr int M = 32, N = 32, K = 8;
  static __device__ __forceinline__ D fma(A a, B b, D c) {
    HAL_HIP_REQUIRE(HAL_HIP_MFMA, "Mfma_F32_32x32x8_F16");
    return __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c, 0, 0, 0);
  }
};

struct Mfma_F32_32x32x8_BF16_1K {
  using A = Bf16x4;
  using B = Bf16x4;
  using D = Float16;
  static constexpr int M = 32, N = 32, K = 8;
  static __device__ __forceinline__ D fma(A a, B b, D c) {
    HAL_HIP_REQUIRE(HAL_HIP_MFMA_BF16_1K, "Mfma_F32_32x32x8_BF16_1K");
    return __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a, b, c, 0, 0, 0);
  }
};

struct Mfma_F32_16x16x16_F16 {
  using A = Half4;
  using B = Half4;
  using D = Float4;
  static constexpr int M = 16, N = 16, K = 16;
  static __device__ __forceinline__ D fma(A a, B b, D c) {
    HAL_HIP_REQUIRE(HAL_HIP_MFMA, "Mfma_F32_16x16x16_F16");
    return __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, c, 0, 0, 0);
  }
};

struct Mfma_F32_16x16x16_BF16_1K {
  using A = Bf16x4;
  using B = Bf16x4;
  using D = Float4;
  static constexpr int M = 16, N = 16, K = 16;
  static __device__ __forceinline__ D fma(A a, B b, D c) {
    HAL_HIP_REQUIRE(HAL_HIP_MFMA_BF16_1K, "Mfma_F32_16x16x16_BF16_1K");
    return __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, c, 0, 0, 0);
  }
};

// v_mfma_f32_32x32x16_<A>_<B>: fp8 = e4m3fnuz, bf8 = e5m2fnuz (CDNA3's
// fp8 is the FNUZ family; OCP bytes would be misread). kAE5m2 / kBE5m2
// pick bf8 for that operand.
typedef long Fp8x8;  // 8 fp8 bytes
template <bool kAE5m2, bool kBE5m2>
struct Mfma_F32_32x32x16_Fp8 {
  using A = Fp8x8;
  using B = Fp8x8;
  using D = Float16;
  static constexpr int M = 32, N = 32, K = 16;
  static __device__ __forceinline__ D fma(A a, B b, D c) {
    // Dependent on the template parameters, so it fires when a kernel for a
    // target without fp8 MFMA instantiates this, not when the header is read.
    HAL_HIP_REQUIRE(HAL_HIP_MFMA_FP8 || (kAE5m2 && !kAE5m2), "Mfma_F32_32x32x16_Fp8");
#if HAL_HIP_MFMA_FP8
    if constexpr (!kAE5m2 && !kBE5m2) return __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(a, b, c, 0, 0, 0);
    else if constexpr (!kAE5m2) return __builtin_amdgcn_mfma_f32_32x32x16_fp8_bf8(a, b, c, 0, 0, 0);
    else if constexpr (!kBE5m2) return __builtin_amdgcn_mfma_f32_32x32x16_bf8_fp8(a, b, c, 0, 0, 0);
    else return __builtin_amdgcn_mfma_f32_32x32x16_bf8_bf8(a, b, c, 0, 0, 0);
#else
    return c;
#endif
  }
};

// The 32x32x8 instruction for a storage type: f16 (DType 1) or bf16 (DType 2).
template <int kDType> struct Mfma32x32x8;
template <> struct Mfma32x32x8<1> : Mfma_F32_32x32x8_F16 {};
template <> struct Mfma32x32x8<2> : Mfma_F32_32x32x8_BF16_1K {};

}  // namespace hal::hip
