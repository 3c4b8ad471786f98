#pragma once
// mma.sync.aligned.m16n8k16.row.col (sm_80+): D[16x8] = A[16x16] B[16x8] + C,
// fp32 accumulate, one warp. One struct per instruction (CuTe style).
//
// Fragment layout, lane t, g = t / 4, q = t % 4 (PTX ISA, "mma.m16n8k16"):
//   A (row-major, 4 x b32 = 8 halves): a[0] = A[g][2q..2q+1],   a[1] = A[g+8][2q..2q+1],
//                                       a[2] = A[g][2q+8..+9],   a[3] = A[g+8][2q+8..+9]
//   B (col-major, 2 x b32):             b[0] = B[2q..2q+1][g],   b[1] = B[2q+8..+9][g]
//   C/D (4 x f32):                      c[0..1] = C[g][2q..2q+1], c[2..3] = C[g+8][2q..2q+1]
// In each b32 the lower-indexed element sits in the low 16 bits.
#include <stdint.h>

#include "ptx/arch_config.cuh"

namespace hal::ptx {

struct MmaM16N8K16F32F16F16F32 {
  using ARegs = uint32_t[4];
  using BRegs = uint32_t[2];
  using CRegs = float[4];
  template <int Arch = HAL_PTX_ARCH>
  static __device__ __forceinline__ void fma(CRegs& d, const ARegs& a, const BRegs& b, const CRegs& c) {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM80, "MmaM16N8K16F32F16F16F32", "sm_80 (mma.sync f16)");
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
          "f"(c[3]));
  }
};

struct MmaM16N8K16F32Bf16Bf16F32 {
  using ARegs = uint32_t[4];
  using BRegs = uint32_t[2];
  using CRegs = float[4];
  template <int Arch = HAL_PTX_ARCH>
  static __device__ __forceinline__ void fma(CRegs& d, const ARegs& a, const BRegs& b, const CRegs& c) {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM80, "MmaM16N8K16F32Bf16Bf16F32", "sm_80 (mma.sync bf16)");
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
          "f"(c[3]));
  }
};

}  // namespace hal::ptx
