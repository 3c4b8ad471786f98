#pragma once
// The sm_90a attention forward's (attention_sm90a.cu) named barriers and its
// TMA store of y. Kept beside the kernel (not in ptx/tma.cuh) while the
// kernel is unverified: nothing else uses them yet.
//
// Named barriers (bar.sync / bar.arrive with an id and a thread count):
// barrier 0 is __syncthreads'; the kernel's ids are AttentionSm90aBarrier.
// bar.arrive counts this thread's warp towards `count` without waiting, so a
// warpgroup can let another one go (the ping-pong hand-off). Counts are
// multiples of 32; every warp of the participating warpgroups executes the
// instruction (aligned).
//
// TMA store (cp.async.bulk.tensor ... global.shared::cta.bulk_group): one
// thread issues it after the warpgroup's generic-proxy writes to the staging
// tile were made visible to the async proxy (fence.proxy.async.shared::cta in
// every writing thread, then a barrier). Out-of-range parts of the box are
// not written. The staging tile may be overwritten only after
// wait_group.read (the store has read it); the kernel waits for full
// completion before it exits.
#include <stdint.h>

#include "ptx/arch_config.cuh"
#include "ptx/cp_async.cuh"  // smem_u32

namespace hal::ptx::attention_sm90a {

// Ids of the kernel's named barriers. epilogue + c: consumer warpgroup c's
// 128 threads around its y staging tile. turn + c: ping-pong, "consumer c may
// issue its wgmmas" (256 threads: c syncs, the other consumer arrives).
struct AttentionSm90aBarrier {
  static constexpr int kEpilogue = 1;  // 1, 2
  static constexpr int kTurn = 3;      // 3, 4
};

#if HAL_PTX_SM90A

// Immediate ids: with a register id ptxas reserves all 16 barriers.
template <int kId, int kCount>
__device__ __forceinline__ void named_barrier_sync() {
  asm volatile("bar.sync %0, %1;\n" ::"n"(kId), "n"(kCount) : "memory");
}

template <int kId, int kCount>
__device__ __forceinline__ void named_barrier_arrive() {
  asm volatile("bar.arrive %0, %1;\n" ::"n"(kId), "n"(kCount) : "memory");
}

// Register ids (the id a warp-uniform value, e.g. kEpilogue + cw): no branch
// around the barrier. ptxas then reserves all 16 barriers for the kernel,
// which costs nothing at one block per SM (this kernel's occupancy).
template <int kCount>
__device__ __forceinline__ void named_barrier_sync(uint32_t id) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "n"(kCount) : "memory");
}

template <int kCount>
__device__ __forceinline__ void named_barrier_arrive(uint32_t id) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "n"(kCount) : "memory");
}

// Box of `smem` to the map's coordinates (innermost first).
__device__ __forceinline__ void tma_store_4d(const void* tensor_map, const void* smem, int32_t c0, int32_t c1,
                                             int32_t c2, int32_t c3) {
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n" ::"l"(
                   tensor_map),
               "r"(smem_u32(smem)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
               : "memory");
}

__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }

// This thread's committed stores have read their shared memory.
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}

// This thread's committed stores are complete (written to global memory).
__device__ __forceinline__ void tma_store_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }

// The same, issued by the threads with `leader` true and skipped (a false
// predicate, not a branch) by the others: the warpgroup stays on one path,
// which ptxas needs to keep the consumers' registers in place around the y
// store (with `if (t == 0)` branches the overlap kernels spilled).
// mbarrier.arrive by the threads with `leader` true (one arrival each).
__device__ __forceinline__ void mbarrier_arrive_if(bool leader, const void* bar) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %1, 0;\n @p mbarrier.arrive.shared::cta.b64 _, [%0];\n}\n" ::"r"(
                   smem_u32(bar)),
               "r"(static_cast<uint32_t>(leader))
               : "memory");
}

__device__ __forceinline__ void tma_store_4d_if(bool leader, const void* tensor_map, const void* smem, int32_t c0,
                                                int32_t c1, int32_t c2, int32_t c3) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %6, 0;\n"
      "@p cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n}\n" ::"l"(tensor_map),
      "r"(smem_u32(smem)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(static_cast<uint32_t>(leader))
      : "memory");
}

__device__ __forceinline__ void tma_store_commit_if(bool leader) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %0, 0;\n @p cp.async.bulk.commit_group;\n}\n" ::"r"(
                   static_cast<uint32_t>(leader))
               : "memory");
}

__device__ __forceinline__ void tma_store_wait_read_if(bool leader) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %0, 0;\n @p cp.async.bulk.wait_group.read 0;\n}\n" ::"r"(
                   static_cast<uint32_t>(leader))
               : "memory");
}

__device__ __forceinline__ void tma_store_wait_all_if(bool leader) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %0, 0;\n @p cp.async.bulk.wait_group 0;\n}\n" ::"r"(
                   static_cast<uint32_t>(leader))
               : "memory");
}

#endif  // HAL_PTX_SM90A

}  // namespace hal::ptx::attention_sm90a
