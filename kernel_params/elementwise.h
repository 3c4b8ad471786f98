#pragma once
// Parameters of binary, unary and swiglu (ptx/kernels/elementwise.cu,
// hip/kernels/elementwise.hip); packed by backends/gpu/elementwise_args.h.
//
// contiguous != 0: every operand is contiguous in y's shape (offset == i).
// vec16 != 0 (implies contiguous): every operand's first element is also
// 16-byte aligned, so 16-byte chunks (4 x f32, 8 x bf16, 16 x fp8 ...) may be
// moved, the last n % (16 / size) elements one by one. The HIP kernels branch
// on the flags; the CUDA launcher picks its *_contig_<dtype> kernels by vec16
// (f32/f16/bf16) and the strided kernel otherwise, which read no flag.
#include "kernel_params/strided.h"

namespace hal::kernel_params {

// y = a (op) b. op: hal::BinaryKind numbering (add, sub, mul, div, maximum,
// minimum); dtype: the same for a, b and y.
struct BinaryParams {
  const void* a;
  const void* b;
  void* y;
  int64_t n;  // elements of y
  int32_t op;
  int32_t dtype;
  int32_t contiguous;
  int32_t vec16;
  KernelShape shape;  // y's shape
  KernelStrides a_strides, b_strides, y_strides;  // a's and b's aligned to y's shape (broadcast: 0)
};

// y = f(x). op: hal::UnaryKind numbering (neg, abs, exp, log, sqrt, rsqrt,
// tanh, sigmoid, relu, gelu, gelu_tanh, silu).
struct UnaryParams {
  const void* x;
  void* y;
  int64_t n;
  int32_t op;
  int32_t dtype;
  int32_t contiguous;
  int32_t vec16;
  KernelShape shape;
  KernelStrides x_strides, y_strides;
};

// y = silu(gate) * up.
struct SwigluParams {
  const void* gate;
  const void* up;
  void* y;
  int64_t n;
  int32_t dtype;
  int32_t contiguous;
  int32_t vec16;
  int32_t pad_;
  KernelShape shape;
  KernelStrides gate_strides, up_strides, y_strides;
};

}  // namespace hal::kernel_params
