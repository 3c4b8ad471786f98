#pragma once
// Scalar activations in fp32 for every CUDA kernel (unary ops, swiglu, the
// GEMM epilogue). relu, sigmoid, silu, gelu_erf and gelu_tanh are written
// once for CUDA and HIP in kernel_math/activation.h (precise math, kernels
// built WITHOUT --use_fast_math); this header adds the CUDA-only forms below
// (inline PTX rcp.approx) and the GEMM epilogue's dispatch.
#include <math.h>

#include "kernel_math/activation.h"

namespace hal::ptx {

using kernel_math::gelu_erf;
using kernel_math::gelu_tanh;
using kernel_math::relu;
using kernel_math::sigmoid;
using kernel_math::silu;

// The same sigmoid, silu and gelu_tanh with 1 / (1 + e) as rcp.approx.f32
// (MUFU.RCP, at most 1 ulp, subnormal results kept) instead of the IEEE
// division's refinement and slow-path check: sigmoid stays within the
// 4 ulp docs/accuracy.md states for it (expf's 2, the add's 1/2, 1), silu and
// gelu_tanh within their bounds. Used by the 16-bit packed elementwise kernels
// only (never run: HAL_GPU_UNVERIFIED=1); the verified kernels keep kernel_math's.
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
