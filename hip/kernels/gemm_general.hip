// The general GEMM: any dtype (f32 / f16 / bf16), any strides, any shape.
// 16x16 threads per 16x16 output tile; A and B tiles staged in LDS as fp32
// (converted once on load), fp32 FMA accumulation in K order. The fallback
// when the MFMA kernel does not apply (f32 operands).
#include <hip/hip_runtime.h>

#include "gemm_epilogue.h"
#include "gemm_geometry.h"

using namespace hal::hip;
using namespace hal::hip::kernels;
using namespace hal::kernel_params;

extern "C" __global__ __launch_bounds__(256) void gemm_general(GemmParams p) {
  constexpr int T = GemmGeneralTile::kTile;
  __shared__ float as[T][T + 1];  // +1: column reads hit different banks
  __shared__ float bs[T][T + 1];
  const int tx = threadIdx.x % T, ty = threadIdx.x / T;
  const int64_t z = blockIdx.z;
  const int64_t row = static_cast<int64_t>(blockIdx.y) * T + ty;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * T + tx;
  const int64_t a0 = z * p.a_batch_stride, b0 = z * p.b_batch_stride;
  float acc = 0.0f;
  for (int64_t k0 = 0; k0 < p.k; k0 += T) {
    const int64_t ka = k0 + tx, kb = k0 + ty;
    as[ty][tx] = (row < p.m && ka < p.k) ? load_f32(p.a, p.ab_type, a0 + row * p.a_m_stride + ka * p.a_k_stride) : 0.0f;
    bs[ty][tx] = (kb < p.k && col < p.n) ? load_f32(p.b, p.ab_type, b0 + kb * p.b_k_stride + col * p.b_n_stride) : 0.0f;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < T; ++kk) acc = fmaf(as[ty][kk], bs[kk][tx], acc);
    __syncthreads();
  }
  if (row < p.m && col < p.n) gemm_store(p, z, row, col, acc);
}
