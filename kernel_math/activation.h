#pragma once
// Scalar activations in fp32, written once for the CUDA kernels (unary ops,
// swiglu, the GEMM epilogue; ptx/activation.cuh) and the HIP kernels
// (hip/activation.h): plain __device__ C++ that nvcc and hipcc both compile.
// They mirror cpu_ref/activation.h formula for formula and use the precise
// math functions (expf, erfcf); the kernels are built WITHOUT fast math, so
// results stay within a few ulp of the CPU reference. NaN propagates through
// every function.
#include <math.h>

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#endif

namespace hal::kernel_math {

// max(x, 0) that keeps NaN (fmaxf would turn NaN into 0).
__device__ __forceinline__ float relu(float x) { return x > 0.0f ? x : (x == x ? 0.0f : x); }

__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

__device__ __forceinline__ float silu(float x) { return x * sigmoid(x); }

// erfc(-x/sqrt2) instead of 1+erf(x/sqrt2): no cancellation in the negative tail.
__device__ __forceinline__ float gelu_erf(float x) { return 0.5f * x * erfcf(-x * 0.70710678118654752440f); }

// x (1 + tanh(u)) / 2 as x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3):
// 1 + tanh(u) cancels to 0 for x below about -5 (the CPU returned -1.6e-8
// where this returned -0); sigmoid(2u) does not. The CPU's form.
__device__ __forceinline__ float gelu_tanh(float x) {
  const float a = 1.59576912160573071176f * (0.044715f * (x * x) * x + x);  // 2 sqrt(2/pi) (...)
  return x * sigmoid(a);
}

}  // namespace hal::kernel_math
