// Backward kernels of the elementwise ops: unary_backward (dx = dy * f'(x))
// and swiglu_backward, the HIP twin of ptx/kernels/training_elementwise.cu.
// One output element per thread in a grid-stride loop, offsets from each
// tensor's strides (any view); fp32 math with the derivative forms of
// cpu_ref/unary_backward.cpp (hip/activation_backward.h), each output rounded
// once (hip/element.h). No reduction: the bits depend on the inputs alone.
//
// Compiled, never run on a GPU: declined unless HAL_GPU_UNVERIFIED=1.
#include <hip/hip_runtime.h>

#include "hip/activation_backward.h"
#include "hip/element.h"
#include "kernel_params/training.h"

using namespace hal::hip;
using namespace hal::kernel_params;

namespace {
__device__ __forceinline__ int64_t global_thread() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_threads() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }
}  // namespace

extern "C" __global__ __launch_bounds__(256) void hal_unary_backward(UnaryBackwardParams p) {
  for (int64_t i = global_thread(); i < p.n; i += grid_threads()) {
    const float x = load_f32(p.x, p.dtype, strided_offset(p.shape, p.x_strides, i));
    const float dy = load_f32(p.dy, p.dtype, strided_offset(p.shape, p.dy_strides, i));
    store_f32(p.dx, p.dtype, strided_offset(p.shape, p.dx_strides, i), unary_backward_op(p.op, x, dy));
  }
}

extern "C" __global__ __launch_bounds__(256) void hal_swiglu_backward(SwigluBackwardParams p) {
  for (int64_t i = global_thread(); i < p.n; i += grid_threads()) {
    const float g = load_f32(p.gate, p.dtype, strided_offset(p.shape, p.gate_strides, i));
    const float u = load_f32(p.up, p.dtype, strided_offset(p.shape, p.up_strides, i));
    const float d = load_f32(p.dy, p.dtype, strided_offset(p.shape, p.dy_strides, i));
    store_f32(p.dgate, p.dtype, strided_offset(p.shape, p.dgate_strides, i), (d * u) * silu_derivative(g));
    store_f32(p.dup, p.dtype, strided_offset(p.shape, p.dup_strides, i), d * silu(g));
  }
}
