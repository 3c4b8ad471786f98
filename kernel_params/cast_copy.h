#pragma once
// Parameters of cast and copy (ptx/kernels/cast_copy.cu,
// hip/kernels/cast_copy.hip); packed by backends/gpu/cast_copy_args.h.
#include "kernel_params/strided.h"

namespace hal::kernel_params {

// y = convert(x * scale) between the GPU float dtypes (f32, f16, bf16, fp8);
// the multiply is skipped when scale == 1 (keeps NaN payloads, as the CPU
// does). contiguous: x and y contiguous. vec16 (implies contiguous): x and y
// also start 16-byte aligned and their elements have at most 4 bytes, so a
// kernel converts 16 / max(x size, y size) elements per step with one load
// and one store each (16 bytes on the wider side), then the tail one by one.
// The HIP kernel branches on the flags; the CUDA launcher picks
// cast_contiguous by vec16 and cast_strided otherwise.
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
// Both launchers send a copy between two contiguous tensors to the DMA engine
// instead, so contiguous is 0 whenever the kernel runs.
struct CopyParams {
  const void* x;
  void* y;
  int64_t n;
  int32_t elem_bytes;
  int32_t contiguous;
  KernelShape shape;
  KernelStrides x_strides, y_strides;
};

}  // namespace hal::kernel_params
