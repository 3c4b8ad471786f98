#pragma once
// The weight stream shared by the CUDA decode GEMMs' pass 1 (gemm_decode.cu,
// 16-bit; gemm_fp8_decode.cu, fp8): a warp's unit (16 weight rows, one K
// split), each lane's two weight rows g and g + 8 and its activation row g of
// every 8-row M tile, and the loop body that loads kSteps 16-byte chunks of
// each before any of them is multiplied (several KiB in flight per warp).
// Weights: ld.global.nc with L2 evict-first (read once); activations: the
// read-only path with L1 allocation (every warp of the SM reads the same
// rows). A lane's chunk is loaded whole or replaced by zeros: the plans keep
// K a multiple of the chunk's K-values, so a chunk is all in or all out.
// Decomposition and lane maps: kernel_params/gemm_decode.h.
#include <stdint.h>

#include "kernel_params/gemm_decode.h"
#include "ptx/ld_st.cuh"

namespace hal::ptx::decode {

using kernel_params::DecodeUnit;
using kernel_params::kDecodeCudaTileM;
using kernel_params::kDecodeTileN;

// The warp's unit and its K range [k_begin, k_end).
struct UnitRange {
  DecodeUnit unit;
  int64_t n0, k_begin, k_end;
};

// Unit u's range (u < units: the caller returns whole warps past the end).
__device__ __forceinline__ UnitRange unit_range(int64_t u, int64_t n_tiles, int64_t splits, int64_t k,
                                                int64_t k_per_split) {
  const DecodeUnit unit = kernel_params::decode_unit(u, n_tiles, splits);
  const int64_t k_begin = unit.split * k_per_split;
  return {unit, unit.n_tile * kDecodeTileN, k_begin, min(k, k_begin + k_per_split)};
}

// One lane's read pointers: weight rows n0 + row and n0 + row + 8 (clamped to
// row 0 past N, then never read), activation row `row` of M tile 0 (M tile j
// at xp + j * x_tile: one pointer and one stride, not kMT pointers, fewer
// live registers at M = 64), all offset by the lane's K offset k_off inside a
// chunk of K.
template <class T>
struct LaneStream {
  const T* w0p;
  const T* w1p;
  const T* xp;
  int64_t x_tile;
  int64_t x_rows;  // M tile j's row exists when 8j < x_rows
  bool w0_ok, w1_ok;
  int k_off;
};

template <class T, class Params>
__device__ __forceinline__ LaneStream<T> lane_stream(const Params& p, const T* b_base, const T* a_base, int64_t n0,
                                                     int row, int k_off) {
  const bool w0_ok = n0 + row < p.n, w1_ok = n0 + row + 8 < p.n;
  const T* w0p = b_base + (w0_ok ? (n0 + row) * p.b_n_stride : 0) + k_off;
  const T* w1p = b_base + (w1_ok ? (n0 + row + 8) * p.b_n_stride : 0) + k_off;
  const T* xp = a_base + (row < p.m ? row * p.a_m_stride : 0) + k_off;
  return {w0p, w1p, xp, int64_t{kDecodeCudaTileM} * p.a_m_stride, p.m - row, w0_ok, w1_ok, k_off};
}

__device__ __forceinline__ Bits128 ld_activation(const void* p) {
  const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
  return Bits128{v.x, v.y, v.z, v.w};
}

// Chunks s = 0..kSteps-1 at K offsets k0 + kStepK * s: two of weights and
// kMT of activations each. ls is taken by value: taken by reference, the
// kernels' address arithmetic came out different (more instructions in the
// loop); by value their code is the same as with the loop in each kernel.
template <int kSteps, int kMT, int kStepK, class T>
__device__ __forceinline__ void load_steps(Bits128 (&w0)[kSteps], Bits128 (&w1)[kSteps], Bits128 (&x)[kSteps][kMT],
                                           const LaneStream<T> ls, int64_t k0, int64_t k_end,
                                           L2Policy stream) {
  const Bits128 zero{0u, 0u, 0u, 0u};
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    const int64_t kk = k0 + int64_t{kStepK} * s;
    const bool k_ok = kk + ls.k_off < k_end;
    w0[s] = (k_ok && ls.w0_ok) ? ld_nc_v4(ls.w0p + kk, stream) : zero;
    w1[s] = (k_ok && ls.w1_ok) ? ld_nc_v4(ls.w1p + kk, stream) : zero;
#pragma unroll
    for (int j = 0; j < kMT; ++j)
      x[s][j] = (k_ok && int64_t{kDecodeCudaTileM} * j < ls.x_rows) ? ld_activation(ls.xp + j * ls.x_tile + kk) : zero;
  }
}

// The lane's fp32 sums acc[j][r] (accumulator r of M tile j) to
// p.partial[split][z][m][n] where the lane map puts them, inside [p.m, p.n).
// Params: either kernel's; p.partial, p.m and p.n are read here, where the
// loop written in each kernel read them (passed as values, nvcc loaded them
// earlier and the fp8 kernel's code changed).
template <int kMT, class Params>
__device__ __forceinline__ void store_partial(const Params& p, const float (&acc)[kMT][4], int lane, int64_t n0,
                                              int64_t split, int64_t z, int64_t batch) {
#pragma unroll
  for (int j = 0; j < kMT; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int64_t n = n0 + kernel_params::decode_cuda_acc_n(lane, r);
      const int64_t m = int64_t{kDecodeCudaTileM} * j + kernel_params::decode_cuda_acc_m(lane, r);
      if (n < p.n && m < p.m) p.partial[kernel_params::decode_partial_index(split, z, m, n, batch, p.m, p.n)] = acc[j][r];
    }
}

}  // namespace hal::ptx::decode
