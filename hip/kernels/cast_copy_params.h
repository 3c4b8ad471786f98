#pragma once
// Parameters of hip/kernels/cast_copy.hip. Plain host/device header.
#include "elementwise_params.h"

namespace hal::hip::kernels {

// y = convert(x * scale), any float dtype to any float dtype (hal::DType numbering).
struct CastParams {
  const void* x;
  void* y;
  int64_t n;
  int32_t x_type, y_type;
  float scale;
  int32_t contiguous;
  KernelShape shape;
  KernelStrides x_strides, y_strides;
};

// y = x bit for bit, elements of elem_bytes (1, 2, 4 or 8) bytes, any strides.
struct CopyParams {
  const void* x;
  void* y;
  int64_t n;
  int32_t elem_bytes;
  int32_t contiguous;
  KernelShape shape;
  KernelStrides x_strides, y_strides;
};

}  // namespace hal::hip::kernels
