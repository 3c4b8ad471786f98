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

// --- 16-bit packed variant (issue 24; never run: HAL_GPU_UNVERIFIED=1) -----
// hal_unary / hal_swiglu for vec16 calls of one 16-bit dtype, with the work
// per element cut: the dtype and the op are compile-time (no per-element
// switch on either); bf16 decodes with a shift or a mask and encodes with
// f32_to_bf16_fast (the same bits as f32_to_bf16 for every input, a few
// integer ops instead of the generic encoder); f16 converts with the
// hardware's v_cvt_f32_f16 / v_cvt_f16_f32 (round to nearest even, f16
// subnormals kept; a NaN keeps its sign where f32_to_f16 returns 0x7FFF);
// sigmoid / silu / gelu_tanh take 1 / (1 + e) from v_rcp_f32 (1 ulp) and gelu
// is 0.5 x (1 + erf(x / sqrt2)), as the CUDA packed kernels
// (ptx/activation.cuh explains both against docs/accuracy.md). Two 16-byte
// chunks per operand per grid-stride step, both loads issued first.
namespace hal::hip::kernels {
namespace {

template <bool kBf16>
struct Packed16 {
  static __device__ __forceinline__ float lo(uint32_t w) {
    if constexpr (kBf16) return __uint_as_float(w << 16);
    else return static_cast<float>(__builtin_bit_cast(_Float16, static_cast<uint16_t>(w & 0xffffu)));
  }
  static __device__ __forceinline__ float hi(uint32_t w) {
    if constexpr (kBf16) return __uint_as_float(w & 0xffff0000u);
    else return static_cast<float>(__builtin_bit_cast(_Float16, static_cast<uint16_t>(w >> 16)));
  }
  static __device__ __forceinline__ uint32_t one(float v) {
    if constexpr (kBf16) return f32_to_bf16_fast(v);
    else return __builtin_bit_cast(uint16_t, static_cast<_Float16>(v));
  }
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) { return one(lo) | one(hi) << 16; }
};

__device__ __forceinline__ float sigmoid_rcp(float x) { return __builtin_amdgcn_rcpf(1.0f + expf(-x)); }
__device__ __forceinline__ float unary_op_packed(int op, float x) {
  switch (op) {
    case 7: return sigmoid_rcp(x);
    case 9: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case 10: {
      const float a = 1.59576912160573071176f * (0.044715f * (x * x) * x + x);
      return x * sigmoid_rcp(a);
    }
    case 11: return x * sigmoid_rcp(x);
  }
  return unary_op(op, x);
}

template <bool kBf16, int kInputs, class F>
__device__ __forceinline__ void map_packed(int64_t n, const void* x0, const void* x1, void* y, F f) {
  using P = Packed16<kBf16>;
  const int64_t chunks = n / 8, stride = grid_threads();
  const Chunk16* a = static_cast<const Chunk16*>(x0);
  const Chunk16* b = static_cast<const Chunk16*>(x1);
  Chunk16* out = static_cast<Chunk16*>(y);
  const auto compute = [&](const Chunk16& u, const Chunk16& v) {
    Chunk16 r;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float l = f(P::lo(u[k]), kInputs == 2 ? P::lo(v[k]) : 0.0f);
      const float h = f(P::hi(u[k]), kInputs == 2 ? P::hi(v[k]) : 0.0f);
      r[k] = P::pack(l, h);
    }
    return r;
  };
  int64_t c = global_thread();
  for (; c + stride < chunks; c += 2 * stride) {
    const Chunk16 u0 = a[c], u1 = a[c + stride];
    Chunk16 v0 = u0, v1 = u1;
    if constexpr (kInputs == 2) {
      v0 = b[c];
      v1 = b[c + stride];
    }
    out[c] = compute(u0, v0);
    out[c + stride] = compute(u1, v1);
  }
  if (c < chunks) out[c] = compute(a[c], kInputs == 2 ? b[c] : a[c]);
  const int32_t t = kBf16 ? kBF16 : kF16;
  for (int64_t i = chunks * 8 + global_thread(); i < n; i += stride) {
    const float va = load_f32(x0, t, i);
    const float vb = kInputs == 2 ? load_f32(x1, t, i) : 0.0f;
    store_f32(y, t, i, f(va, vb));
  }
}

template <bool kBf16, int kOp>
__device__ void unary_packed_op(const UnaryParams& p) {
  map_packed<kBf16, 1>(p.n, p.x, nullptr, p.y, [](float x, float) { return unary_op_packed(kOp, x); });
}
template <bool kBf16>
__device__ void unary_packed(const UnaryParams& p) {
  switch (p.op) {
    case 0: return unary_packed_op<kBf16, 0>(p);
    case 1: return unary_packed_op<kBf16, 1>(p);
    case 2: return unary_packed_op<kBf16, 2>(p);
    case 3: return unary_packed_op<kBf16, 3>(p);
    case 4: return unary_packed_op<kBf16, 4>(p);
    case 5: return unary_packed_op<kBf16, 5>(p);
    case 6: return unary_packed_op<kBf16, 6>(p);
    case 7: return unary_packed_op<kBf16, 7>(p);
    case 8: return unary_packed_op<kBf16, 8>(p);
    case 9: return unary_packed_op<kBf16, 9>(p);
    case 10: return unary_packed_op<kBf16, 10>(p);
    case 11: return unary_packed_op<kBf16, 11>(p);
  }
}

}  // namespace
}  // namespace hal::hip::kernels

extern "C" __global__ __launch_bounds__(256) void hal_unary_packed_bf16(UnaryParams p) { unary_packed<true>(p); }
extern "C" __global__ __launch_bounds__(256) void hal_unary_packed_f16(UnaryParams p) { unary_packed<false>(p); }
extern "C" __global__ __launch_bounds__(256) void hal_swiglu_packed_bf16(SwigluParams p) {
  map_packed<true, 2>(p.n, p.gate, p.up, p.y, [](float g, float u) { return g * sigmoid_rcp(g) * u; });
}
extern "C" __global__ __launch_bounds__(256) void hal_swiglu_packed_f16(SwigluParams p) {
  map_packed<false, 2>(p.n, p.gate, p.up, p.y, [](float g, float u) { return g * sigmoid_rcp(g) * u; });
}
