#pragma once
// TMA (sm_90+): cp.async.bulk.tensor 2-D tile load from global into shared
// memory, completing as transaction bytes on an Mbarrier.
//
// Contract: `tensor_map` points to a CUtensorMap (128 bytes, 64-byte aligned)
// encoded on the host with cuTensorMapEncodeTiled and passed as a
// `const __grid_constant__` kernel parameter (or in global memory). `smem`
// is aligned as the map's swizzle requires (128 bytes for 128B swizzle). The
// caller announces the box's byte count with Mbarrier::arrive_expect_tx.
// Coordinates are in elements, innermost first; out-of-range parts of the box
// are zero-filled.
#include <stdint.h>

#include "ptx/arch_config.cuh"
#include "ptx/mbarrier.cuh"

namespace hal::ptx {

struct TmaLoad2D {
  template <int Arch = HAL_PTX_ARCH>
  static __device__ __forceinline__ void copy(void* smem, const void* tensor_map, Mbarrier& bar, int32_t c0,
                                              int32_t c1) {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90, "TmaLoad2D", "sm_90 (cp.async.bulk.tensor)");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::
            "r"(smem_u32(smem)),
        "l"(tensor_map), "r"(smem_u32(&bar)), "r"(c0), "r"(c1)
        : "memory");
  }
};

// The 4-D form (the attention kernel's (channel, sequence, head, batch) views):
// coordinates innermost first, as for TmaLoad2D.
struct TmaLoad4D {
  template <int Arch = HAL_PTX_ARCH>
  static __device__ __forceinline__ void copy(void* smem, const void* tensor_map, Mbarrier& bar, int32_t c0,
                                              int32_t c1, int32_t c2, int32_t c3) {
    HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90, "TmaLoad4D", "sm_90 (cp.async.bulk.tensor)");
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], "
        "[%2];\n" ::"r"(smem_u32(smem)),
        "l"(tensor_map), "r"(smem_u32(&bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
        : "memory");
  }
};

// Orders this thread's generic-proxy shared-memory writes before later
// async-proxy (TMA, wgmma) accesses.
template <int Arch = HAL_PTX_ARCH>
__device__ __forceinline__ void fence_proxy_async_shared() {
  HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90, "fence_proxy_async_shared", "sm_90 (fence.proxy.async)");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

template <int Arch = HAL_PTX_ARCH>
__device__ __forceinline__ void prefetch_tensor_map(const void* tensor_map) {
  HAL_PTX_REQUIRE(Arch, HAL_PTX_SM90, "prefetch_tensor_map", "sm_90 (prefetch.tensormap)");
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(tensor_map) : "memory");
}

}  // namespace hal::ptx
