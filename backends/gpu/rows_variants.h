#pragma once
// The 16-bit "packed" kernel variants of issue 24 (softmax, layernorm /
// rmsnorm, unary, swiglu, binary on CUDA; unary, swiglu on HIP) and the layout rewrite they rely
// on, decided on the host. Host-only C++, unit-tested on the CPU
// (tests/unit/gpu_rows_variants_test.cpp).
//
// The variants have never run on a GPU: the launchers take them only
// with HAL_GPU_UNVERIFIED=1 (backends/gpu/unverified.h) and keep the verified
// kernels otherwise; every function here answers nullptr where a variant
// does not apply, and the launcher then runs the verified kernel.
#include <cstdint>

#include "hal/dtype.h"
#include "kernel_params/rows.h"

namespace hal::gpu {

// L with adjacent outer dims merged where both x's and y's strides let one
// index walk them (stride[i] == stride[i+1] * extent[i+1]) and extent-1 dims
// dropped, so the kernels' row offsets need fewer divisions (a [B, S, D]
// tensor's rows become one outer dim). keep_innermost (causal softmax, whose
// mask reads the innermost outer coordinate): that dim stays on its own.
// The rows' addresses, their order and the vector flags are unchanged.
kernel_params::RowsLayout merge_outer_dims(kernel_params::RowsLayout L, bool keep_innermost);

// The packed softmax for a rows_reg launch (x_type == y_type, f16 or bf16;
// threads_per_row 64, 128 or 256): hal_softmax_rows_reg16_<dtype>[_causal]_t<T>.
const char* cuda_softmax_reg16_kernel(const kernel_params::SoftmaxParams& p);
// The packed norm for a rows_reg launch: x, y, weight (and bias) of one
// 16-bit dtype, weight (and bias) 16-byte chunked: hal_norm_rows_reg16_<dtype>_t<T>.
const char* cuda_norm_reg16_kernel(const kernel_params::NormParams& p);
// The packed elementwise kernels (<family>_packed_<dtype>) for a vec16 call
// of dtype f16 / bf16.
enum class ElementwiseFamily { binary, unary, swiglu };
const char* cuda_elementwise_packed_kernel(ElementwiseFamily family, DType t, std::int32_t vec16);
// HIP's (hip/kernels/elementwise.hip): hal_unary_packed_<dtype>, hal_swiglu_packed_<dtype>
// (no binary variant: nullptr).
const char* hip_elementwise_packed_kernel(ElementwiseFamily family, DType t, std::int32_t vec16);

}  // namespace hal::gpu
