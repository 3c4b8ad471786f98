#pragma once
// A gemm call resolved into logical matrices: op(A) is M x K, op(B) is K x N,
// C is M x N, each with its own batch / row / column strides in elements, so
// transposes, strided views and batch broadcasting are all just strides.
#include <cstdint>

#include "hal/op.h"

namespace hal::cpu_ref {

struct GemmMatrix {
  const void* data = nullptr;  // Tensor::data; element indices include the view's offset
  DType dtype = DType::f32;
  std::int64_t offset = 0;
  std::int64_t batch_stride = 0;  // 0 broadcasts over the batch
  std::int64_t row_stride = 0;
  std::int64_t col_stride = 0;

  std::int64_t index(std::int64_t batch, std::int64_t row, std::int64_t col) const {
    return offset + batch * batch_stride + row * row_stride + col * col_stride;
  }
};

struct GemmProblem {
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  GemmMatrix a, b, c;   // op(A), op(B), C (C's data is written)
  bool has_bias = false;
  GemmMatrix bias;      // row vector [N] (row 0 only)
  float alpha = 1.0f, beta = 0.0f;
  Activation activation = Activation::none;
};

// Resolves a validated call. Re-checks the shape relations it relies on, so a
// call that bypassed ops/ validation throws instead of reading out of bounds.
GemmProblem resolve_gemm(const GemmCall& call);

}  // namespace hal::cpu_ref
