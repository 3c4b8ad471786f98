#pragma once
// The fused GEMM epilogue shared by every GEMM kernel: one fp32 value in, one
// rounding to C's dtype out.
//
// Why two forms. gemm_store handles every C dtype, beta, bias and activation
// behind run-time switches; inlined once per accumulator register (64 per
// thread in the tensor-core kernels) it made each of those kernels about
// 19,000 instructions, 300 KB of code that the instruction caches cannot
// hold. On the H200 every tile then paid ~65 us in its epilogue, more than
// its whole main loop at K = 4096 (bench/results/h200-2026-11-30-884a693).
// So the tensor-core kernels write their accumulators in 16 x 32 blocks of
// the mma layout (gemm_epilogue_warp below), either
//   - plain (the host sets GemmParams::epilogue when beta == 0, no bias, no
//     activation, C f32/f16/bf16 with unit column stride and pair-aligned
//     rows): alpha * acc rounded and stored two columns at a time, a few
//     instructions per pair; or
//   - general: staged through a small per-warp shared buffer and stored by
//     one rolled loop that calls gemm_store, so its switches exist once.
#include "kernel_params/gemm.h"
#include "ptx/activation.cuh"
#include "ptx/element.cuh"
#include "ptx/kernels/gemm_geometry.h"

namespace hal::ptx {

using kernel_params::GemmParams;
using kernel_params::kGemmEpilogueGeneral;
using kernel_params::kGemmEpiloguePlain;

// c_index: element offset of C(z, m, n); n: the column (for the bias).
__device__ __forceinline__ void gemm_store(const GemmParams& p, int64_t c_index, int64_t n, float acc) {
  const ElemType ct = static_cast<ElemType>(p.c_type);
  float v = p.alpha * acc;
  if (p.beta != 0.0f) v += p.beta * load_as_float(p.c, ct, c_index);
  if (p.bias != nullptr) v += load_as_float(p.bias, ct, n * p.bias_stride);
  v = apply_activation(static_cast<ActivationKind>(p.activation), v);
  store_from_float(p.c, ct, c_index, v);
}

// One warp's 16 x 32 block of C in the mma.sync / wgmma accumulator layout:
// lane l holds rows l/4 and l/4 + 8, columns 8j + 2(l%4) + {0, 1} of column
// group j: v[j][2h + e] = C[row0 + l/4 + 8h][col0 + 8j + 2(l%4) + e].
struct GemmBlock16x32 {
  float v[4][4];
  int64_t row0, col0;
};

// Two adjacent elements (the first pair-aligned) or one, rounded once.
__device__ __forceinline__ void store_pair(float* at, float a, float b) { *reinterpret_cast<float2*>(at) = make_float2(a, b); }
__device__ __forceinline__ void store_pair(__half* at, float a, float b) { *reinterpret_cast<__half2*>(at) = __floats2half2_rn(a, b); }
__device__ __forceinline__ void store_pair(__nv_bfloat16* at, float a, float b) {
  *reinterpret_cast<__nv_bfloat162*>(at) = __floats2bfloat162_rn(a, b);
}
__device__ __forceinline__ void store_one(float* at, float a) { *at = a; }
__device__ __forceinline__ void store_one(__half* at, float a) { *at = __float2half_rn(a); }
__device__ __forceinline__ void store_one(__nv_bfloat16* at, float a) { *at = __float2bfloat16_rn(a); }

// Plain form: C's dtype T (float, __half, __nv_bfloat16), unit column stride.
template <class T>
struct GemmPlainC {
  T* c;
  int64_t ldc, m, n;
  float alpha;

  __device__ __forceinline__ GemmPlainC(const GemmParams& p, int64_t z)
      : c(static_cast<T*>(p.c) + z * p.c_batch_stride), ldc(p.c_m_stride), m(p.m), n(p.n), alpha(p.alpha) {}

  __device__ __forceinline__ void pair(int64_t row, int64_t col, float v0, float v1) const {
    if (row >= m || col >= n) return;
    T* at = c + row * ldc + col;
    if (col + 1 < n) store_pair(at, alpha * v0, alpha * v1);
    else store_one(at, alpha * v0);
  }

  __device__ __forceinline__ void block(const GemmBlock16x32& b, int lane) const {
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        pair(b.row0 + lane / 4 + 8 * h, b.col0 + 8 * j + 2 * (lane % 4), b.v[j][2 * h], b.v[j][2 * h + 1]);
  }
};

// General form of one block: the warp stages it in `buf` (kGemmWarpStageBytes,
// the warp's own), then stores row by row, lane = column, through gemm_store.
__device__ __forceinline__ void gemm_store_block_staged(const GemmParams& p, int64_t z, float* buf,
                                                        const GemmBlock16x32& b, int lane) {
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) buf[(lane / 4 + 8 * (r / 2)) * kGemmStageLd + 8 * j + 2 * (lane % 4) + r % 2] = b.v[j][r];
  __syncwarp();
  const int64_t col = b.col0 + lane;
#pragma unroll 1
  for (int r = 0; r < 16; ++r) {
    const int64_t row = b.row0 + r;
    if (row < p.m && col < p.n)
      gemm_store(p, z * p.c_batch_stride + row * p.c_m_stride + col * p.c_n_stride, col, buf[r * kGemmStageLd + lane]);
  }
  __syncwarp();  // the buffer is reused by the next block
}

// Writes a warp's kBlocks blocks of C: block_at(i) returns block i (i a
// compile-time constant after unrolling, so the accumulators stay in
// registers). `stage` is the warp's kGemmWarpStageBytes of shared memory,
// used by the general form only.
template <int kBlocks, class BlockAt>
__device__ __forceinline__ void gemm_epilogue_warp(const GemmParams& p, int64_t z, float* stage, int lane,
                                                   BlockAt block_at) {
  const auto plain = [&](auto c) {
#pragma unroll
    for (int i = 0; i < kBlocks; ++i) c.block(block_at(i), lane);
  };
  if (p.epilogue == kGemmEpiloguePlain) {
    switch (static_cast<ElemType>(p.c_type)) {
      case ElemType::f32: plain(GemmPlainC<float>(p, z)); return;
      case ElemType::f16: plain(GemmPlainC<__half>(p, z)); return;
      case ElemType::bf16: plain(GemmPlainC<__nv_bfloat16>(p, z)); return;
      default: break;  // the host never sets plain for another dtype
    }
  }
#pragma unroll
  for (int i = 0; i < kBlocks; ++i) gemm_store_block_staged(p, z, stage, block_at(i), lane);
}

}  // namespace hal::ptx
