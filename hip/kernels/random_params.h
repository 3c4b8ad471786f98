#pragma once
// Parameters of hip/kernels/random.hip. Plain host/device header.
#include "elementwise_params.h"

namespace hal::hip::kernels {

// Philox fill (hal/philox.h contract): element with logical index i of y.
struct RandomParams {
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

}  // namespace hal::hip::kernels
