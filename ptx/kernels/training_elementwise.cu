// Backward kernels of the elementwise ops: unary_backward (dx = dy * f'(x))
// and swiglu_backward. One output element per thread in a grid-stride loop,
// offsets from each tensor's strides (any view); fp32 math with the
// derivative forms of cpu_ref/unary_backward.cpp (ptx/activation_backward.cuh),
// each output rounded once (ptx/element.cuh). Element i depends on element i
// alone: no reduction, so the bits depend on nothing but the inputs.
//
// Compiled, never run on a GPU: declined unless HAL_GPU_UNVERIFIED=1.
#include "kernel_params/training.h"
#include "ptx/activation_backward.cuh"
#include "ptx/element.cuh"

using namespace hal::ptx;
using namespace hal::kernel_params;

namespace {
__device__ __forceinline__ int64_t global_thread() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_threads() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }
}  // namespace

extern "C" __global__ void __launch_bounds__(256) hal_unary_backward(const UnaryBackwardParams p) {
  const auto t = static_cast<ElemType>(p.dtype);
  for (int64_t i = global_thread(); i < p.n; i += grid_threads()) {
    const float x = load_as_float(p.x, t, strided_offset(p.shape, p.x_strides, i));
    const float dy = load_as_float(p.dy, t, strided_offset(p.shape, p.dy_strides, i));
    store_from_float(p.dx, t, strided_offset(p.shape, p.dx_strides, i), unary_backward_op(p.op, x, dy));
  }
}

extern "C" __global__ void __launch_bounds__(256) hal_swiglu_backward(const SwigluBackwardParams p) {
  const auto t = static_cast<ElemType>(p.dtype);
  for (int64_t i = global_thread(); i < p.n; i += grid_threads()) {
    const float g = load_as_float(p.gate, t, strided_offset(p.shape, p.gate_strides, i));
    const float u = load_as_float(p.up, t, strided_offset(p.shape, p.up_strides, i));
    const float d = load_as_float(p.dy, t, strided_offset(p.shape, p.dy_strides, i));
    store_from_float(p.dgate, t, strided_offset(p.shape, p.dgate_strides, i), (d * u) * silu_derivative(g));
    store_from_float(p.dup, t, strided_offset(p.shape, p.dup_strides, i), d * silu(g));
  }
}
