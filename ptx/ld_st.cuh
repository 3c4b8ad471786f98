#pragma once
// Global-memory loads and stores with explicit cache behaviour (inline PTX).
//
//   ld_nc_*        ld.global.nc (read-only path), L1::no_allocate, with an L2
//                  cache policy; for data read once (streaming elementwise
//                  inputs) so it does not evict reused lines.
//   st_*           st.global with an L2 cache policy.
//
// The L2 eviction priority is given as an L2::cache_hint operand made by
// createpolicy (sm_80+); the bare .L2::evict_first qualifier is only legal on
// 256-bit accesses of newer targets. Addresses must be aligned to the access
// size (16 bytes for the .v4 forms); callers check alignment on the host and
// fall back to scalar code otherwise.
#include <stdint.h>

#include "arch_config.cuh"

namespace hal::ptx {

// 16 bytes as four 32-bit words (any dtype travels through this as raw bits).
struct alignas(16) Bits128 {
  uint32_t x, y, z, w;
};

// An L2 cache policy (createpolicy result), a 64-bit opaque register.
struct L2Policy {
  uint64_t bits;
};

// Lines touched with this policy are evicted first: data streamed once.
template <int Arch = HAL_PTX_ARCH>
__device__ __forceinline__ L2Policy l2_evict_first() {
  HAL_PTX_REQUIRE(Arch, HAL_PTX_SM80, "l2_evict_first", "sm_80 (createpolicy)");
  L2Policy p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(p.bits));
  return p;
}

// Lines touched with this policy are kept longest: data re-read by other blocks.
template <int Arch = HAL_PTX_ARCH>
__device__ __forceinline__ L2Policy l2_evict_last() {
  HAL_PTX_REQUIRE(Arch, HAL_PTX_SM80, "l2_evict_last", "sm_80 (createpolicy)");
  L2Policy p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(p.bits));
  return p;
}

// 16-byte read-only load, no L1 allocation, L2 policy `pol`.
template <int Arch = HAL_PTX_ARCH>
__device__ __forceinline__ Bits128 ld_nc_v4(const void* p, L2Policy pol) {
  HAL_PTX_REQUIRE(Arch, HAL_PTX_SM80, "ld_nc_v4", "sm_80 (L2::cache_hint)");
  Bits128 r;
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;\n"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p), "l"(pol.bits));
  return r;
}

// 4-byte read-only load, no L1 allocation, L2 policy `pol`.
template <int Arch = HAL_PTX_ARCH>
__device__ __forceinline__ uint32_t ld_nc_b32(const void* p, L2Policy pol) {
  HAL_PTX_REQUIRE(Arch, HAL_PTX_SM80, "ld_nc_b32", "sm_80 (L2::cache_hint)");
  uint32_t r;
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.u32 %0, [%1], %2;\n" : "=r"(r) : "l"(p), "l"(pol.bits));
  return r;
}

// 16-byte store, no L1 allocation, L2 policy `pol`.
template <int Arch = HAL_PTX_ARCH>
__device__ __forceinline__ void st_v4(void* p, const Bits128& v, L2Policy pol) {
  HAL_PTX_REQUIRE(Arch, HAL_PTX_SM80, "st_v4", "sm_80 (L2::cache_hint)");
  asm volatile("st.global.L1::no_allocate.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;\n" ::"l"(p), "r"(v.x),
               "r"(v.y), "r"(v.z), "r"(v.w), "l"(pol.bits)
               : "memory");
}

// Plain 16-byte store (default policy): output the next kernel reads.
__device__ __forceinline__ void st_v4(void* p, const Bits128& v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

}  // namespace hal::ptx
