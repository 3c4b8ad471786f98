#pragma once
// Parameter struct of ptx/kernels/random.cu.
#include "elementwise_params.h"

namespace hal::ptx {

// Element with row-major logical index i gets philox_uniform/normal(seed, i, a, b)
// (hal/philox.h), rounded once to dtype (ElemType numbering).
struct FillRandomParams {
  void* y;
  uint64_t seed;
  int64_t n;
  float a, b;
  int32_t normal;  // 0 uniform [a, b), 1 normal(mean a, std b)
  int32_t dtype;
  KernelShape shape;
  KernelStrides y_strides;
};

}  // namespace hal::ptx
