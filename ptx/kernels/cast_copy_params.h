#pragma once
// Parameter structs of ptx/kernels/cast_copy.cu (see elementwise_params.h for
// the strided addressing convention).
#include "elementwise_params.h"

namespace hal::ptx {

// y = convert(x * scale) between floating dtypes (ElemType numbering); the
// multiply is skipped when scale == 1 (keeps NaN payloads, as the CPU does).
struct CastParams {
  const void* x;
  void* y;
  int64_t n;
  float scale;
  int32_t x_dtype;
  int32_t y_dtype;
  int32_t pad_;
  KernelShape shape;
  KernelStrides x_strides, y_strides;
};

// y = x as raw bits, element size 1, 2, 4 or 8 bytes, any strides.
struct CopyParams {
  const void* x;
  void* y;
  int64_t n;
  int32_t elem_bytes;
  int32_t pad_;
  KernelShape shape;
  KernelStrides x_strides, y_strides;
};

}  // namespace hal::ptx
