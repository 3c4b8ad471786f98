#pragma once
// Scalar activations in fp32, written once for every CUDA kernel (unary ops,
// swiglu, the GEMM epilogue). They mirror cpu_ref/activation.h formula for
// formula and use the precise CUDA math functions (expf, erff, tanhf); the
// kernels are built WITHOUT --use_fast_math, so results stay within a few ulp
// of the CPU reference. NaN propagates through every function.
#include <math.h>

namespace hal::ptx {

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

// The same sigmoid, silu and gelu_tanh with 1 / (1 + e) as rcp.approx.f32
// (MUFU.RCP, at most 1 ulp, subnormal results kept) instead of the IEEE
// division's refinement and slow-path check: sigmoid stays within the
// 4 ulp docs/accuracy.md states for it (expf's 2, the add's 1/2, 1), silu and
// gelu_tanh within their bounds. Used by the 16-bit packed elementwise kernels
// only (never run: HAL_GPU_UNVERIFIED=1); the verified kernels keep the above.
__device__ __forceinline__ float rcp_approx(float x) {
  float r;
  asm("rcp.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float sigmoid_rcp(float x) { return rcp_approx(1.0f + expf(-x)); }
__device__ __forceinline__ float silu_rcp(float x) { return x * sigmoid_rcp(x); }
__device__ __forceinline__ float gelu_tanh_rcp(float x) {
  const float a = 1.59576912160573071176f * (0.044715f * (x * x) * x + x);
  return x * sigmoid_rcp(a);
}

// gelu through 1 + erf (PyTorch's form) instead of erfc: erff is about 29
// instructions, erfcf about 52, which made the 16-bit gelu issue-bound. The
// sum cancels in the negative tail (x below about -5 gives -0 where erfc
// keeps a tiny negative value), an absolute error of a few eps32 |x|: what
// docs/accuracy.md's gelu bound, 4 eps32 (|ref| + |x|), allows for exactly
// this form. Packed 16-bit elementwise kernels only (never run).
__device__ __forceinline__ float gelu_erf_sum(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f)); }

// Mirrors hal::Activation (hal/op.h): none=0, relu=1, gelu_tanh=2, silu=3.
enum class ActivationKind : int { none = 0, relu = 1, gelu_tanh = 2, silu = 3 };

__device__ __forceinline__ float apply_activation(ActivationKind a, float x) {
  switch (a) {
    case ActivationKind::none: return x;
    case ActivationKind::relu: return relu(x);
    case ActivationKind::gelu_tanh: return gelu_tanh(x);
    case ActivationKind::silu: return silu(x);
  }
  return x;
}

}  // namespace hal::ptx
