#pragma once
// Wave64 reductions. A CDNA wavefront is 64 lanes: every shuffle here names
// its width (64) explicitly, and block reductions combine one partial per
// wave through LDS. Code written for 32-lane warps (width 32, 0xffffffff
// masks) reduces only half a wave here; see docs/porting.md.
#include <hip/hip_runtime.h>

#include "hip/arch_config.h"

namespace hal::hip {

inline constexpr int kWaveSize = HAL_HIP_WAVE_SIZE;

__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x) & (kWaveSize - 1); }
__device__ __forceinline__ int wave_id() { return static_cast<int>(threadIdx.x) / kWaveSize; }

// Butterfly over all 64 lanes: every lane ends with the full result, and the
// combination order is fixed (deterministic across runs).
__device__ __forceinline__ float wave_sum(float v) {
#pragma unroll
  for (int off = kWaveSize / 2; off > 0; off /= 2) v += __shfl_xor(v, off, kWaveSize);
  return v;
}
__device__ __forceinline__ float wave_max(float v) {
#pragma unroll
  for (int off = kWaveSize / 2; off > 0; off /= 2) v = fmaxf(v, __shfl_xor(v, off, kWaveSize));
  return v;
}
__device__ __forceinline__ float wave_min(float v) {
#pragma unroll
  for (int off = kWaveSize / 2; off > 0; off /= 2) v = fminf(v, __shfl_xor(v, off, kWaveSize));
  return v;
}

// Block-wide reductions for blocks of kWaves waves. `scratch` is LDS of at
// least kWaves floats; the result is returned to every thread. Contains
// __syncthreads(): every thread of the block must call it.
enum class ReduceOp { sum, max, min };

template <ReduceOp Op>
__device__ __forceinline__ float wave_reduce(float v) {
  if constexpr (Op == ReduceOp::sum) return wave_sum(v);
  else if constexpr (Op == ReduceOp::max) return wave_max(v);
  else return wave_min(v);
}

template <int kWaves, ReduceOp Op>
__device__ __forceinline__ float block_reduce(float v, float* scratch) {
  static_assert(kWaves >= 1 && kWaves <= 16, "block_reduce: 1 to 16 waves per block (64..1024 threads)");
  v = wave_reduce<Op>(v);
  __syncthreads();  // scratch may still be read by a previous call
  if (lane_id() == 0) scratch[wave_id()] = v;
  __syncthreads();
  float r = scratch[0];
#pragma unroll
  for (int w = 1; w < kWaves; ++w) {
    if constexpr (Op == ReduceOp::sum) r += scratch[w];
    else if constexpr (Op == ReduceOp::max) r = fmaxf(r, scratch[w]);
    else r = fminf(r, scratch[w]);
  }
  return r;
}

}  // namespace hal::hip
