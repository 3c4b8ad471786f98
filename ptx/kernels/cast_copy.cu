// cast: y = convert(x * scale) between floating dtypes, through fp32, rounded
// once by ptx/element.cuh (fp8 saturating). copy: y = x as raw bits of 1, 2,
// 4 or 8 bytes (never through float, so NaN payloads, integers and -0 are
// kept exactly), any strides on both sides. A contiguous-to-contiguous copy
// never reaches this file: the launcher uses cuMemcpyDtoDAsync.
#include <stdint.h>

#include "cast_copy_params.h"
#include "ptx/element.cuh"

using namespace hal::ptx;

namespace {
__device__ __forceinline__ int64_t global_thread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_threads() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

template <class Word>
__device__ __forceinline__ void copy_words(const CopyParams& p) {
  const Word* x = static_cast<const Word*>(p.x);
  Word* y = static_cast<Word*>(p.y);
  for (int64_t i = global_thread(); i < p.n; i += grid_threads())
    y[strided_offset(p.shape, p.y_strides, i)] = x[strided_offset(p.shape, p.x_strides, i)];
}
}  // namespace

extern "C" __global__ void cast_strided(const CastParams p) {
  const auto tx = static_cast<ElemType>(p.x_dtype);
  const auto ty = static_cast<ElemType>(p.y_dtype);
  const bool scaled = p.scale != 1.0f;
  for (int64_t i = global_thread(); i < p.n; i += grid_threads()) {
    float v = load_as_float(p.x, tx, strided_offset(p.shape, p.x_strides, i));
    if (scaled) v *= p.scale;
    store_from_float(p.y, ty, strided_offset(p.shape, p.y_strides, i), v);
  }
}

extern "C" __global__ void copy_strided(const CopyParams p) {
  switch (p.elem_bytes) {
    case 1: copy_words<uint8_t>(p); return;
    case 2: copy_words<uint16_t>(p); return;
    case 4: copy_words<uint32_t>(p); return;
    case 8: copy_words<uint64_t>(p); return;
  }
}
