// quantize_fp8 and dequantize_fp8 (hal/op_fp8.h) on NVIDIA GPUs, every
// architecture: the recipe of hal/fp8_codec.h (the CPU's, bit for bit) in
// every fp8 format, both families (the integer codec, not cvt: NVIDIA's
// converters know only OCP).
//
//   fp8_quantize_blocks: one CTA per scale block (1 x 128 or 128 x 128),
//     grid-stride over the blocks; the block's amax is a max, so the CTA
//     reduction gives the same value in any order; every thread then divides
//     its elements by the scale.
//   fp8_tensor_scale + fp8_quantize_tensor: the per-tensor scale in two
//     passes. Pass 1 is one CTA that reduces the whole tensor's amax and
//     writes the scale (no atomics, no workspace: the same bits every run);
//     pass 2, grid-stride over the elements, divides by it. Pass 1 reads the
//     tensor at one SM's bandwidth: fine for activations, slow for a
//     multi-GB weight (a multi-CTA first pass needs a workspace).
//   fp8_dequantize: grid-stride over the elements, x = y * scale of its block.
#include <stdint.h>

#include "hal/fp8_codec.h"
#include "kernel_params/fp8.h"
#include "ptx/element.cuh"
#include "ptx/shfl.cuh"

using namespace hal::ptx;
using namespace hal::kernel_params;
namespace codec = hal::fp8_codec;

namespace {

constexpr int kThreads = 256;  // every kernel here; the launcher uses the same
constexpr int kTensorScaleThreads = 1024;

__device__ __forceinline__ float load_wide(const Fp8QuantParams& p, int64_t i, int64_t j) {
  return load_as_float(p.wide, static_cast<ElemType>(p.wide_type), i * p.wide_m_stride + j * p.wide_k_stride);
}

// max over the CTA (kWarps warps); every thread gets the result.
template <int kWarps>
__device__ __forceinline__ float cta_max(float v, float* scratch) {
#pragma unroll
  for (int d = 16; d > 0; d /= 2) v = fmaxf(v, __uint_as_float(shfl_xor_b32(__float_as_uint(v), d)));
  __syncthreads();  // scratch may still be read by a previous call
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float r = scratch[0];
#pragma unroll
  for (int w = 1; w < kWarps; ++w) r = fmaxf(r, scratch[w]);
  return r;
}

__device__ __forceinline__ void quantize_range(const Fp8QuantParams& p, int64_t r0, int64_t r1, int64_t c0,
                                               int64_t c1, float scale, int64_t first, int64_t step) {
  const int64_t cols = c1 - c0, n = (r1 - r0) * cols;
  auto* y = static_cast<uint8_t*>(p.fp8);
  for (int64_t e = first; e < n; e += step) {
    const int64_t i = r0 + e / cols, j = c0 + e % cols;
    y[i * p.fp8_m_stride + j * p.fp8_k_stride] = codec::quantize_one(load_wide(p, i, j), scale, p.fp8_type);
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads) fp8_quantize_blocks(const Fp8QuantParams p) {
  __shared__ float scratch[kThreads / 32];
  const int64_t blocks = p.grid_rows * p.grid_cols;
  const int64_t rows_per_block = p.block == kFp8Row1x128 ? 1 : kFp8Block;
  for (int64_t b = blockIdx.x; b < blocks; b += gridDim.x) {
    const int64_t bi = b / p.grid_cols, bk = b % p.grid_cols;
    const int64_t r0 = bi * rows_per_block, r1 = min(p.m, r0 + rows_per_block);
    const int64_t c0 = bk * kFp8Block, c1 = min(p.k, c0 + kFp8Block);
    const int64_t cols = c1 - c0, n = (r1 - r0) * cols;
    float amax = 0.0f;
    for (int64_t e = threadIdx.x; e < n; e += kThreads)
      amax = fmaxf(amax, codec::amax_term(load_wide(p, r0 + e / cols, c0 + e % cols)));
    amax = cta_max<kThreads / 32>(amax, scratch);
    const float scale = codec::block_scale(amax, p.fp8_type, p.pow2_scales != 0);
    if (threadIdx.x == 0) p.scales[bi * p.s_row_stride + bk * p.s_col_stride] = scale;
    quantize_range(p, r0, r1, c0, c1, scale, threadIdx.x, kThreads);
  }
}

// Pass 1 of the per-tensor scale: launched as ONE CTA of kTensorScaleThreads.
extern "C" __global__ void __launch_bounds__(kTensorScaleThreads) fp8_tensor_scale(const Fp8QuantParams p) {
  __shared__ float scratch[kTensorScaleThreads / 32];
  const int64_t n = p.m * p.k;
  float amax = 0.0f;
  for (int64_t e = threadIdx.x; e < n; e += kTensorScaleThreads)
    amax = fmaxf(amax, codec::amax_term(load_wide(p, e / p.k, e % p.k)));
  amax = cta_max<kTensorScaleThreads / 32>(amax, scratch);
  if (threadIdx.x == 0) p.scales[0] = codec::block_scale(amax, p.fp8_type, p.pow2_scales != 0);
}

// Pass 2: the whole tensor with the scale pass 1 wrote (same stream, so in order).
extern "C" __global__ void __launch_bounds__(kThreads) fp8_quantize_tensor(const Fp8QuantParams p) {
  const float scale = p.scales[0];
  quantize_range(p, 0, p.m, 0, p.k, scale, static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x,
                 static_cast<int64_t>(gridDim.x) * kThreads);
}

extern "C" __global__ void __launch_bounds__(kThreads) fp8_dequantize(const Fp8QuantParams p) {
  const int64_t n = p.m * p.k, step = static_cast<int64_t>(gridDim.x) * kThreads;
  const auto* y = static_cast<const uint8_t*>(p.fp8);
  const int64_t rows_per_block = p.block == kFp8Row1x128 ? 1 : kFp8Block;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; e < n; e += step) {
    const int64_t i = e / p.k, j = e % p.k;
    const float scale = p.scales[(i / rows_per_block) * p.s_row_stride + (j / kFp8Block) * p.s_col_stride];
    const float x = codec::dequantize_one(y[i * p.fp8_m_stride + j * p.fp8_k_stride], scale, p.fp8_type);
    store_from_float(p.wide, static_cast<ElemType>(p.wide_type), i * p.wide_m_stride + j * p.wide_k_stride, x);
  }
}
