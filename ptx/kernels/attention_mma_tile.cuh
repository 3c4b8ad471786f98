#pragma once
// What the mma.sync attention kernels share (attention_flash.cu, the
// verified forward; attention_backward_mma.cu): the 16-bit element traits of
// m16n8k16 and the swizzled shared-memory tile layout both read with ldmatrix.
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "ptx/mma_sm80.cuh"

namespace hal::ptx::attention_tile {

// kParts: how many 16-bit parts an fp32 operand (P, dS) is split into so that
// its product keeps fp32 accuracy (docs/accuracy.md: 2 for f16, 3 for bf16).
struct F16Traits {
  using Mma = MmaM16N8K16F32F16F16F32;
  static constexpr int kParts = 2;
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  }
  static __device__ __forceinline__ float2 unpack(uint32_t v) {
    return __half22float2(*reinterpret_cast<__half2*>(&v));
  }
};

struct Bf16Traits {
  using Mma = MmaM16N8K16F32Bf16Bf16F32;
  static constexpr int kParts = 3;
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  }
  static __device__ __forceinline__ float2 unpack(uint32_t v) {
    return __bfloat1622float2(*reinterpret_cast<__nv_bfloat162*>(&v));
  }
};

// Element offset of 16-byte chunk `chunk` of row `row` in a tile with D
// columns: the chunk index is XORed with row % 8 so that the 8 rows one
// ldmatrix reads (same logical chunk) fall into 8 different bank groups.
template <int D>
__device__ __forceinline__ int swz(int row, int chunk) {
  return row * D + ((chunk ^ (row & 7)) * 8);
}

#ifdef __CUDACC__
// The online softmax's per-tile row step of the tensor-core forwards (the
// flash kernel, attention_flash.cu, and the sm_90a forward): each thread
// holds two rows' scores (log2 domain, masked to -inf); tile_max, its own
// max per row, becomes the row's max over the quad (lanes ^1, ^2); row_m
// takes the new running max, row_l is rescaled by corr (O's factor, 0 while
// row_m was -inf), and m_use is what the tile's exponents subtract (0 while
// every score so far is -inf, so no inf - inf).
__device__ __forceinline__ void fold_row_max(float (&tile_max)[2], float (&row_m)[2], float (&row_l)[2],
                                             float (&corr)[2], float (&m_use)[2]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
    tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
    const float m_new = fmaxf(row_m[r], tile_max[r]);
    m_use[r] = m_new == -INFINITY ? 0.0f : m_new;
    corr[r] = exp2f(row_m[r] - m_use[r]);
    row_m[r] = m_new;
    row_l[r] *= corr[r];
  }
}
#endif

}  // namespace hal::ptx::attention_tile
