// The optimizer-side training kernels, the HIP twin of
// ptx/kernels/training_optimizer.cu: one fused AdamW step (element-wise,
// grid-stride, any strides; the fp32 expressions of cpu_ref/adamw.cpp with
// the host's fp64 scalars) and global_norm in two passes (a workgroup per
// chunk of kGlobalNormChunk elements, then one workgroup adding each tensor's
// chunks and the tensors in list order). Fixed orders, no atomics.
//
// Compiled, never run on a GPU: declined unless HAL_GPU_UNVERIFIED=1.
#include "kernel_params/training.h"
#include "rows_common.h"

using namespace hal::hip;
using namespace hal::hip::kernels;
using namespace hal::kernel_params;

namespace {

__device__ __forceinline__ int64_t global_thread() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_threads() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

__device__ __forceinline__ float block_sum(float v, float* scratch) {
  return block_reduce<kRowWaves, ReduceOp::sum>(v, scratch);
}

}  // namespace

extern "C" __global__ __launch_bounds__(kRowThreads) void hal_adamw_step(AdamwParams p) {
  for (int64_t i = global_thread(); i < p.n; i += grid_threads()) {
    const int64_t mo = strided_offset(p.shape, p.m_strides, i), vo = strided_offset(p.shape, p.v_strides, i);
    const int64_t po = strided_offset(p.shape, p.param_strides, i);
    const float g = load_f32(p.grad, p.grad_type, strided_offset(p.shape, p.grad_strides, i));
    const float m = p.beta1 * p.m[mo] + p.one_minus_beta1 * g;
    const float v = p.beta2 * p.v[vo] + p.one_minus_beta2 * (g * g);
    const int64_t so = p.master != nullptr ? strided_offset(p.shape, p.master_strides, i) : 0;
    const float prev = p.master != nullptr ? p.master[so] : load_f32(p.param, p.param_type, po);
    const float denom = sqrtf(v) * p.inv_sqrt_bc2 + p.eps;
    const float next = prev * p.decay - p.step_size * (m / denom);
    p.m[mo] = m;
    p.v[vo] = v;
    if (p.master != nullptr) p.master[so] = next;
    store_f32(p.param, p.param_type, po, next);
  }
}

extern "C" __global__ __launch_bounds__(kRowThreads) void hal_global_norm_partials(GlobalNormPartialParams p) {
  __shared__ float scratch[kRowWaves];
  const int64_t chunks = global_norm_chunks(p.n);
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const int64_t first = c * kGlobalNormChunk;
    const int64_t last = first + kGlobalNormChunk < p.n ? first + kGlobalNormChunk : p.n;
    float acc = 0.0f;
    for (int64_t i = first + threadIdx.x; i < last; i += kRowThreads) {
      const float x = load_f32(p.x, p.dtype, strided_offset(p.shape, p.strides, i));
      acc += x * x;
    }
    const float s = block_sum(acc, scratch);
    if (threadIdx.x == 0) p.partials[c] = s;
  }
}

extern "C" __global__ __launch_bounds__(kRowThreads) void hal_global_norm_finish(GlobalNormFinishParams p) {
  __shared__ float scratch[kRowWaves];
  float total = 0.0f;
  for (int k = 0; k < p.tensors; ++k) {
    float acc = 0.0f;
    for (int64_t c = p.chunk_begin[k] + threadIdx.x; c < p.chunk_begin[k + 1]; c += kRowThreads) acc += p.partials[c];
    total += block_sum(acc, scratch);
  }
  if (threadIdx.x == 0) store_f32(p.y, p.y_type, 0, sqrtf(total));
}
