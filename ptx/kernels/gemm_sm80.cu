// Tensor-core GEMM for sm_80+ (also the sm_90 path until the wgmma kernel
// exists): f16/bf16 A and B, fp32 accumulation, fused epilogue.
//
// Block tile 128x128x32, 8 warps as 2 (M) x 4 (N), warp tile 64x32 =
// 4 x 4 mma.sync m16n8k16. Operands stream through a 4-stage cp.async ring in
// shared memory; fragments are read with ldmatrix (.trans for an operand whose
// rows run along M or N instead of K).
//
// Shared layouts (one stage, per operand, 8 KiB):
//   K-major  tile [128 rows][32 k]: 64-byte rows of four 16-byte chunks; chunk c
//            of row r is stored at chunk c ^ ((r >> 1) & 3), so the 8 row
//            addresses of one ldmatrix hit 8 distinct bank groups.
//   MN-major tile [32 k][128 mn]: 256-byte rows of sixteen chunks; chunk c of
//            row k is stored at c ^ (k & 7) (same reason, for ldmatrix.trans).
//
// Operand layouts (GemmParams::a_k_major / b_k_major) are runtime flags.
// Launcher preconditions (checked on the host, cuda_gemm.cpp): A and B f16 or
// bf16 with unit stride along their contiguous dimension, base addresses and
// every other stride (row and batch) 16-byte aligned. Edges: out-of-range rows
// and columns are zero-filled by cp.async with a short source size, so any M,
// N, K is handled (K tail included).
#include <stdint.h>

#include "ptx/arch_config.cuh"
#include "ptx/cp_async.cuh"
#include "ptx/kernels/gemm_epilogue.cuh"
#include "kernel_params/gemm.h"
#include "ptx/ldmatrix.cuh"
#include "ptx/mma_sm80.cuh"

namespace hal::ptx::gemm_sm80 {

struct Config {
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32;
  static constexpr int kStages = 4;
  static constexpr int kWarpsM = 2, kWarpsN = 4;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kWarpM = kBlockM / kWarpsM, kWarpN = kBlockN / kWarpsN;  // 64 x 32
  static constexpr int kMmaM = kWarpM / 16, kMmaN = kWarpN / 8;                // 4 x 4
  static constexpr int kTileBytes = kBlockM * kBlockK * 2;                      // one operand, one stage
  static constexpr int kSharedBytes = kStages * 2 * kTileBytes;                 // 64 KiB
};
static_assert(Config::kBlockM == Config::kBlockN, "tile loaders assume square block tiles");

// Byte offset of (row, chunk) in a K-major tile (64-byte rows).
__device__ __forceinline__ uint32_t kmajor_offset(int row, int chunk) {
  return static_cast<uint32_t>(row * 64 + ((chunk ^ ((row >> 1) & 3)) << 4));
}
// Byte offset of (k, chunk) in an MN-major tile (256-byte rows).
__device__ __forceinline__ uint32_t mnmajor_offset(int k, int chunk) {
  return static_cast<uint32_t>(k * 256 + ((chunk ^ (k & 7)) << 4));
}

// Copies the [128 x 32] slice (rows r0.., k k0..) of one operand into a stage.
// rows_total / k_total bound the copy; strides are in elements (2 bytes).
__device__ __forceinline__ void load_tile(bool k_major, uint8_t* stage, const uint16_t* base, int64_t r0,
                                          int64_t rows_total, int64_t row_stride, int64_t k0, int64_t k_total,
                                          int64_t k_stride) {
  constexpr int kChunks = Config::kBlockM * Config::kBlockK / 8;  // 512 chunks of 8 elements
#pragma unroll
  for (int i = 0; i < kChunks / Config::kThreads; ++i) {
    const int e = threadIdx.x + i * Config::kThreads;
    int64_t r, k;
    uint32_t dst;
    int64_t avail;  // elements of this chunk inside the matrix
    if (k_major) {
      const int row = e / 4, chunk = e % 4;
      r = r0 + row;
      k = k0 + chunk * 8;
      dst = kmajor_offset(row, chunk);
      avail = (r < rows_total) ? k_total - k : 0;
    } else {
      const int kk = e / 16, chunk = e % 16;
      k = k0 + kk;
      r = r0 + chunk * 8;
      dst = mnmajor_offset(kk, chunk);
      avail = (k < k_total) ? rows_total - r : 0;
    }
    const uint32_t bytes = avail <= 0 ? 0u : (avail >= 8 ? 16u : static_cast<uint32_t>(avail) * 2u);
    const uint16_t* src = bytes == 0 ? base : base + r * row_stride + k * k_stride;
    CpAsyncCg16::copy(stage + dst, src, bytes);
  }
}

template <class Mma>
__device__ __forceinline__ void gemm_kernel_body(const GemmParams& p) {
  using C = Config;
  extern __shared__ __align__(128) uint8_t smem[];
  uint8_t* a_smem = smem;
  uint8_t* b_smem = smem + C::kStages * C::kTileBytes;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / C::kWarpsN, wn = warp % C::kWarpsN;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * C::kBlockM;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * C::kBlockN;
  const int64_t z = blockIdx.z;
  const uint16_t* a = static_cast<const uint16_t*>(p.a) + z * p.a_batch_stride;
  const uint16_t* b = static_cast<const uint16_t*>(p.b) + z * p.b_batch_stride;
  const int64_t k_tiles = (p.k + C::kBlockK - 1) / C::kBlockK;
  const bool a_k_major = p.a_k_major, b_k_major = p.b_k_major;  // uniform across the block

  // ldmatrix source offsets (bytes within a stage) are the same for every
  // k tile: compute them once. [ks][i] for A, [ks][j2] for B.
  uint32_t a_off[C::kBlockK / 16][C::kMmaM], b_off[C::kBlockK / 16][C::kMmaN / 2];
#pragma unroll
  for (int ks = 0; ks < C::kBlockK / 16; ++ks) {
#pragma unroll
    for (int i = 0; i < C::kMmaM; ++i) {
      if (a_k_major) {
        const int row = wm * C::kWarpM + i * 16 + (lane % 16);
        a_off[ks][i] = kmajor_offset(row, ks * 2 + lane / 16);
      } else {
        const int mat = lane / 8;
        const int k = ks * 16 + (lane % 8) + (mat / 2) * 8;
        const int m = wm * C::kWarpM + i * 16 + (mat % 2) * 8;
        a_off[ks][i] = mnmajor_offset(k, m / 8);
      }
    }
#pragma unroll
    for (int j2 = 0; j2 < C::kMmaN / 2; ++j2) {
      if (b_k_major) {
        const int n = wn * C::kWarpN + j2 * 16 + (lane % 8) + (lane / 16) * 8;
        b_off[ks][j2] = kmajor_offset(n, ks * 2 + (lane / 8) % 2);
      } else {
        const int mat = lane / 8;
        const int k = ks * 16 + (lane % 8) + (mat % 2) * 8;
        const int n = wn * C::kWarpN + j2 * 16 + (mat / 2) * 8;
        b_off[ks][j2] = mnmajor_offset(k, n / 8);
      }
    }
  }

  auto load_stage = [&](int stage, int64_t kt) {
    const int64_t k0 = kt * C::kBlockK;
    // A: rows are M; B: rows are N. The stride along the tile's row index is
    // the M (N) stride, the stride along k the K stride.
    load_tile(a_k_major, a_smem + stage * C::kTileBytes, a, m0, p.m, p.a_m_stride, k0, p.k, p.a_k_stride);
    load_tile(b_k_major, b_smem + stage * C::kTileBytes, b, n0, p.n, p.b_n_stride, k0, p.k, p.b_k_stride);
  };

  float acc[C::kMmaM][C::kMmaN][4];
#pragma unroll
  for (int i = 0; i < C::kMmaM; ++i)
#pragma unroll
    for (int j = 0; j < C::kMmaN; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;

#pragma unroll
  for (int s = 0; s < C::kStages - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    cp_async_commit();
  }

  for (int64_t kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<C::kStages - 2>();
    __syncthreads();  // tile kt visible to all; stage (kt - 1) % kStages free for reuse
    const int64_t next = kt + C::kStages - 1;
    if (next < k_tiles) load_stage(static_cast<int>(next % C::kStages), next);
    cp_async_commit();

    const uint8_t* as = a_smem + (kt % C::kStages) * C::kTileBytes;
    const uint8_t* bs = b_smem + (kt % C::kStages) * C::kTileBytes;
#pragma unroll
    for (int ks = 0; ks < C::kBlockK / 16; ++ks) {
      uint32_t af[C::kMmaM][4];
      uint32_t bf[C::kMmaN][2];
#pragma unroll
      for (int i = 0; i < C::kMmaM; ++i) {
        if (a_k_major) LdMatrixX4::copy(as + a_off[ks][i], af[i]);
        else LdMatrixX4Trans::copy(as + a_off[ks][i], af[i]);
      }
#pragma unroll
      for (int j2 = 0; j2 < C::kMmaN / 2; ++j2) {
        uint32_t r[4];
        if (b_k_major) LdMatrixX4::copy(bs + b_off[ks][j2], r);
        else LdMatrixX4Trans::copy(bs + b_off[ks][j2], r);
        bf[2 * j2][0] = r[0];
        bf[2 * j2][1] = r[1];
        bf[2 * j2 + 1][0] = r[2];
        bf[2 * j2 + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < C::kMmaM; ++i)
#pragma unroll
        for (int j = 0; j < C::kMmaN; ++j) Mma::fma(acc[i][j], af[i], bf[j], acc[i][j]);
    }
  }
  cp_async_wait<0>();
  // Every warp has finished reading the ring (ldmatrix) before any warp
  // stages its general-form epilogue in it.
  __syncthreads();

  static_assert(C::kMmaN * 8 == 32 && C::kThreads / 32 * kGemmWarpStageBytes <= C::kSharedBytes,
                "the epilogue writes 16 x 32 blocks, staged in the ring");
  float* stage = reinterpret_cast<float*>(smem + warp * kGemmWarpStageBytes);
  gemm_epilogue_warp<C::kMmaM>(p, z, stage, lane, [&](int i) {
    GemmBlock16x32 b;
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) b.v[j][r] = acc[i][j][r];
    b.row0 = m0 + wm * C::kWarpM + i * 16;
    b.col0 = n0 + wn * C::kWarpN;
    return b;
  });
}

}  // namespace hal::ptx::gemm_sm80

using namespace hal::ptx;
using namespace hal::kernel_params;

// One entry point per dtype; grid = (ceil(N/128), ceil(M/128), batch), 256
// threads, Config::kSharedBytes dynamic shared memory. Operand layouts are
// runtime flags (uniform branches) to keep the build small.
#if HAL_PTX_DEVICE_PASS && !HAL_PTX_SM80
#define HAL_GEMM_SM80_BODY(mma) __trap();
#else
#define HAL_GEMM_SM80_BODY(mma) gemm_sm80::gemm_kernel_body<mma>(p);
#endif

extern "C" __global__ void __launch_bounds__(gemm_sm80::Config::kThreads) hal_gemm_sm80_f16(GemmParams p) {
  HAL_GEMM_SM80_BODY(MmaM16N8K16F32F16F16F32)
}
extern "C" __global__ void __launch_bounds__(gemm_sm80::Config::kThreads) hal_gemm_sm80_bf16(GemmParams p) {
  HAL_GEMM_SM80_BODY(MmaM16N8K16F32Bf16Bf16F32)
}
