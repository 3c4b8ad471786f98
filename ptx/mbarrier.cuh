#pragma once
// mbarrier: a barrier object in shared memory that completes a phase when
// the expected number of arrivals AND (sm_90+) the expected transaction bytes
// (from TMA / bulk copies) have arrived. Phases alternate parity 0, 1, 0, ...
//
// Contract: an Mbarrier lives in shared memory (8-byte aligned) and is
// initialised by one thread, followed by a fence/barrier before others use it.
// wait() spins on try_wait.parity; with bounded waits (debug builds, or
// HAL_PTX_BOUNDED_WAITS) it traps after HAL_PTX_MBARRIER_SPIN_LIMIT tries with
// a message naming the barrier and parity, so a wrong expect_tx count costs
// seconds instead of a hung GPU.
#include <stdint.h>
#include <stdio.h>

#include "ptx/arch_config.cuh"
#include "ptx/cp_async.cuh"  // smem_u32

#if !defined(NDEBUG) && !defined(HAL_PTX_BOUNDED_WAITS)
#define HAL_PTX_BOUNDED_WAITS 1
#endif
// The message costs a printf call inside the wait loop; a kernel whose
// wgmma pipeline must not cross a function call (ptxas C7510 serialises it)
// defines HAL_PTX_MBARRIER_TRAP_MESSAGE 0 and still traps, silently.
#ifndef HAL_PTX_MBARRIER_TRAP_MESSAGE
#define HAL_PTX_MBARRIER_TRAP_MESSAGE 1
#endif
#ifndef HAL_PTX_MBARRIER_SPIN_LIMIT
#define HAL_PTX_MBARRIER_SPIN_LIMIT (1u << 28)
#endif

namespace hal::ptx {

struct alignas(8) Mbarrier {
  uint64_t state;  // opaque; only the mbarrier instructions touch it

  template <int Arch = HAL_PTX_ARCH>
  __device__ __forceinline__ void init(uint32_t arrive_count) {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM80, "Mbarrier::init", "sm_80 (mbarrier)");
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(this)), "r"(arrive_count) : "memory");
  }

  // Makes the initialisation visible to the async proxy (TMA) and the cluster.
  template <int Arch = HAL_PTX_ARCH>
  static __device__ __forceinline__ void fence_init() {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90, "Mbarrier::fence_init", "sm_90 (fence.mbarrier_init)");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }

  template <int Arch = HAL_PTX_ARCH>
  __device__ __forceinline__ void arrive() {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM80, "Mbarrier::arrive", "sm_80 (mbarrier)");
    uint64_t token;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];\n" : "=l"(token) : "r"(smem_u32(this)) : "memory");
    (void)token;
  }

  // One arrival that also announces `bytes` of transactions (TMA loads) for this phase.
  template <int Arch = HAL_PTX_ARCH>
  __device__ __forceinline__ void arrive_expect_tx(uint32_t bytes) {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90, "Mbarrier::arrive_expect_tx", "sm_90 (mbarrier expect_tx)");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(this)), "r"(bytes)
                 : "memory");
  }

  // True once the phase with the given parity has completed.
  template <int Arch = HAL_PTX_ARCH>
  __device__ __forceinline__ bool try_wait_parity(uint32_t parity) {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90, "Mbarrier::try_wait_parity", "sm_90 (mbarrier.try_wait)");
    uint32_t done;
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_u32(this)), "r"(parity)
        : "memory");
    return done != 0;
  }

  template <int Arch = HAL_PTX_ARCH>
  __device__ __forceinline__ void wait(uint32_t parity) {
#if HAL_PTX_BOUNDED_WAITS
    uint32_t tries = 0;
    while (!try_wait_parity<Arch>(parity)) {
      if (++tries == HAL_PTX_MBARRIER_SPIN_LIMIT) {
#if HAL_PTX_MBARRIER_TRAP_MESSAGE
        printf("hal ptx: mbarrier wait timed out (block %d,%d,%d thread %d, smem 0x%x, parity %u): "
               "an arrival or expect_tx byte count is wrong\n",
               blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, smem_u32(this), parity);
#endif
        __trap();
      }
    }
#else
    while (!try_wait_parity<Arch>(parity)) {
    }
#endif
  }
};

}  // namespace hal::ptx
