#pragma once
// Device-side element access by dtype: load as float, store from float with
// one round-to-nearest-even (fp8: saturating, NaN kept), matching the host
// conversions in hal/dtype.h bit for bit.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

namespace hal::ptx {

// Mirrors hal::DType's numbering (hal/dtype.h); kept as plain ints so kernels
// and their parameter structs need no host headers.
enum class ElemType : uint8_t { f32 = 0, f16 = 1, bf16 = 2, f8e4m3 = 3, f8e5m2 = 4, i8 = 5, i32 = 6, i64 = 7, boolean = 8 };

__device__ __forceinline__ float load_as_float(const void* base, ElemType t, int64_t i) {
  switch (t) {
    case ElemType::f32: return static_cast<const float*>(base)[i];
    case ElemType::f16: return __half2float(static_cast<const __half*>(base)[i]);
    case ElemType::bf16: return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
    case ElemType::f8e4m3: {
      __nv_fp8_e4m3 v;
      v.__x = static_cast<const __nv_fp8_storage_t*>(base)[i];
      return static_cast<float>(v);
    }
    case ElemType::f8e5m2: {
      __nv_fp8_e5m2 v;
      v.__x = static_cast<const __nv_fp8_storage_t*>(base)[i];
      return static_cast<float>(v);
    }
    case ElemType::i8: return static_cast<float>(static_cast<const int8_t*>(base)[i]);
    case ElemType::i32: return static_cast<float>(static_cast<const int32_t*>(base)[i]);
    case ElemType::i64: return static_cast<float>(static_cast<const int64_t*>(base)[i]);
    case ElemType::boolean: return static_cast<const uint8_t*>(base)[i] ? 1.0f : 0.0f;
  }
  return 0.0f;
}

__device__ __forceinline__ void store_from_float(void* base, ElemType t, int64_t i, float v) {
  switch (t) {
    case ElemType::f32: static_cast<float*>(base)[i] = v; return;
    case ElemType::f16: static_cast<__half*>(base)[i] = __float2half_rn(v); return;
    case ElemType::bf16: static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(v); return;
    case ElemType::f8e4m3:
      static_cast<__nv_fp8_storage_t*>(base)[i] = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
      return;
    case ElemType::f8e5m2:
      static_cast<__nv_fp8_storage_t*>(base)[i] = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E5M2);
      return;
    case ElemType::i8: static_cast<int8_t*>(base)[i] = static_cast<int8_t>(fminf(fmaxf(rintf(v), -128.f), 127.f)); return;
    case ElemType::i32: static_cast<int32_t*>(base)[i] = static_cast<int32_t>(rintf(v)); return;
    case ElemType::i64: static_cast<int64_t*>(base)[i] = static_cast<int64_t>(rintf(v)); return;
    case ElemType::boolean: static_cast<uint8_t*>(base)[i] = v != 0.0f; return;
  }
}

}  // namespace hal::ptx
