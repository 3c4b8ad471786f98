// Elementwise kernels: binary ops with NumPy broadcasting, the twelve unary
// ops, and swiglu. Arithmetic is fp32; each output is rounded once to its
// dtype by hip/element.h (fp8 in hal's OCP encoding). One output element per
// thread per grid-stride step; a contiguous flag skips the stride arithmetic.
// Memory-bound and simple on purpose: correct for any view first.
#include <hip/hip_runtime.h>

#include "elementwise_params.h"
#include "hip/activation.h"
#include "hip/element.h"

namespace hal::hip::kernels {
namespace {

// IEEE 754-2019 maximum/minimum: NaN wins, -0 < +0 (mirrors cpu_ref).
__device__ __forceinline__ float nan_maximum(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
__device__ __forceinline__ float nan_minimum(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}

__device__ __forceinline__ float binary_op(int op, float a, float b) {
  switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a / b;
    case 4: return nan_maximum(a, b);
    case 5: return nan_minimum(a, b);
  }
  return a;
}

__device__ __forceinline__ float unary_op(int op, float x) {
  switch (op) {
    case 0: return -x;
    case 1: return fabsf(x);
    case 2: return expf(x);
    case 3: return logf(x);
    case 4: return sqrtf(x);
    case 5: return 1.0f / sqrtf(x);
    case 6: return tanhf(x);
    case 7: return sigmoid(x);
    case 8: return relu(x);
    case 9: return gelu_erf(x);
    case 10: return gelu_tanh(x);
    case 11: return silu(x);
  }
  return x;
}

__device__ __forceinline__ int64_t global_thread() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_threads() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

}  // namespace
}  // namespace hal::hip::kernels

using namespace hal::hip;
using namespace hal::hip::kernels;

extern "C" __global__ __launch_bounds__(256) void hal_binary(BinaryParams p) {
  for (int64_t i = global_thread(); i < p.n; i += grid_threads()) {
    const bool c = p.contiguous != 0;
    const int64_t ia = c ? i : strided_offset(p.shape, p.a_strides, i);
    const int64_t ib = c ? i : strided_offset(p.shape, p.b_strides, i);
    const int64_t iy = c ? i : strided_offset(p.shape, p.y_strides, i);
    store_f32(p.y, p.dtype, iy, binary_op(p.op, load_f32(p.a, p.dtype, ia), load_f32(p.b, p.dtype, ib)));
  }
}

extern "C" __global__ __launch_bounds__(256) void hal_unary(UnaryParams p) {
  for (int64_t i = global_thread(); i < p.n; i += grid_threads()) {
    const bool c = p.contiguous != 0;
    const int64_t ix = c ? i : strided_offset(p.shape, p.x_strides, i);
    const int64_t iy = c ? i : strided_offset(p.shape, p.y_strides, i);
    store_f32(p.y, p.dtype, iy, unary_op(p.op, load_f32(p.x, p.dtype, ix)));
  }
}

extern "C" __global__ __launch_bounds__(256) void hal_swiglu(SwigluParams p) {
  for (int64_t i = global_thread(); i < p.n; i += grid_threads()) {
    const bool c = p.contiguous != 0;
    const int64_t ig = c ? i : strided_offset(p.shape, p.gate_strides, i);
    const int64_t iu = c ? i : strided_offset(p.shape, p.up_strides, i);
    const int64_t iy = c ? i : strided_offset(p.shape, p.y_strides, i);
    store_f32(p.y, p.dtype, iy, silu(load_f32(p.gate, p.dtype, ig)) * load_f32(p.up, p.dtype, iu));
  }
}
