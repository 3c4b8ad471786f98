// cast: y = convert(x * scale) between float dtypes, rounding once (fp8
// saturating, OCP encodings done in software: hip/element.h); contiguous,
// 16-byte-aligned views move in chunks (16 bytes on the wider side), others
// element by element, with the same per-element math. copy: raw element
// bits, any strides (a permuted view into a contiguous y, ...).
#include <hip/hip_runtime.h>

#include "hip/element.h"
#include "kernel_params/cast_copy.h"

using namespace hal::hip;
using namespace hal::kernel_params;

namespace {
__device__ __forceinline__ int64_t global_thread() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_threads() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

template <class T>
__device__ __forceinline__ void copy_elements(const CopyParams& p) {
  const T* x = static_cast<const T*>(p.x);
  T* y = static_cast<T*>(p.y);
  for (int64_t i = global_thread(); i < p.n; i += grid_threads()) {
    const bool c = p.contiguous != 0;
    y[c ? i : strided_offset(p.shape, p.y_strides, i)] = x[c ? i : strided_offset(p.shape, p.x_strides, i)];
  }
}
__device__ __forceinline__ float cast_value(const CastParams& p, float v) {
  // scale == 1 must not touch the value (x * 1 is exact anyway, but NaN
  // payloads stay as the host reference leaves them).
  return p.scale == 1.0f ? v : v * p.scale;
}

// kXs / kYs: element sizes of x and y. kPer elements per step, so the wider
// side moves 16 bytes and the narrower 4 or 8.
template <int kXs, int kYs>
__device__ __forceinline__ void cast_vec(const CastParams& p) {
  constexpr int kPer = 16 / (kXs > kYs ? kXs : kYs);
  using XChunk = typename ChunkOf<kPer * kXs>::T;
  using YChunk = typename ChunkOf<kPer * kYs>::T;
  const int64_t chunks = p.n / kPer;
  for (int64_t c = global_thread(); c < chunks; c += grid_threads()) {
    const XChunk x = static_cast<const XChunk*>(p.x)[c];
    YChunk y = {};
#pragma unroll
    for (int e = 0; e < kPer; ++e)
      chunk_put<kYs>(y, e, encode_sized<kYs>(p.y_type, cast_value(p, decode_sized<kXs>(p.x_type, chunk_get<kXs>(x, e)))));
    static_cast<YChunk*>(p.y)[c] = y;
  }
  for (int64_t i = chunks * kPer + global_thread(); i < p.n; i += grid_threads())
    store_f32(p.y, p.y_type, i, cast_value(p, load_f32(p.x, p.x_type, i)));
}

template <int kXs>
__device__ __forceinline__ void cast_vec_to(const CastParams& p) {
  switch (elem_size(p.y_type)) {
    case 1: cast_vec<kXs, 1>(p); break;
    case 2: cast_vec<kXs, 2>(p); break;
    default: cast_vec<kXs, 4>(p); break;  // float dtypes only: no 8-byte y
  }
}
}  // namespace

extern "C" __global__ __launch_bounds__(256) void hal_cast(CastParams p) {
  if (p.vec16) {
    switch (elem_size(p.x_type)) {
      case 1: cast_vec_to<1>(p); break;
      case 2: cast_vec_to<2>(p); break;
      default: cast_vec_to<4>(p); break;
    }
    return;
  }
  for (int64_t i = global_thread(); i < p.n; i += grid_threads()) {
    const bool c = p.contiguous != 0;
    const int64_t ix = c ? i : strided_offset(p.shape, p.x_strides, i);
    const int64_t iy = c ? i : strided_offset(p.shape, p.y_strides, i);
    store_f32(p.y, p.y_type, iy, cast_value(p, load_f32(p.x, p.x_type, ix)));
  }
}

extern "C" __global__ __launch_bounds__(256) void hal_copy(CopyParams p) {
  switch (p.elem_bytes) {
    case 1: copy_elements<uint8_t>(p); break;
    case 2: copy_elements<uint16_t>(p); break;
    case 4: copy_elements<uint32_t>(p); break;
    case 8: copy_elements<uint64_t>(p); break;
  }
}
