#pragma once
// mma.sync.aligned.m16n8k32.row.col.f32.<a>.<b>.f32 (sm_89+): D[16x8] =
// A[16x32] B[32x8] + C with fp8 operands (OCP e4m3 / e5m2) and fp32
// accumulate, one warp. One struct per operand pair (mma_sm80.cuh's style).
//
// Fragment layout, lane t, g = t / 4, q = t % 4 (PTX ISA, "mma.m16n8k32",
// 8-bit types; in each b32 the lower-indexed element is the low byte):
//   A (row-major, 4 x b32 = 16 bytes): a[0] = A[g][4q..4q+3],    a[1] = A[g+8][4q..4q+3],
//                                      a[2] = A[g][16+4q..+3],   a[3] = A[g+8][16+4q..+3]
//   B (col-major, 2 x b32):            b[0] = B[4q..4q+3][g],    b[1] = B[16+4q..+3][g]
//   C/D (4 x f32):                     c[0..1] = C[g][2q..2q+1], c[2..3] = C[g+8][2q..2q+1]
#include <stdint.h>

#include "ptx/arch_config.cuh"

namespace hal::ptx {

#define HAL_PTX_MMA_FP8(Name, A, B)                                                                          \
  struct Name {                                                                                            \
    using ARegs = uint32_t[4];                                                                             \
    using BRegs = uint32_t[2];                                                                             \
    using CRegs = float[4];                                                                                \
    template <int Arch = HAL_PTX_ARCH>                                                                     \
    static __device__ __forceinline__ void fma(CRegs& d, const ARegs& a, const BRegs& b, const CRegs& c) { \
      HAL_PTX_REQUIRE(Arch, HAL_PTX_SM89, #Name, "sm_89 (mma.sync fp8)");                                  \
      asm volatile("mma.sync.aligned.m16n8k32.row.col.f32." A "." B                                        \
                   ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"            \
                   : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])                                        \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]),          \
                     "f"(c[1]), "f"(c[2]), "f"(c[3]));                                                     \
    }                                                                                                      \
  };
HAL_PTX_MMA_FP8(MmaM16N8K32F32E4M3E4M3F32, "e4m3", "e4m3")
HAL_PTX_MMA_FP8(MmaM16N8K32F32E4M3E5M2F32, "e4m3", "e5m2")
HAL_PTX_MMA_FP8(MmaM16N8K32F32E5M2E4M3F32, "e5m2", "e4m3")
HAL_PTX_MMA_FP8(MmaM16N8K32F32E5M2E5M2F32, "e5m2", "e5m2")
#undef HAL_PTX_MMA_FP8

}  // namespace hal::ptx
