#pragma once
// Scalar activation functions shared by the unary ops and the gemm epilogue.
// T is float (fp32 compute) or double (the fp64 oracle).
#include <cmath>

#include "hal/op.h"

namespace hal::cpu_ref {

template <class T> T relu(T x) { return x > T(0) ? x : (x == x ? T(0) : x); }  // NaN propagates
template <class T> T sigmoid(T x) { return T(1) / (T(1) + std::exp(-x)); }
template <class T> T silu(T x) { return x * sigmoid(x); }
// erfc(-x/sqrt2) instead of 1+erf(x/sqrt2): no cancellation in the negative tail.
template <class T> T gelu_erf(T x) { return T(0.5) * x * std::erfc(-x * T(0.70710678118654752440)); }
// x (1 + tanh(u)) / 2 written as x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715
// x^3): 1 + tanh(u) cancels in the negative tail (to 0 in fp32 below x ~ -5),
// sigmoid(2u) does not. The vector kernels, CUDA and HIP use this form too.
template <class T> T gelu_tanh(T x) {
  const T a = T(1.59576912160573071176) * (T(0.044715) * (x * x) * x + x);  // 2 sqrt(2/pi) (...)
  return x * sigmoid(a);
}

template <class T> T apply_activation(Activation a, T x) {
  switch (a) {
    case Activation::none: return x;
    case Activation::relu: return relu(x);
    case Activation::gelu_tanh: return gelu_tanh(x);
    case Activation::silu: return silu(x);
  }
  return x;
}

}  // namespace hal::cpu_ref
