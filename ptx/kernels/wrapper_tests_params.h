#pragma once
// Parameters of the one-warp wrapper test kernels (wrapper_tests.cu), used by
// tests/cuda/ptx_wrappers_test.cpp. Plain host/device header.
#include <stdint.h>

namespace hal::ptx {

struct WrapperTestParams {
  const void* in = nullptr;
  void* out = nullptr;
  int32_t variant = 0;  // mma: 0 f16, 1 bf16; ldmatrix: 0 plain, 1 .trans
};

}  // namespace hal::ptx
