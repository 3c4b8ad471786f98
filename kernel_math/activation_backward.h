#pragma once
// Derivatives of the activations in fp32 for the backward kernels of CUDA
// (ptx/activation_backward.cuh) and HIP (hip/activation_backward.h), formula
// for formula those of cpu_ref/unary_backward.cpp (the forms that do not
// cancel): sigmoid' = s(x) s(-x); tanh' = 4 s(2x) s(-2x); silu' = s(x) (1 +
// x s(-x)); gelu' = Phi(x) + x phi(x); gelu_tanh' = s(a) + x s(a) s(-a) a'.
// relu is a selection and is done by the caller (threshold_backward).
#include <math.h>

#include "kernel_math/activation.h"

namespace hal::kernel_math {

__device__ __forceinline__ float silu_derivative(float x) { return sigmoid(x) * (1.0f + x * sigmoid(-x)); }

// op: hal::UnaryKind numbering (exp 2, tanh 6, sigmoid 7, gelu 9, gelu_tanh 10, silu 11).
__device__ __forceinline__ float unary_derivative(int op, float x) {
  switch (op) {
    case 2: return expf(x);
    case 6: return 4.0f * (sigmoid(2.0f * x) * sigmoid(-2.0f * x));
    case 7: return sigmoid(x) * sigmoid(-x);
    case 9: {
      const float cdf = 0.5f * erfcf(-x * 0.70710678118654752440f);
      const float pdf = 0.39894228040143267794f * expf(-0.5f * x * x);
      return cdf + x * pdf;
    }
    case 10: {
      const float k = 1.59576912160573071176f, c = 0.044715f;
      const float a = k * (c * (x * x) * x + x);
      const float da = k * (1.0f + 3.0f * c * (x * x));
      const float s = sigmoid(a), ssm = s * sigmoid(-a);
      // Past |x| ~ 1e12 a' overflows while s s(-a) is already 0: the term is 0, not 0 * inf.
      return ssm == 0.0f ? s : s + x * ssm * da;
    }
    case 11: return silu_derivative(x);
  }
  return x;
}

// dx = dy * f'(x); relu: dy where x > 0, else 0 (NaN x gives 0, as PyTorch).
__device__ __forceinline__ float unary_backward_op(int op, float x, float dy) {
  if (op == 8) return x > 0.0f ? dy : 0.0f;
  return dy * unary_derivative(op, x);
}

}  // namespace hal::kernel_math
