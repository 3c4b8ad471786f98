#pragma once
// Parameters and work decomposition of the decode GEMM (small M, weights
// streamed once): ptx/kernels/gemm_decode.cu and hip/kernels/gemm_decode.hip;
// planned by backends/gpu/gemm_decode_plan.h, which also emulates the
// decomposition on the host (tests/unit/gpu_gemm_decode_plan_test.cpp).
//
//   pass 1 (hal_gemm_decode_*): one warp / wave per unit = (16 rows of N,
//     one K split, one batch); it multiplies op(A)[m, k-range] by those 16
//     columns of op(B) on the tensor cores / matrix cores and writes its fp32
//     partial sums to partial[split][z][m][n];
//   pass 2 (hal_gemm_decode_reduce): one thread per output sums the splits in
//     order 0, 1, ..., splits-1 (fixed, whatever order the units ran in) and
//     applies the GEMM epilogue (alpha, beta*C, bias, activation) with one
//     rounding to C's dtype.
//
// Operands: op(A) [m, k] and op(B) [k, n] both contiguous along K (B is a
// weight stored [N, K]), 16-bit, 16-byte aligned rows: every global load of
// pass 1 is 16 bytes (8 K-values). K is walked in blocks of kDecodeBlockK;
// inside a block, lane group q loads K-values [8q, 8q + 8) and feeds them to
// the matrix instruction's K slots in a fixed permuted order (a dot product
// does not care which slot a K-value goes to, as long as both operands agree).
#include <stdint.h>

#include "hal/host_device.h"
#include "kernel_params/gemm.h"

namespace hal::kernel_params {

inline constexpr int kDecodeBlockK = 32;       // K-values per unit step (4 lane groups x 8)
inline constexpr int kDecodeTileN = 16;        // rows of N per unit (the instruction's M side)
inline constexpr int kDecodeWarpsPerCta = 4;   // units per CTA / workgroup
inline constexpr int kDecodeMaxM = 64;         // larger M: the ordinary GEMM kernels
inline constexpr int kDecodeReduceThreads = 256;

struct GemmDecodeParams {
  const void* a;  // op(A)(z, m, k) at a[z*a_batch_stride + m*a_m_stride + k]
  const void* b;  // op(B)(z, k, n) at b[z*b_batch_stride + n*b_n_stride + k]
  float* partial; // [splits][batch][m][n], fully written by pass 1
  int64_t m, n, k, batch;
  int64_t a_batch_stride, a_m_stride;
  int64_t b_batch_stride, b_n_stride;
  int64_t n_tiles;      // ceil(n / kDecodeTileN)
  int64_t splits;       // K splits
  int64_t k_per_split;  // a multiple of kDecodeBlockK; the last split may be shorter
  int64_t units;        // n_tiles * splits * batch
};

struct GemmDecodeReduceParams {
  GemmParams g;  // C, bias, alpha, beta, activation, strides (as for the other GEMM kernels)
  const float* partial;
  int64_t splits;
};

// Unit u -> (n tile, split, batch): consecutive units are neighbouring
// N tiles of one split, so a CTA's warps stream adjacent weight rows.
struct DecodeUnit {
  int64_t n_tile, split, z;
};
HAL_HOST_DEVICE inline DecodeUnit decode_unit(int64_t u, int64_t n_tiles, int64_t splits) {
  DecodeUnit r;
  r.n_tile = u % n_tiles;
  const int64_t rest = u / n_tiles;
  r.split = rest % splits;
  r.z = rest / splits;
  return r;
}

// Offset of partial(split, z, m, n).
HAL_HOST_DEVICE inline int64_t decode_partial_index(int64_t split, int64_t z, int64_t m, int64_t n, int64_t batch,
                                                    int64_t m_total, int64_t n_total) {
  return ((split * batch + z) * m_total + m) * n_total + n;
}

// CUDA (mma.sync m16n8k16, 32 lanes): lane t, g = t / 4, q = t % 4 loads
// K-values [k0 + 8q, k0 + 8q + 8) of weight rows n0 + g and n0 + g + 8 and of
// activation row m0 + g of each 8-row M tile. Its accumulator c[r] of M tile
// j is output (n0 + g + 8*(r/2), m0 + 8j + 2q + r%2).
HAL_HOST_DEVICE inline int decode_cuda_k_offset(int lane) { return 8 * (lane % 4); }
HAL_HOST_DEVICE inline int decode_cuda_row(int lane) { return lane / 4; }
HAL_HOST_DEVICE inline int decode_cuda_acc_n(int lane, int r) { return lane / 4 + 8 * (r / 2); }
HAL_HOST_DEVICE inline int decode_cuda_acc_m(int lane, int r) { return 2 * (lane % 4) + r % 2; }
inline constexpr int kDecodeCudaTileM = 8;

// HIP (v_mfma_f32_16x16x16, 64 lanes): lane l, q = l / 16 loads K-values
// [k0 + 8q, k0 + 8q + 8) of weight row n0 + l%16 and activation row m0 + l%16
// of each 16-row M tile; its accumulator r is output (n0 + 4q + r, m0 + l%16).
HAL_HOST_DEVICE inline int decode_hip_k_offset(int lane) { return 8 * (lane / 16); }
HAL_HOST_DEVICE inline int decode_hip_row(int lane) { return lane % 16; }
HAL_HOST_DEVICE inline int decode_hip_acc_n(int lane, int r) { return 4 * (lane / 16) + r; }
HAL_HOST_DEVICE inline int decode_hip_acc_m(int lane) { return lane % 16; }
inline constexpr int kDecodeHipTileM = 16;

}  // namespace hal::kernel_params
