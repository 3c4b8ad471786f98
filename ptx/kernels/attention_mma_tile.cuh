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

}  // namespace hal::ptx::attention_tile
