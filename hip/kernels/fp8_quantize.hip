// quantize_fp8 and dequantize_fp8 (hal/op_fp8.h) on AMD GPUs: the recipe of
// hal/fp8_codec.h (the CPU's, bit for bit) in every fp8 format, both
// families (the integer codec: MI300X's converters know only FNUZ). The same
// kernels as ptx/kernels/fp8_quantize.cu, with wave64 reductions:
//   fp8_quantize_blocks: one workgroup per 1 x 128 / 128 x 128 scale block
//     (grid-stride over the blocks), amax by a max reduction (order-free);
//   fp8_tensor_scale (ONE workgroup: the whole tensor's amax and scale) then
//     fp8_quantize_tensor: the per-tensor scale in two passes, no atomics;
//   fp8_dequantize: x = y * scale of its block.
#include <hip/hip_runtime.h>

#include "hal/fp8_codec.h"
#include "hip/element.h"
#include "hip/wave.h"
#include "kernel_params/fp8.h"

using namespace hal::hip;
using namespace hal::kernel_params;
namespace codec = hal::fp8_codec;

namespace {

constexpr int kThreads = 256;  // every kernel here; the launcher uses the same
constexpr int kTensorScaleThreads = 1024;

__device__ __forceinline__ float load_wide(const Fp8QuantParams& p, int64_t i, int64_t j) {
  return load_f32(p.wide, p.wide_type, i * p.wide_m_stride + j * p.wide_k_stride);
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

extern "C" __global__ __launch_bounds__(kThreads) void fp8_quantize_blocks(Fp8QuantParams p) {
  __shared__ float scratch[kThreads / kWaveSize];
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
    amax = block_reduce<kThreads / kWaveSize, ReduceOp::max>(amax, scratch);
    const float scale = codec::block_scale(amax, p.fp8_type, p.pow2_scales != 0);
    if (threadIdx.x == 0) p.scales[bi * p.s_row_stride + bk * p.s_col_stride] = scale;
    quantize_range(p, r0, r1, c0, c1, scale, threadIdx.x, kThreads);
  }
}

extern "C" __global__ __launch_bounds__(kTensorScaleThreads) void fp8_tensor_scale(Fp8QuantParams p) {
  __shared__ float scratch[kTensorScaleThreads / kWaveSize];
  const int64_t n = p.m * p.k;
  float amax = 0.0f;
  for (int64_t e = threadIdx.x; e < n; e += kTensorScaleThreads)
    amax = fmaxf(amax, codec::amax_term(load_wide(p, e / p.k, e % p.k)));
  amax = block_reduce<kTensorScaleThreads / kWaveSize, ReduceOp::max>(amax, scratch);
  if (threadIdx.x == 0) p.scales[0] = codec::block_scale(amax, p.fp8_type, p.pow2_scales != 0);
}

extern "C" __global__ __launch_bounds__(kThreads) void fp8_quantize_tensor(Fp8QuantParams p) {
  const float scale = p.scales[0];
  quantize_range(p, 0, p.m, 0, p.k, scale, static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x,
                 static_cast<int64_t>(gridDim.x) * kThreads);
}

extern "C" __global__ __launch_bounds__(kThreads) void fp8_dequantize(Fp8QuantParams p) {
  const int64_t n = p.m * p.k, step = static_cast<int64_t>(gridDim.x) * kThreads;
  const auto* y = static_cast<const uint8_t*>(p.fp8);
  const int64_t rows_per_block = p.block == kFp8Row1x128 ? 1 : kFp8Block;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; e < n; e += step) {
    const int64_t i = e / p.k, j = e % p.k;
    const float scale = p.scales[(i / rows_per_block) * p.s_row_stride + (j / kFp8Block) * p.s_col_stride];
    const float x = codec::dequantize_one(y[i * p.fp8_m_stride + j * p.fp8_k_stride], scale, p.fp8_type);
    store_f32(p.wide, p.wide_type, i * p.wide_m_stride + j * p.wide_k_stride, x);
  }
}
