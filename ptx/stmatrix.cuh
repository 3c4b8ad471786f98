#pragma once
// stmatrix (sm_90+): the inverse of ldmatrix. Lanes 8i..8i+7 give the shared
// addresses of the 8 rows of matrix i (16-byte aligned); register i of lane t
// holds row t/4, elements 2*(t%4), 2*(t%4)+1 of matrix i (.trans: column t/4).
#include <stdint.h>

#include "ptx/arch_config.cuh"
#include "ptx/cp_async.cuh"  // smem_u32

namespace hal::ptx {

struct StMatrixX4 {
  using Regs = uint32_t[4];
  template <int Arch = HAL_PTX_ARCH>
  static __device__ __forceinline__ void copy(const Regs& r, void* row) {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90, "StMatrixX4", "sm_90 (stmatrix)");
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(smem_u32(row)),
                 "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                 : "memory");
  }
};

struct StMatrixX4Trans {
  using Regs = uint32_t[4];
  template <int Arch = HAL_PTX_ARCH>
  static __device__ __forceinline__ void copy(const Regs& r, void* row) {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90, "StMatrixX4Trans", "sm_90 (stmatrix)");
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(smem_u32(row)),
                 "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                 : "memory");
  }
};

}  // namespace hal::ptx
