#pragma once
// Parameters of the GEMM kernels (gemm_general.cu, gemm_sm80.cu, and inside
// GemmSm90aParams gemm_sm90a.cu).
// Plain host/device header: no CUDA includes.
//
//   C[z] = act(alpha * op(A)[z] @ op(B)[z] + beta * C[z] + bias)
//
// Operands are described by the address of their first element and strides
// in ELEMENTS of the logical (already transposed) matrices: element (m, k) of
// op(A) in batch z is a[z*a_batch_stride + m*a_m_stride + k*a_k_stride], and
// so on. A batch stride of 0 broadcasts. When beta == 0, C is not read.
#include <stdint.h>

namespace hal::ptx {

// GemmParams::epilogue. Plain: beta == 0, no bias, no activation, C f32, f16
// or bf16 with unit column stride, and C(z, m, 0) aligned to two elements
// for every z and m (base, row and batch strides), so column pairs (even
// columns) are stored as one access. General: everything else.
constexpr uint8_t kGemmEpilogueGeneral = 0, kGemmEpiloguePlain = 1;
// The general form stages each warp's 16 x 32 blocks in shared memory: rows
// of 32 + 4 floats, so the fragment writes spread over the banks (at most
// two lanes per bank); kGemmWarpStageBytes per warp.
constexpr int kGemmStageLd = 36;
constexpr int kGemmWarpStageBytes = 16 * kGemmStageLd * 4;

struct GemmParams {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  const void* bias = nullptr;  // [n] in C's dtype; nullptr: no bias
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int64_t a_batch_stride = 0, a_m_stride = 0, a_k_stride = 0;
  int64_t b_batch_stride = 0, b_k_stride = 0, b_n_stride = 0;
  int64_t c_batch_stride = 0, c_m_stride = 0, c_n_stride = 0;
  int64_t bias_stride = 1;
  uint8_t ab_type = 0;  // hal::DType numbering: f32 / f16 / bf16
  uint8_t c_type = 0;
  int32_t activation = 0;  // hal::Activation numbering (ptx/activation.cuh)
  float alpha = 1.0f, beta = 0.0f;
  // Tensor-core kernels only: whether op(A) is contiguous along K (else along
  // M) and op(B) along K (else along N).
  uint8_t a_k_major = 1, b_k_major = 0;
  uint8_t epilogue = kGemmEpilogueGeneral;  // tensor-core kernels (gemm_epilogue.cuh)
};

}  // namespace hal::ptx
