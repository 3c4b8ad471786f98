#pragma once
// shfl.sync wrappers (sm_30+ semantics, always available on sm_80+). The
// member mask is an explicit argument: every lane named in it must execute the
// same shfl, and NVIDIA's warp is 32 lanes (HAL_PTX_WARP_SIZE).
#include <stdint.h>

#include "arch_config.cuh"

namespace hal::ptx {

inline constexpr unsigned kFullWarpMask = 0xffffffffu;

// Lane `lane ^ lane_mask` (butterfly); used for all-reduce within a warp.
__device__ __forceinline__ uint32_t shfl_xor_b32(uint32_t v, int lane_mask, unsigned members = kFullWarpMask) {
  uint32_t r;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, %3;\n" : "=r"(r) : "r"(v), "r"(lane_mask), "r"(members));
  return r;
}

// Value of lane `src_lane` (0..31).
__device__ __forceinline__ uint32_t shfl_idx_b32(uint32_t v, int src_lane, unsigned members = kFullWarpMask) {
  uint32_t r;
  asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, %3;\n" : "=r"(r) : "r"(v), "r"(src_lane), "r"(members));
  return r;
}

// Value of lane `lane - delta` (lanes below delta keep their own value).
__device__ __forceinline__ uint32_t shfl_up_b32(uint32_t v, int delta, unsigned members = kFullWarpMask) {
  uint32_t r;
  asm volatile("shfl.sync.up.b32 %0, %1, %2, 0x0, %3;\n" : "=r"(r) : "r"(v), "r"(delta), "r"(members));
  return r;
}

// Value of lane `lane + delta` (lanes past 31 keep their own value).
__device__ __forceinline__ uint32_t shfl_down_b32(uint32_t v, int delta, unsigned members = kFullWarpMask) {
  uint32_t r;
  asm volatile("shfl.sync.down.b32 %0, %1, %2, 0x1f, %3;\n" : "=r"(r) : "r"(v), "r"(delta), "r"(members));
  return r;
}

__device__ __forceinline__ float shfl_xor(float v, int lane_mask, unsigned members = kFullWarpMask) {
  return __uint_as_float(shfl_xor_b32(__float_as_uint(v), lane_mask, members));
}
__device__ __forceinline__ float shfl_idx(float v, int src_lane, unsigned members = kFullWarpMask) {
  return __uint_as_float(shfl_idx_b32(__float_as_uint(v), src_lane, members));
}

// Butterfly all-reduce over the full warp: every lane gets the result, and the
// order of additions is fixed (deterministic).
__device__ __forceinline__ float warp_allreduce_sum(float v) {
#pragma unroll
  for (int m = 16; m >= 1; m >>= 1) v += shfl_xor(v, m);
  return v;
}
// NaN-propagating max (fmaxf would drop NaN).
__device__ __forceinline__ float warp_allreduce_max(float v) {
#pragma unroll
  for (int m = 16; m >= 1; m >>= 1) {
    const float o = shfl_xor(v, m);
    v = (o > v || o != o) ? o : v;
  }
  return v;
}

}  // namespace hal::ptx
