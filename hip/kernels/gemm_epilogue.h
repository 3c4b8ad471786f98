#pragma once
// The GEMM epilogue shared by both GEMM kernels:
//   c = act(alpha * acc + beta * c + bias[n]), rounded once to C's dtype.
#include "hip/activation.h"
#include "hip/element.h"
#include "kernel_params/gemm.h"

namespace hal::hip::kernels {

using kernel_params::GemmParams;

__device__ __forceinline__ void gemm_store(const GemmParams& p, int64_t z, int64_t row, int64_t col, float acc) {
  const int64_t off = z * p.c_batch_stride + row * p.c_m_stride + col * p.c_n_stride;
  float v = p.alpha * acc;
  if (p.beta != 0.0f) v += p.beta * load_f32(p.c, p.c_type, off);
  if (p.bias) v += load_f32(p.bias, p.c_type, col * p.bias_stride);
  store_f32(p.c, p.c_type, off, activate(p.activation, v));
}

}  // namespace hal::hip::kernels
