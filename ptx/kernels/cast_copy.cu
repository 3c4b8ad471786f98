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

namespace {
// Contiguous cast, 8 elements per thread: one 8-, 16- or 2x16-byte load of x,
// the same scalar conversions as cast_strided (so results are bit-identical),
// one 8-, 16- or 2x16-byte store of y. Only floating types reach it.
__device__ __forceinline__ void load8_as_float(const void* base, ElemType t, int64_t chunk, float v[8]) {
  switch (t) {
    case ElemType::f32: {
      const float4* q = static_cast<const float4*>(base) + 2 * chunk;
      const float4 a = q[0], b = q[1];
      v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w; v[4] = b.x; v[5] = b.y; v[6] = b.z; v[7] = b.w;
      return;
    }
    case ElemType::f16:
    case ElemType::bf16: {
      const uint4 u = static_cast<const uint4*>(base)[chunk];
      const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const uint16_t lo = static_cast<uint16_t>(w[k] & 0xffffu), hi = static_cast<uint16_t>(w[k] >> 16);
        if (t == ElemType::f16) {
          v[2 * k] = __half2float(__ushort_as_half(lo));
          v[2 * k + 1] = __half2float(__ushort_as_half(hi));
        } else {
          v[2 * k] = __bfloat162float(__ushort_as_bfloat16(lo));
          v[2 * k + 1] = __bfloat162float(__ushort_as_bfloat16(hi));
        }
      }
      return;
    }
    default: {  // fp8: 8 bytes
      const uint2 u = static_cast<const uint2*>(base)[chunk];
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const auto byte = static_cast<__nv_fp8_storage_t>((k < 4 ? u.x : u.y) >> (8 * (k % 4)));
        if (t == ElemType::f8e4m3) {
          __nv_fp8_e4m3 e;
          e.__x = byte;
          v[k] = static_cast<float>(e);
        } else {
          __nv_fp8_e5m2 e;
          e.__x = byte;
          v[k] = static_cast<float>(e);
        }
      }
      return;
    }
  }
}

__device__ __forceinline__ void store8_from_float(void* base, ElemType t, int64_t chunk, const float v[8]) {
  switch (t) {
    case ElemType::f32: {
      float4* q = static_cast<float4*>(base) + 2 * chunk;
      q[0] = make_float4(v[0], v[1], v[2], v[3]);
      q[1] = make_float4(v[4], v[5], v[6], v[7]);
      return;
    }
    case ElemType::f16:
    case ElemType::bf16: {
      uint32_t w[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        uint16_t lo, hi;
        if (t == ElemType::f16) {
          lo = __half_as_ushort(__float2half_rn(v[2 * k]));
          hi = __half_as_ushort(__float2half_rn(v[2 * k + 1]));
        } else {
          lo = __bfloat16_as_ushort(__float2bfloat16_rn(v[2 * k]));
          hi = __bfloat16_as_ushort(__float2bfloat16_rn(v[2 * k + 1]));
        }
        w[k] = static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
      }
      static_cast<uint4*>(base)[chunk] = make_uint4(w[0], w[1], w[2], w[3]);
      return;
    }
    default: {  // fp8: 8 bytes, the same saturating conversion as store_from_float
      const __nv_fp8_interpretation_t kind = t == ElemType::f8e4m3 ? __NV_E4M3 : __NV_E5M2;
      uint2 u = make_uint2(0, 0);
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const uint32_t byte = __nv_cvt_float_to_fp8(v[k], __NV_SATFINITE, kind);
        if (k < 4) u.x |= byte << (8 * k); else u.y |= byte << (8 * (k - 4));
      }
      static_cast<uint2*>(base)[chunk] = u;
      return;
    }
  }
}
}  // namespace

// x and y contiguous, both 16-byte aligned, floating types only (the launcher
// checks); shape and strides are ignored. Elements past the last whole chunk
// of 8 are converted one at a time.
extern "C" __global__ void __launch_bounds__(256) cast_contiguous(const CastParams p) {
  const auto tx = static_cast<ElemType>(p.x_dtype);
  const auto ty = static_cast<ElemType>(p.y_dtype);
  const bool scaled = p.scale != 1.0f;
  const int64_t chunks = p.n / 8, stride = grid_threads();
  // Two grid-stride chunks per step, both loaded before either is converted
  // (more bytes in flight per thread; see elementwise.cu contiguous_map).
  int64_t c = global_thread();
  for (; c < chunks; c += 2 * stride) {
    const bool second = c + stride < chunks;
    float v[2][8];
    load8_as_float(p.x, tx, c, v[0]);
    if (second) load8_as_float(p.x, tx, c + stride, v[1]);
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      if (u == 1 && !second) break;
      if (scaled) {
#pragma unroll
        for (int k = 0; k < 8; ++k) v[u][k] *= p.scale;
      }
      store8_from_float(p.y, ty, c + u * stride, v[u]);
    }
  }
  for (int64_t i = chunks * 8 + global_thread(); i < p.n; i += stride) {
    float v = load_as_float(p.x, tx, i);
    if (scaled) v *= p.scale;
    store_from_float(p.y, ty, i, v);
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
