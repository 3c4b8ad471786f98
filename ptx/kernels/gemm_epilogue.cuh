#pragma once
// The fused GEMM epilogue shared by every GEMM kernel: one fp32 value in, one
// rounding to C's dtype out.
#include "ptx/activation.cuh"
#include "ptx/element.cuh"
#include "ptx/kernels/gemm_params.h"

namespace hal::ptx {

// c_index: element offset of C(z, m, n); n: the column (for the bias).
__device__ __forceinline__ void gemm_store(const GemmParams& p, int64_t c_index, int64_t n, float acc) {
  const ElemType ct = static_cast<ElemType>(p.c_type);
  float v = p.alpha * acc;
  if (p.beta != 0.0f) v += p.beta * load_as_float(p.c, ct, c_index);
  if (p.bias != nullptr) v += load_as_float(p.bias, ct, n * p.bias_stride);
  v = apply_activation(static_cast<ActivationKind>(p.activation), v);
  store_from_float(p.c, ct, c_index, v);
}

}  // namespace hal::ptx
