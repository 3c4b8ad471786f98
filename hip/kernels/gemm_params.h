#pragma once
// Parameters of the GEMM kernels (gemm_general.hip, gemm_mfma.hip).
// Plain host/device header: no HIP include.
//
//   C[z] = act(alpha * op(A)[z] @ op(B)[z] + beta * C[z] + bias)
//
// Operands are the address of their first element and strides in ELEMENTS of
// the logical (already transposed) matrices: element (m, k) of op(A) in batch
// z is a[z*a_batch_stride + m*a_m_stride + k*a_k_stride], and so on. A batch
// stride of 0 broadcasts. When beta == 0, C is not read.
#include <stdint.h>

namespace hal::hip::kernels {

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
  // MFMA kernel only: op(A) is contiguous along K (else along M), op(B) along
  // K (else along N); picks the coalesced global->LDS mapping, not correctness.
  int32_t a_k_major, b_k_major;
  // MFMA kernel only: op(A) / op(B) can be read 8 K-values (16 bytes) at a
  // time: K-contiguous, 16-byte aligned base, row stride and K multiples of 8.
  int32_t a_vec8, b_vec8;
  int32_t pad_;
};

// Tile configuration of gemm_mfma.hip, shared with its launcher.
struct GemmMfmaTile {
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 32;
  static constexpr int kThreads = 256;  // 4 wave64s, each a 32x32 quarter of the tile
  static constexpr int kLdsPad = 4;     // halfs added per LDS row (bank-conflict padding)
};

// Tile of gemm_general.hip: 16x16 threads, one output each.
struct GemmGeneralTile {
  static constexpr int kTile = 16;
};

}  // namespace hal::hip::kernels
