#pragma once
// cp.async (sm_80+): asynchronous global -> shared copies that bypass the
// register file, grouped with commit_group / wait_group.
//
// Contract: `smem` and `gmem` are aligned to the copy size (4, 8 or 16 bytes).
// `src_bytes` < copy size reads only that many bytes and zero-fills the rest;
// src_bytes == 0 reads nothing (the predicated-off form for edge tiles; gmem
// must still be a valid-looking address, pass the tensor base).
#include <stdint.h>

#include "ptx/arch_config.cuh"

namespace hal::ptx {

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// .cg: caches in L2 only (streamed operands); 16 bytes only.
struct CpAsyncCg16 {
  template <int Arch = HAL_PTX_ARCH>
  static __device__ __forceinline__ void copy(void* smem, const void* gmem, uint32_t src_bytes = 16) {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM80, "CpAsyncCg16", "sm_80 (cp.async)");
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(smem)), "l"(gmem), "r"(src_bytes)
                 : "memory");
  }
};

// .ca: caches in L1 too (operands re-read by neighbouring blocks); 4, 8 or 16 bytes.
template <int Bytes>
struct CpAsyncCa {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async.ca copies 4, 8 or 16 bytes");
  template <int Arch = HAL_PTX_ARCH>
  static __device__ __forceinline__ void copy(void* smem, const void* gmem, uint32_t src_bytes = Bytes) {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM80, "CpAsyncCa", "sm_80 (cp.async)");
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_u32(smem)), "l"(gmem), "n"(Bytes),
                 "r"(src_bytes)
                 : "memory");
  }
};

template <int Arch = HAL_PTX_ARCH>
__device__ __forceinline__ void cp_async_commit() {
  HAL_PTX_REQUIRE(Arch, HAL_PTX_SM80, "cp_async_commit", "sm_80 (cp.async)");
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most `Pending` committed groups are still in flight.
template <int Pending, int Arch = HAL_PTX_ARCH>
__device__ __forceinline__ void cp_async_wait() {
  HAL_PTX_REQUIRE(Arch, HAL_PTX_SM80, "cp_async_wait", "sm_80 (cp.async)");
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

}  // namespace hal::ptx
