#pragma once
// Parameters of the GEMM kernels (ptx/kernels/gemm_general.cu, gemm_sm80.cu,
// and inside GemmSm90aParams gemm_sm90a.cu; hip/kernels/gemm_general.hip,
// gemm_mfma.hip); packed by backends/gpu/gemm_args.h.
//
//   C = alpha * op(A) op(B) + beta * C (+ bias[n]) (activation), per batch.
//
// Operands are the address of their first element and strides in ELEMENTS of
// the logical (already transposed) matrices: element (m, k) of op(A) in batch
// z is a[z*a_batch_stride + m*a_m_stride + k*a_k_stride], and so on. A batch
// stride of 0 broadcasts. When beta == 0, C is not read.
#include <stdint.h>

namespace hal::kernel_params {

// GemmParams::epilogue. Plain: beta == 0, no bias, no activation, C f32, f16
// or bf16 with unit column stride, and C(z, m, 0) aligned to two elements
// for every z and m (base, row and batch strides), so column pairs (even
// columns) are stored as one access. General: everything else.
inline constexpr int32_t kGemmEpilogueGeneral = 0, kGemmEpiloguePlain = 1;

struct GemmParams {
  const void* a;
  const void* b;
  void* c;
  const void* bias;  // [n] in C's dtype; nullptr: no bias
  int64_t m, n, k, batch;
  int64_t a_batch_stride, a_m_stride, a_k_stride;
  int64_t b_batch_stride, b_k_stride, b_n_stride;
  int64_t c_batch_stride, c_m_stride, c_n_stride;
  int64_t bias_stride;
  int32_t ab_type;     // hal::DType numbering: f32 / f16 / bf16
  int32_t c_type;
  int32_t activation;  // hal::Activation numbering
  float alpha, beta;
  // Tensor-core / MFMA kernels: op(A) is read as contiguous along K (else
  // along M), op(B) along K (else along N). K-contiguity by default; the CUDA
  // launcher sets the layout its sm_80 kernel can load (cuda_gemm.cpp).
  int32_t a_k_major, b_k_major;
  // op(A) / op(B) can be read 8 K-values (16 bytes) at a time: 16-bit,
  // K-contiguous, 16-byte aligned base, row and batch strides and K multiples
  // of 8 (the HIP MFMA kernel's global loads; the CUDA kernels only run on
  // operands their launcher checked).
  int32_t a_vec8, b_vec8;
  // kGemmEpiloguePlain or kGemmEpilogueGeneral: the form of the CUDA
  // tensor-core kernels' epilogue (ptx/kernels/gemm_epilogue.cuh); the HIP
  // epilogue stores element by element and does not read it.
  int32_t epilogue;
};

}  // namespace hal::kernel_params
