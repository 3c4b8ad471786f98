#pragma once
// Activations in fp32 for the HIP kernels: the formulas are written once for
// CUDA and HIP in kernel_math/activation.h (matching cpu_ref/activation.h;
// kernels are never built with -ffast-math).
// Numbering: hal::Activation (none, relu, gelu_tanh, silu).
#include <hip/hip_runtime.h>

#include "kernel_math/activation.h"

namespace hal::hip {

using kernel_math::gelu_erf;
using kernel_math::gelu_tanh;
using kernel_math::relu;
using kernel_math::sigmoid;
using kernel_math::silu;

__device__ __forceinline__ float activate(int act, float x) {
  switch (act) {
    case 1: return relu(x);
    case 2: return gelu_tanh(x);
    case 3: return silu(x);
  }
  return x;
}

}  // namespace hal::hip
