// cast: y = convert(x * scale) between float dtypes, rounding once (fp8
// saturating, OCP encodings done in software: hip/element.h). copy: raw
// element bits, any strides (a permuted view into a contiguous y, ...).
#include <hip/hip_runtime.h>

#include "cast_copy_params.h"
#include "hip/element.h"

using namespace hal::hip;
using namespace hal::hip::kernels;

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
}  // namespace

extern "C" __global__ __launch_bounds__(256) void hal_cast(CastParams p) {
  for (int64_t i = global_thread(); i < p.n; i += grid_threads()) {
    const bool c = p.contiguous != 0;
    const int64_t ix = c ? i : strided_offset(p.shape, p.x_strides, i);
    const int64_t iy = c ? i : strided_offset(p.shape, p.y_strides, i);
    const float v = load_f32(p.x, p.x_type, ix);
    // scale == 1 must not touch the value (x * 1 is exact anyway, but NaN
    // payloads stay as the host reference leaves them).
    store_f32(p.y, p.y_type, iy, p.scale == 1.0f ? v : v * p.scale);
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
