// Elementwise kernels: binary ops with NumPy broadcasting, the twelve unary
// ops, and swiglu. Arithmetic is fp32; each output is rounded once to its
// dtype by hip/element.h (fp8 in hal's OCP encoding). Three paths, chosen by
// the launcher's flags, all with the same fp32 math per element (results
// are bit-identical whichever runs):
//   vec16:      contiguous, 16-byte-aligned operands: one 16-byte chunk per
//               operand per thread and grid-stride step (4 x f32, 8 x f16 /
//               bf16, 16 x fp8 ...), then the n % (16 / size) tail one by one;
//   contiguous: one element per thread, offset == i;
//   strided:    one element per thread, offsets from the strides (any view).
#include <hip/hip_runtime.h>

#include "hip/activation.h"
#include "hip/element.h"
#include "kernel_params/elementwise.h"

namespace hal::hip::kernels {
using namespace hal::kernel_params;
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

// y[i] = f(x0[i], x1[i]) (x1 unused when kInputs == 1) over the 16-byte
// chunks of contiguous, 16-byte-aligned operands of one dtype of kSize bytes,
// then the tail elements past the last whole chunk.
template <int kSize, int kInputs, class F>
__device__ __forceinline__ void map_vec16_sized(int64_t n, int32_t t, const void* x0, const void* x1, void* y, F f) {
  constexpr int kPer = 16 / kSize;
  const int64_t chunks = n / kPer;
  for (int64_t c = global_thread(); c < chunks; c += grid_threads()) {
    const Chunk16 a = static_cast<const Chunk16*>(x0)[c];
    Chunk16 b = {0u, 0u, 0u, 0u};
    if constexpr (kInputs == 2) b = static_cast<const Chunk16*>(x1)[c];
    Chunk16 out = {0u, 0u, 0u, 0u};
#pragma unroll
    for (int e = 0; e < kPer; ++e) {
      const float va = decode_sized<kSize>(t, chunk_get<kSize>(a, e));
      const float vb = kInputs == 2 ? decode_sized<kSize>(t, chunk_get<kSize>(b, e)) : 0.0f;
      chunk_put<kSize>(out, e, encode_sized<kSize>(t, f(va, vb)));
    }
    static_cast<Chunk16*>(y)[c] = out;
  }
  for (int64_t i = chunks * kPer + global_thread(); i < n; i += grid_threads()) {
    const float va = load_f32(x0, t, i);
    const float vb = kInputs == 2 ? load_f32(x1, t, i) : 0.0f;
    store_f32(y, t, i, f(va, vb));
  }
}

template <int kInputs, class F>
__device__ __forceinline__ void map_vec16(int64_t n, int32_t t, const void* x0, const void* x1, void* y, F f) {
  switch (elem_size(t)) {
    case 1: map_vec16_sized<1, kInputs>(n, t, x0, x1, y, f); break;
    case 2: map_vec16_sized<2, kInputs>(n, t, x0, x1, y, f); break;
    case 4: map_vec16_sized<4, kInputs>(n, t, x0, x1, y, f); break;
    default: map_vec16_sized<8, kInputs>(n, t, x0, x1, y, f); break;
  }
}

}  // namespace
}  // namespace hal::hip::kernels

using namespace hal::hip;
using namespace hal::hip::kernels;
using namespace hal::kernel_params;

extern "C" __global__ __launch_bounds__(256) void hal_binary(BinaryParams p) {
  if (p.vec16) {
    const int op = p.op;
    map_vec16<2>(p.n, p.dtype, p.a, p.b, p.y, [op](float a, float b) { return binary_op(op, a, b); });
    return;
  }
  for (int64_t i = global_thread(); i < p.n; i += grid_threads()) {
    const bool c = p.contiguous != 0;
    const int64_t ia = c ? i : strided_offset(p.shape, p.a_strides, i);
    const int64_t ib = c ? i : strided_offset(p.shape, p.b_strides, i);
    const int64_t iy = c ? i : strided_offset(p.shape, p.y_strides, i);
    store_f32(p.y, p.dtype, iy, binary_op(p.op, load_f32(p.a, p.dtype, ia), load_f32(p.b, p.dtype, ib)));
  }
}

extern "C" __global__ __launch_bounds__(256) void hal_unary(UnaryParams p) {
  if (p.vec16) {
    const int op = p.op;
    map_vec16<1>(p.n, p.dtype, p.x, nullptr, p.y, [op](float x, float) { return unary_op(op, x); });
    return;
  }
  for (int64_t i = global_thread(); i < p.n; i += grid_threads()) {
    const bool c = p.contiguous != 0;
    const int64_t ix = c ? i : strided_offset(p.shape, p.x_strides, i);
    const int64_t iy = c ? i : strided_offset(p.shape, p.y_strides, i);
    store_f32(p.y, p.dtype, iy, unary_op(p.op, load_f32(p.x, p.dtype, ix)));
  }
}

extern "C" __global__ __launch_bounds__(256) void hal_swiglu(SwigluParams p) {
  if (p.vec16) {
    map_vec16<2>(p.n, p.dtype, p.gate, p.up, p.y, [](float g, float u) { return silu(g) * u; });
    return;
  }
  for (int64_t i = global_thread(); i < p.n; i += grid_threads()) {
    const bool c = p.contiguous != 0;
    const int64_t ig = c ? i : strided_offset(p.shape, p.gate_strides, i);
    const int64_t iu = c ? i : strided_offset(p.shape, p.up_strides, i);
    const int64_t iy = c ? i : strided_offset(p.shape, p.y_strides, i);
    store_f32(p.y, p.dtype, iy, silu(load_f32(p.gate, p.dtype, ig)) * load_f32(p.up, p.dtype, iu));
  }
}
