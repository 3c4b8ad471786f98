// The optimizer-side training kernels: one fused AdamW step and global_norm.
//
//   hal_adamw_step            element-wise, grid-stride, any strides: m, v
//                             (f32), p from param (f32) or from the f32
//                             master of a 16-bit param; the fp32 expressions
//                             of cpu_ref/adamw.cpp with the scalars the host
//                             computed in fp64 (kernel_args_training.cpp).
//   hal_global_norm_partials  one block per chunk of kGlobalNormChunk logical
//                             elements: lane-strided sums of squares, then the
//                             block's fixed reduction; partials[chunk].
//   hal_global_norm_finish    one block: each tensor's chunks (lane-strided,
//                             then the fixed reduction), the tensors in list
//                             order, sqrt.
// Both passes sum in orders fixed by the sizes alone and use no atomics: the
// same bits on every run of one device.
//
// Compiled, never run on a GPU: declined unless HAL_GPU_UNVERIFIED=1.
#include <math.h>

#include "kernel_params/training.h"
#include "ptx/element.cuh"
#include "ptx/kernels/rows_common.cuh"

using namespace hal::ptx;
using namespace hal::kernel_params;
using namespace hal::ptx::rows;

namespace {

constexpr int kThreads = kBlockThreads;

__device__ __forceinline__ int64_t global_thread() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_threads() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

__device__ __forceinline__ float block_sum(float v, float* scratch) {
  return group_allreduce(v, kThreads, [](float a, float b) { return a + b; }, scratch);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads) hal_adamw_step(const AdamwParams p) {
  const auto pt = static_cast<ElemType>(p.param_type), gt = static_cast<ElemType>(p.grad_type);
  for (int64_t i = global_thread(); i < p.n; i += grid_threads()) {
    const int64_t mo = strided_offset(p.shape, p.m_strides, i), vo = strided_offset(p.shape, p.v_strides, i);
    const int64_t po = strided_offset(p.shape, p.param_strides, i);
    const float g = load_as_float(p.grad, gt, strided_offset(p.shape, p.grad_strides, i));
    const float m = p.beta1 * p.m[mo] + p.one_minus_beta1 * g;
    const float v = p.beta2 * p.v[vo] + p.one_minus_beta2 * (g * g);
    const int64_t so = p.master != nullptr ? strided_offset(p.shape, p.master_strides, i) : 0;
    const float prev = p.master != nullptr ? p.master[so] : load_as_float(p.param, pt, po);
    const float denom = sqrtf(v) * p.inv_sqrt_bc2 + p.eps;
    const float next = prev * p.decay - p.step_size * (m / denom);
    p.m[mo] = m;
    p.v[vo] = v;
    if (p.master != nullptr) p.master[so] = next;
    store_from_float(p.param, pt, po, next);
  }
}

extern "C" __global__ void __launch_bounds__(kThreads) hal_global_norm_partials(const GlobalNormPartialParams p) {
  __shared__ float scratch[kThreads / 32];
  const auto t = static_cast<ElemType>(p.dtype);
  const int64_t chunks = global_norm_chunks(p.n);
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const int64_t first = c * kGlobalNormChunk;
    const int64_t last = first + kGlobalNormChunk < p.n ? first + kGlobalNormChunk : p.n;
    float acc = 0.0f;
    for (int64_t i = first + threadIdx.x; i < last; i += kThreads) {
      const float x = load_as_float(p.x, t, strided_offset(p.shape, p.strides, i));
      acc += x * x;
    }
    const float s = block_sum(acc, scratch);
    if (threadIdx.x == 0) p.partials[c] = s;
  }
}

extern "C" __global__ void __launch_bounds__(kThreads) hal_global_norm_finish(const GlobalNormFinishParams p) {
  __shared__ float scratch[kThreads / 32];
  float total = 0.0f;
  for (int k = 0; k < p.tensors; ++k) {
    float acc = 0.0f;
    for (int64_t c = p.chunk_begin[k] + threadIdx.x; c < p.chunk_begin[k + 1]; c += kThreads) acc += p.partials[c];
    total += block_sum(acc, scratch);
  }
  if (threadIdx.x == 0) store_from_float(p.y, static_cast<ElemType>(p.y_type), 0, sqrtf(total));
}
