#pragma once
// Parameters of fill_random (ptx/kernels/random.cu, hip/kernels/random.hip);
// packed by backends/gpu/random_args.h.
#include "kernel_params/strided.h"

namespace hal::kernel_params {

// The element of y with row-major logical index i gets
// philox_uniform/normal(seed, i, a, b) (hal/philox.h), rounded once to
// y_type. contiguous: y is contiguous (offset == i; the HIP kernel's fast
// path, the CUDA kernel always walks the strides).
struct FillRandomParams {
  void* y;
  int64_t n;
  uint64_t seed;
  int32_t y_type;
  int32_t normal;  // 0: uniform [a, b); 1: normal (mean a, stddev b)
  float a, b;
  int32_t contiguous;
  int32_t pad_;
  KernelShape shape;
  KernelStrides y_strides;
};

}  // namespace hal::kernel_params
