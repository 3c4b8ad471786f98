#pragma once
// Activations in fp32, matching cpu_ref/activation.h's formulas (precise
// expf/tanhf/erff: kernels are never built with -ffast-math).
// Numbering: hal::Activation (none, relu, gelu_tanh, silu).
#include <hip/hip_runtime.h>

namespace hal::hip {

__device__ __forceinline__ float relu(float x) { return x > 0.0f ? x : (x != x ? x : 0.0f); }
__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ __forceinline__ float silu(float x) { return x * sigmoid(x); }
// erfc(-x/sqrt2) instead of 1+erf(x/sqrt2): no cancellation in the negative tail.
__device__ __forceinline__ float gelu_erf(float x) { return 0.5f * x * erfcf(-x * 0.70710678118654752f); }
// x sigmoid(2u), not x (1 + tanh(u)) / 2, which cancels to 0 below x ~ -5
// (the CPU's and CUDA's form).
__device__ __forceinline__ float gelu_tanh(float x) {
  const float a = 1.59576912160573071176f * (0.044715f * (x * x) * x + x);  // 2 sqrt(2/pi) (x + 0.044715 x^3)
  return x * sigmoid(a);
}

__device__ __forceinline__ float activate(int act, float x) {
  switch (act) {
    case 1: return relu(x);
    case 2: return gelu_tanh(x);
    case 3: return silu(x);
  }
  return x;
}

}  // namespace hal::hip
