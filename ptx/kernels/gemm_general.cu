// General GEMM: any strides (transposed, broadcast, padded views), A/B in
// f32/f16/bf16, C in f32/f16/bf16, batched. The correct-for-every-call
// fallback behind the tensor-core paths.
//
// 64x64 output tile per 256-thread block, K in steps of 16 staged through
// shared memory as fp32; each thread owns a 4x4 grid of outputs spaced 16
// apart (conflict-free shared reads). Every output is accumulated in k order
// with fmaf, so results are deterministic.
#include "ptx/element.cuh"
#include "ptx/kernels/gemm_epilogue.cuh"
#include "kernel_params/gemm.h"

namespace {
constexpr int kTile = 64, kTileK = 16, kThreads = 256;
}

using namespace hal::ptx;
using namespace hal::kernel_params;

extern "C" __global__ void __launch_bounds__(kThreads) hal_gemm_general(GemmParams p) {
  __shared__ float As[kTileK][kTile + 1];
  __shared__ float Bs[kTileK][kTile + 1];
  const ElemType t = static_cast<ElemType>(p.ab_type);
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int64_t m_tiles = (p.m + kTile - 1) / kTile;

  for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z) {
    for (int64_t mt = blockIdx.y; mt < m_tiles; mt += gridDim.y) {
      const int64_t m0 = mt * kTile, n0 = static_cast<int64_t>(blockIdx.x) * kTile;
      const int64_t a_base = z * p.a_batch_stride, b_base = z * p.b_batch_stride;
      float acc[4][4] = {};
      for (int64_t k0 = 0; k0 < p.k; k0 += kTileK) {
#pragma unroll
        for (int r = 0; r < (kTile * kTileK) / kThreads; ++r) {
          const int e = tid + r * kThreads;
          const int mm = e % kTile, kk = e / kTile;
          const int64_t gm = m0 + mm, gn = n0 + mm, gk = k0 + kk;
          As[kk][mm] = (gm < p.m && gk < p.k) ? load_as_float(p.a, t, a_base + gm * p.a_m_stride + gk * p.a_k_stride) : 0.0f;
          Bs[kk][mm] = (gn < p.n && gk < p.k) ? load_as_float(p.b, t, b_base + gk * p.b_k_stride + gn * p.b_n_stride) : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < kTileK; ++kk) {
          float a[4], b[4];
#pragma unroll
          for (int i = 0; i < 4; ++i) a[i] = As[kk][ty + 16 * i];
#pragma unroll
          for (int j = 0; j < 4; ++j) b[j] = Bs[kk][tx + 16 * j];
#pragma unroll
          for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int64_t gm = m0 + ty + 16 * i;
        if (gm >= p.m) continue;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int64_t gn = n0 + tx + 16 * j;
          if (gn < p.n) gemm_store(p, z * p.c_batch_stride + gm * p.c_m_stride + gn * p.c_n_stride, gn, acc[i][j]);
        }
      }
    }
  }
}
