// Elementwise kernels: binary ops with NumPy broadcasting, the twelve unary
// ops, and swiglu. Arithmetic is fp32; each output is rounded once to its
// dtype by ptx/element.cuh. Built without --use_fast_math so expf/logf/tanhf/
// erff/sqrtf and division are the precise versions.
//
// Two paths per op:
//   *_contig_<t>  all operands contiguous with the output's shape and 16-byte
//                 aligned: each thread moves 16 bytes per operand with
//                 ld.global.nc (L2 evict_first); t is f32, f16 or bf16. The
//                 tail (n not a multiple of the vector) is done element-wise.
//   *_strided     anything else (broadcast, views, fp8): one output element
//                 per thread, offsets from shape/strides.
// All loops are grid-stride, so any grid size is correct.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernel_params/elementwise.h"
#include "ptx/activation.cuh"
#include "ptx/element.cuh"
#include "ptx/kernels/elementwise_geometry.h"
#include "ptx/ld_st.cuh"
#include "ptx/packed16.cuh"

namespace hal::ptx {
using namespace hal::kernel_params;
namespace {

// IEEE 754-2019 maximum/minimum: NaN wins, -0 < +0 (mirrors cpu_ref/binary.cpp).
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

__device__ __forceinline__ float swiglu_op(float g, float u) { return silu(g) * u; }

// Storage types of the vectorised path and their conversions.
template <class T> struct Storage;
template <> struct Storage<float> {
  static __device__ __forceinline__ float load(float v) { return v; }
  static __device__ __forceinline__ float store(float v) { return v; }
};
template <> struct Storage<__half> {
  static __device__ __forceinline__ float load(__half v) { return __half2float(v); }
  static __device__ __forceinline__ __half store(float v) { return __float2half_rn(v); }
};
template <> struct Storage<__nv_bfloat16> {
  static __device__ __forceinline__ float load(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __device__ __forceinline__ __nv_bfloat16 store(float v) { return __float2bfloat16_rn(v); }
};

__device__ __forceinline__ int64_t global_thread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_threads() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// f(in0[i], in1[i]) -> out[i] for contiguous aligned arrays; In is 1 or 2 inputs.
// Each thread takes its grid-stride chunks two at a time, both loads issued
// before either is used: with one 16-byte load in flight per thread, 16-bit
// data stayed well below copy bandwidth on the H200.
template <class T, int In, class F>
__device__ __forceinline__ void contiguous_map(const void* in0, const void* in1, void* out, int64_t n, F f) {
  constexpr int kVec = 16 / sizeof(T);
  union U {
    Bits128 bits;
    T v[kVec];
  };
  const int64_t chunks = n / kVec, stride = grid_threads();
  const L2Policy stream = l2_evict_first();
  const T* x0p = static_cast<const T*>(in0);
  const T* x1p = static_cast<const T*>(in1);
  T* yp = static_cast<T*>(out);
  const auto compute = [&](const U& x0, const U& x1, U& y) {
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const float a = Storage<T>::load(x0.v[k]);
      const float b = In == 2 ? Storage<T>::load(x1.v[k]) : 0.0f;
      y.v[k] = Storage<T>::store(f(a, b));
    }
  };
  int64_t c = global_thread();
  for (; c + stride < chunks; c += 2 * stride) {
    U x0[2], x1[2], y[2];
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      x0[u].bits = ld_nc_v4(x0p + (c + u * stride) * kVec, stream);
      if constexpr (In == 2) x1[u].bits = ld_nc_v4(x1p + (c + u * stride) * kVec, stream);
    }
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      compute(x0[u], x1[u], y[u]);
      st_v4(yp + (c + u * stride) * kVec, y[u].bits);
    }
  }
  if (c < chunks) {
    U x0, x1, y;
    x0.bits = ld_nc_v4(x0p + c * kVec, stream);
    if constexpr (In == 2) x1.bits = ld_nc_v4(x1p + c * kVec, stream);
    compute(x0, x1, y);
    st_v4(yp + c * kVec, y.bits);
  }
  for (int64_t i = chunks * kVec + global_thread(); i < n; i += stride) {
    const float a = Storage<T>::load(x0p[i]);
    const float b = In == 2 ? Storage<T>::load(x1p[i]) : 0.0f;
    yp[i] = Storage<T>::store(f(a, b));
  }
}

// The op is chosen once per kernel, not per element: one loop per op, each
// with its own function inlined (a switch per element cost instructions on
// the compute-bound 16-bit paths).
template <class T, int Op>
__device__ void binary_contig_op(const BinaryParams& p) {
  contiguous_map<T, 2>(p.a, p.b, p.y, p.n, [](float a, float b) { return binary_op(Op, a, b); });
}
template <class T>
__device__ void binary_contig(const BinaryParams& p) {
  switch (p.op) {
    case 0: return binary_contig_op<T, 0>(p);
    case 1: return binary_contig_op<T, 1>(p);
    case 2: return binary_contig_op<T, 2>(p);
    case 3: return binary_contig_op<T, 3>(p);
    case 4: return binary_contig_op<T, 4>(p);
    case 5: return binary_contig_op<T, 5>(p);
  }
}
template <class T, int Op>
__device__ void unary_contig_op(const UnaryParams& p) {
  contiguous_map<T, 1>(p.x, nullptr, p.y, p.n, [](float a, float) { return unary_op(Op, a); });
}
template <class T>
__device__ void unary_contig(const UnaryParams& p) {
  switch (p.op) {
    case 0: return unary_contig_op<T, 0>(p);
    case 1: return unary_contig_op<T, 1>(p);
    case 2: return unary_contig_op<T, 2>(p);
    case 3: return unary_contig_op<T, 3>(p);
    case 4: return unary_contig_op<T, 4>(p);
    case 5: return unary_contig_op<T, 5>(p);
    case 6: return unary_contig_op<T, 6>(p);
    case 7: return unary_contig_op<T, 7>(p);
    case 8: return unary_contig_op<T, 8>(p);
    case 9: return unary_contig_op<T, 9>(p);
    case 10: return unary_contig_op<T, 10>(p);
    case 11: return unary_contig_op<T, 11>(p);
  }
}
template <class T>
__device__ void swiglu_contig(const SwigluParams& p) {
  contiguous_map<T, 2>(p.gate, p.up, p.y, p.n, [](float g, float u) { return swiglu_op(g, u); });
}

// --- 16-bit packed variant (never run: HAL_GPU_UNVERIFIED=1) -------------
// contiguous_map for bf16 / f16 with the instructions per element cut (issue
// 24: bf16 gelu / silu issue-bound below 66% of copy bandwidth on the H200):
// two values converted per instruction (ptx/packed16.cuh) instead of one
// conversion and a PRMT each, and a grid that is resident at once
// (ptx/kernels/elementwise_geometry.h). One rounding per output, as the
// verified kernels; the math per element is the op's, with the cheaper
// forms of unary_op_rcp below where the accuracy contract allows them.
template <class E, int In, class F>
__device__ __forceinline__ void contiguous_map_packed(const void* in0, const void* in1, void* out, int64_t n, F f) {
  // Two chunks per operand per step, both loads issued first (as the verified
  // kernels): with 4 resident blocks of 256 per SM that is 32-64 KiB in flight
  // per SM, above what the H200's bandwidth-latency product needs (~22 KiB).
  // Four per step (unary) spilled at 40 registers (6 blocks per SM).
  constexpr int kUnroll = 2;
  const int64_t chunks = n / 8, stride = grid_threads();
  const L2Policy stream = l2_evict_first();
  const Bits128* x0p = static_cast<const Bits128*>(in0);
  const Bits128* x1p = static_cast<const Bits128*>(in1);
  Bits128* yp = static_cast<Bits128*>(out);
  const auto compute = [&](const Bits128& a, const Bits128& b) {
    const uint32_t wa[4] = {a.x, a.y, a.z, a.w};
    const uint32_t wb[4] = {b.x, b.y, b.z, b.w};
    uint32_t wy[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float lo = f(Packed16<E>::lo(wa[k]), In == 2 ? Packed16<E>::lo(wb[k]) : 0.0f);
      const float hi = f(Packed16<E>::hi(wa[k]), In == 2 ? Packed16<E>::hi(wb[k]) : 0.0f);
      wy[k] = Packed16<E>::pack(lo, hi);
    }
    return Bits128{wy[0], wy[1], wy[2], wy[3]};
  };
  int64_t c = global_thread();
  for (; c + (kUnroll - 1) * stride < chunks; c += kUnroll * stride) {
    Bits128 a[kUnroll], b[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      a[u] = ld_nc_v4(x0p + c + u * stride, stream);
      if constexpr (In == 2) b[u] = ld_nc_v4(x1p + c + u * stride, stream);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) st_v4(yp + c + u * stride, compute(a[u], In == 2 ? b[u] : a[u]));
  }
  for (; c < chunks; c += stride) {
    const Bits128 a = ld_nc_v4(x0p + c, stream);
    const Bits128 b = In == 2 ? ld_nc_v4(x1p + c, stream) : a;
    st_v4(yp + c, compute(a, b));
  }
  const E* x0e = static_cast<const E*>(in0);
  const E* x1e = static_cast<const E*>(in1);
  E* ye = static_cast<E*>(out);
  for (int64_t i = chunks * 8 + global_thread(); i < n; i += stride) {
    const float a = Storage<E>::load(x0e[i]);
    const float b = In == 2 ? Storage<E>::load(x1e[i]) : 0.0f;
    ye[i] = Storage<E>::store(f(a, b));
  }
}

// unary_op with sigmoid, gelu_tanh and silu through rcp.approx, gelu through
// 1 + erf (ptx/activation.cuh).
__device__ __forceinline__ float unary_op_rcp(int op, float x) {
  switch (op) {
    case 7: return sigmoid_rcp(x);
    case 9: return gelu_erf_sum(x);
    case 10: return gelu_tanh_rcp(x);
    case 11: return silu_rcp(x);
  }
  return unary_op(op, x);
}

template <class E, int Op>
__device__ void unary_packed_op(const UnaryParams& p) {
  contiguous_map_packed<E, 1>(p.x, nullptr, p.y, p.n, [](float a, float) { return unary_op_rcp(Op, a); });
}
template <class E>
__device__ void unary_packed(const UnaryParams& p) {
  switch (p.op) {
    case 0: return unary_packed_op<E, 0>(p);
    case 1: return unary_packed_op<E, 1>(p);
    case 2: return unary_packed_op<E, 2>(p);
    case 3: return unary_packed_op<E, 3>(p);
    case 4: return unary_packed_op<E, 4>(p);
    case 5: return unary_packed_op<E, 5>(p);
    case 6: return unary_packed_op<E, 6>(p);
    case 7: return unary_packed_op<E, 7>(p);
    case 8: return unary_packed_op<E, 8>(p);
    case 9: return unary_packed_op<E, 9>(p);
    case 10: return unary_packed_op<E, 10>(p);
    case 11: return unary_packed_op<E, 11>(p);
  }
}
template <class E>
__device__ void swiglu_packed(const SwigluParams& p) {
  contiguous_map_packed<E, 2>(p.gate, p.up, p.y, p.n, [](float g, float u) { return silu_rcp(g) * u; });
}
template <class E, int Op>
__device__ void binary_packed_op(const BinaryParams& p) {
  contiguous_map_packed<E, 2>(p.a, p.b, p.y, p.n, [](float a, float b) { return binary_op(Op, a, b); });
}
template <class E>
__device__ void binary_packed(const BinaryParams& p) {
  switch (p.op) {
    case 0: return binary_packed_op<E, 0>(p);
    case 1: return binary_packed_op<E, 1>(p);
    case 2: return binary_packed_op<E, 2>(p);
    case 3: return binary_packed_op<E, 3>(p);
    case 4: return binary_packed_op<E, 4>(p);
    case 5: return binary_packed_op<E, 5>(p);
  }
}

}  // namespace
}  // namespace hal::ptx

using namespace hal::ptx;
using namespace hal::kernel_params;

extern "C" __global__ void binary_contig_f32(const BinaryParams p) { binary_contig<float>(p); }
extern "C" __global__ void binary_contig_f16(const BinaryParams p) { binary_contig<__half>(p); }
extern "C" __global__ void binary_contig_bf16(const BinaryParams p) { binary_contig<__nv_bfloat16>(p); }

extern "C" __global__ void binary_strided(const BinaryParams p) {
  const auto t = static_cast<ElemType>(p.dtype);
  for (int64_t i = global_thread(); i < p.n; i += grid_threads()) {
    const float a = load_as_float(p.a, t, strided_offset(p.shape, p.a_strides, i));
    const float b = load_as_float(p.b, t, strided_offset(p.shape, p.b_strides, i));
    store_from_float(p.y, t, strided_offset(p.shape, p.y_strides, i), binary_op(p.op, a, b));
  }
}

extern "C" __global__ void unary_contig_f32(const UnaryParams p) { unary_contig<float>(p); }
extern "C" __global__ void unary_contig_f16(const UnaryParams p) { unary_contig<__half>(p); }
extern "C" __global__ void unary_contig_bf16(const UnaryParams p) { unary_contig<__nv_bfloat16>(p); }

extern "C" __global__ void unary_strided(const UnaryParams p) {
  const auto t = static_cast<ElemType>(p.dtype);
  for (int64_t i = global_thread(); i < p.n; i += grid_threads()) {
    const float x = load_as_float(p.x, t, strided_offset(p.shape, p.x_strides, i));
    store_from_float(p.y, t, strided_offset(p.shape, p.y_strides, i), unary_op(p.op, x));
  }
}

extern "C" __global__ void swiglu_contig_f32(const SwigluParams p) { swiglu_contig<float>(p); }
extern "C" __global__ void swiglu_contig_f16(const SwigluParams p) { swiglu_contig<__half>(p); }
extern "C" __global__ void swiglu_contig_bf16(const SwigluParams p) { swiglu_contig<__nv_bfloat16>(p); }

extern "C" __global__ void swiglu_strided(const SwigluParams p) {
  const auto t = static_cast<ElemType>(p.dtype);
  for (int64_t i = global_thread(); i < p.n; i += grid_threads()) {
    const float g = load_as_float(p.gate, t, strided_offset(p.shape, p.gate_strides, i));
    const float u = load_as_float(p.up, t, strided_offset(p.shape, p.up_strides, i));
    store_from_float(p.y, t, strided_offset(p.shape, p.y_strides, i), swiglu_op(g, u));
  }
}

// The 16-bit packed variant (HAL_GPU_UNVERIFIED=1; backends/gpu/rows_variants.h names them).
#define HAL_PACKED_KERNEL(name, Params, body) \
  extern "C" __global__ void __launch_bounds__(kPackedBlockThreads, kPackedBlocksPerSm) name(const Params p) { body; }
HAL_PACKED_KERNEL(binary_packed_f16, BinaryParams, binary_packed<__half>(p))
HAL_PACKED_KERNEL(binary_packed_bf16, BinaryParams, binary_packed<__nv_bfloat16>(p))
HAL_PACKED_KERNEL(unary_packed_f16, UnaryParams, unary_packed<__half>(p))
HAL_PACKED_KERNEL(unary_packed_bf16, UnaryParams, unary_packed<__nv_bfloat16>(p))
HAL_PACKED_KERNEL(swiglu_packed_f16, SwigluParams, swiglu_packed<__half>(p))
HAL_PACKED_KERNEL(swiglu_packed_bf16, SwigluParams, swiglu_packed<__nv_bfloat16>(p))
#undef HAL_PACKED_KERNEL
