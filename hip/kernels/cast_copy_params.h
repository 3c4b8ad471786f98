#pragma once
// Parameters of hip/kernels/cast_copy.hip. Plain host/device header.
#include "elementwise_params.h"

namespace hal::hip::kernels {

// y = convert(x * scale), any float dtype to any float dtype (hal::DType numbering).
// vec16 != 0 (implies contiguous): x and y start 16-byte aligned; the kernel
// converts 16 / max(x size, y size) elements per step with one load and one
// store each (16 bytes on the wider side), then the tail one by one.
struct CastParams {
  const void* x;
  void* y;
  int64_t n;
  int32_t x_type, y_type;
  float scale;
  int32_t contiguous;
  int32_t vec16;
  int32_t pad_;
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
