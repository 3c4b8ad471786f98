#pragma once
// ldmatrix (sm_80+): each of 8/16/32 lanes gives the shared address of one
// 16-byte row of an 8x8 b16 matrix (lanes 8i..8i+7 -> matrix i); lane t then
// holds, of matrix i, row t/4 elements 2*(t%4) and 2*(t%4)+1 in register i
// (with .trans: column t/4, rows 2*(t%4) and 2*(t%4)+1). These are exactly the
// A/B fragments of mma.sync m16n8k16 (see mma_sm80.cuh).
// Row addresses must be 16-byte aligned.
#include <stdint.h>

#include "ptx/arch_config.cuh"
#include "ptx/cp_async.cuh"  // smem_u32

namespace hal::ptx {

struct LdMatrixX4 {
  using Regs = uint32_t[4];
  template <int Arch = HAL_PTX_ARCH>
  static __device__ __forceinline__ void copy(const void* row, Regs& r) {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM80, "LdMatrixX4", "sm_80 (ldmatrix)");
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_u32(row)));
  }
};

struct LdMatrixX4Trans {
  using Regs = uint32_t[4];
  template <int Arch = HAL_PTX_ARCH>
  static __device__ __forceinline__ void copy(const void* row, Regs& r) {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM80, "LdMatrixX4Trans", "sm_80 (ldmatrix)");
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_u32(row)));
  }
};

struct LdMatrixX2 {
  using Regs = uint32_t[2];
  template <int Arch = HAL_PTX_ARCH>
  static __device__ __forceinline__ void copy(const void* row, Regs& r) {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM80, "LdMatrixX2", "sm_80 (ldmatrix)");
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(smem_u32(row)));
  }
};

struct LdMatrixX2Trans {
  using Regs = uint32_t[2];
  template <int Arch = HAL_PTX_ARCH>
  static __device__ __forceinline__ void copy(const void* row, Regs& r) {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM80, "LdMatrixX2Trans", "sm_80 (ldmatrix)");
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(smem_u32(row)));
  }
};

}  // namespace hal::ptx
