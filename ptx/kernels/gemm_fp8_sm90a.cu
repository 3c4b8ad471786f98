// Scaled FP8 GEMM for sm_90a (Hopper), DeepSeek-V3's recipe: gemm_fp8 and
// gemm_fp8_grouped (hal/op_fp8.h) with OCP e4m3 / e5m2 operands.
//
//   c = act(alpha * sum_kb (sa[i, kb] * sb[j / 128, kb]) * S_kb + beta * c + bias)
//
// Persistent and warp-specialised like the bf16 kernel (gemm_sm90a.cu,
// whose ring protocol, swizzle and tile order this follows): 384 threads =
// a producer warpgroup (setmaxnreg.dec to 40; one thread issues the TMA
// loads) and two consumer warpgroups (setmaxnreg.inc to 232), consumer c
// owning rows 64c..64c+63 of the 128 x 128 tile.
//
// Promotion (why the kernel exists): FP8 wgmma accumulates with about 14
// bits (DeepSeek-V3 technical report, arXiv:2412.19437, section 3.3.2), so
// one k-block of 128 (= one ring stage: A and B boxes of [128 rows][128 K
// bytes]) is summed by 4 wgmma m64n128k32 into the wgmma accumulators, the
// first with scale_d = 0 (which clears them), and then added into fp32
// registers as total += (sa * sb) * acc: the row's A scale (two rows per
// thread in the accumulator layout, ptx/wgmma_sm90a.cuh) times the tile's
// B scale (BN = 128 = the B scale block). The wgmmas of a k-block are waited
// for (wait_group 0) before the promotion reads them; the stage is released
// right after, so the producer refills it while this warpgroup promotes and
// the other one multiplies.
//
// Grouped (p.f.groups > 0): the M tiles are numbered group by group
// (kernel_params::fp8_tile_rows), so a tile never spans two experts; B is
// one map over [G * N, K] and the tile of group g reads rows g * N + n0 ..
// (rows past N belong to the next expert or are zero-filled: their columns
// are never stored). C, bias and the row bound are the group's. Empty groups
// have no tiles.
//
// A's scales: when they are M-major (DeepGEMM's layout: a_scales[i, kb] at
// i + kb * stride, stride * 4 a multiple of 16 bytes) the producer loads the
// tile's 128 row scales of each k-block with TMA into the stage beside A and
// B (p.scales_tma; the stage then expects 512 more bytes); otherwise, and for
// the tile's one B scale, the consumers load them with ordinary loads before
// waiting for the stage.
//
// Launcher preconditions (cuda_gemm_fp8.cpp): A and B contiguous along K,
// 16-byte-aligned bases and row strides, grouped B groups contiguous
// (b_group_stride = N * b_n_stride). A ragged K is zero-filled by TMA.
// Everything compiles to an empty stub outside sm_90a.
#include <stdint.h>

#ifndef HAL_GEMM_SM90A_TRAP_MESSAGE
#define HAL_GEMM_SM90A_TRAP_MESSAGE 0
#endif
#define HAL_PTX_BOUNDED_WAITS 1
#define HAL_PTX_MBARRIER_TRAP_MESSAGE HAL_GEMM_SM90A_TRAP_MESSAGE
#define HAL_PTX_MBARRIER_SPIN_LIMIT (1u << 24)

#include "ptx/arch_config.cuh"
#include "ptx/kernels/gemm_epilogue.cuh"
#include "ptx/kernels/gemm_fp8_sm90a_params.h"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma_sm90a.cuh"

namespace hal::ptx::gemm_fp8_sm90a {

using Cfg = GemmFp8Sm90aTile;
using kernel_params::Fp8TileRows;
using kernel_params::fp8_tile_rows;

#if HAL_PTX_SM90A

constexpr int kConsumerWarpgroups = 2;
constexpr int kKSteps = Cfg::kBlockK / 32;  // wgmma k32 per k-block

// One tile's place: its rows (group, first row, count) and first column.
struct TileAt {
  Fp8TileRows rows;
  int64_t n0;
};
__device__ __forceinline__ TileAt tile_at(const GemmFp8Sm90aParams& p, int tile) {
  const GemmTileIndex t = gemm_sm90a_tile(tile, p.f.m_tiles, p.n_tiles);
  return {fp8_tile_rows(p.f, t.m), static_cast<int64_t>(t.n) * Cfg::kBlockN};
}

__device__ __forceinline__ void producer(const GemmFp8Sm90aParams& p, uint8_t* ring, float* scales, Mbarrier* full,
                                         Mbarrier* empty) {
  const int num_tiles = p.f.m_tiles * p.n_tiles;
  int stage = 0;
  uint32_t phase = 0;
  for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const TileAt at = tile_at(p, tile);
    const int32_t a_row = static_cast<int32_t>(at.rows.row0);
    const int32_t b_row = static_cast<int32_t>(at.rows.group * p.f.g.n + at.n0);
    for (int kb = 0; kb < p.f.k_blocks; ++kb) {
      empty[stage].wait(phase ^ 1u);
      // Every box whole: TMA counts zero-filled bytes too.
      full[stage].arrive_expect_tx(Cfg::kStageBytes + (p.scales_tma ? Cfg::kScaleBytes : 0));
      uint8_t* s = ring + stage * Cfg::kStageBytes;
      TmaLoad2D::copy(s, &p.a_map, full[stage], kb * Cfg::kBlockK, a_row);
      TmaLoad2D::copy(s + Cfg::kTileABytes, &p.b_map, full[stage], kb * Cfg::kBlockK, b_row);
      if (p.scales_tma) TmaLoad2D::copy(scales + stage * (Cfg::kScaleBytes / 4), &p.sa_map, full[stage], a_row, kb);
      if (++stage == Cfg::kStages) {
        stage = 0;
        phase ^= 1u;
      }
    }
  }
}

template <class Mma>
__device__ __forceinline__ void consumer(const GemmFp8Sm90aParams& p, int cw, int t, uint8_t* ring, const float* scales,
                                         Mbarrier* full, Mbarrier* empty, float* epilogue_stage) {
  const kernel_params::GemmFp8Params& f = p.f;
  const int num_tiles = f.m_tiles * p.n_tiles;
  const int warp = t / 32, lane = t % 32;
  float* stage_buf = epilogue_stage + (cw * 4 + warp) * (kGemmWarpStageBytes / 4);
  const int64_t c_size = f.g.c_type == 0 ? 4 : 2;  // f32, else bf16 / f16
  int stage = 0;
  uint32_t phase = 0;
  float acc[Cfg::kAccumulators];    // one k-block, in the wgmma accumulator
  float total[Cfg::kAccumulators];  // the promoted fp32 sum
  for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const TileAt at = tile_at(p, tile);
    const int g = at.rows.group;
    // This thread's two rows (accumulator layout), relative to the tile.
    const int64_t r_lo = cw * 64 + warp * 16 + lane / 4, r_hi = r_lo + 8;
    const float* sa_lo = f.a_scales + (r_lo < at.rows.rows ? (at.rows.row0 + r_lo) * f.sa_m_stride : 0);
    const float* sa_hi = f.a_scales + (r_hi < at.rows.rows ? (at.rows.row0 + r_hi) * f.sa_m_stride : 0);
    const float* sb = f.b_scales + g * f.sb_group_stride + (at.n0 / Cfg::kBlockN) * f.sb_n_stride;
#pragma unroll
    for (int i = 0; i < Cfg::kAccumulators; ++i) total[i] = 0.0f;
    for (int kb = 0; kb < f.k_blocks; ++kb) {
      // The scales first: their loads are in flight while the wgmmas run.
      const float s_b = __ldg(sb + kb * f.sb_k_stride);
      float s_lo = 0.0f, s_hi = 0.0f;
      if (!p.scales_tma) s_lo = __ldg(sa_lo + kb * f.sa_k_stride), s_hi = __ldg(sa_hi + kb * f.sa_k_stride);
      full[stage].wait(phase);
      if (p.scales_tma) {  // the stage's 128 row scales, zero past M
        s_lo = scales[stage * (Cfg::kScaleBytes / 4) + r_lo];
        s_hi = scales[stage * (Cfg::kScaleBytes / 4) + r_hi];
      }
      const uint8_t* sa = ring + stage * Cfg::kStageBytes + cw * 64 * 128;
      const uint8_t* sbt = ring + stage * Cfg::kStageBytes + Cfg::kTileABytes;
#pragma unroll
      for (int i = 0; i < Cfg::kAccumulators; ++i) wgmma_fence_operand(acc[i]);
      wgmma_fence();
#pragma unroll
      for (int k = 0; k < kKSteps; ++k)
        Mma::fma(acc, make_wgmma_desc(sa + 32 * k, 16, 1024, WgmmaSwizzle::b128),
                 make_wgmma_desc(sbt + 32 * k, 16, 1024, WgmmaSwizzle::b128), k > 0 ? 1 : 0);
      wgmma_commit();
      wgmma_wait<0>();
#pragma unroll
      for (int i = 0; i < Cfg::kAccumulators; ++i) wgmma_fence_operand(acc[i]);
      if (t == 0) empty[stage].arrive();  // this warpgroup's reads of the stage are done
      if (++stage == Cfg::kStages) {
        stage = 0;
        phase ^= 1u;
      }
      const float scale_lo = s_lo * s_b, scale_hi = s_hi * s_b;
#pragma unroll
      for (int i = 0; i < Cfg::kAccumulators; ++i) total[i] = fmaf((i % 4) < 2 ? scale_lo : scale_hi, acc[i], total[i]);
    }
    // The group's C, bias and row count: the epilogue sees a [rows, N] problem.
    GemmParams e = f.g;
    e.c = static_cast<char*>(e.c) + at.rows.row0 * e.c_m_stride * c_size;
    if (e.bias != nullptr) e.bias = static_cast<const char*>(e.bias) + g * f.bias_group_stride * c_size;
    e.m = at.rows.rows;
    gemm_epilogue_warp<Cfg::kBlockN / 32>(e, 0, stage_buf, lane, [&](int i) {
      GemmBlock16x32 b;
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r) b.v[j][r] = total[4 * (4 * i + j) + r];
      b.row0 = cw * 64 + warp * 16;
      b.col0 = at.n0 + 32 * i;
      return b;
    });
  }
}

template <class Mma>
__device__ __forceinline__ void run(const GemmFp8Sm90aParams& p) {
  extern __shared__ uint8_t smem_raw[];
  const uint32_t raw = smem_u32(smem_raw);
  uint8_t* ring = smem_raw + (((raw + 1023u) & ~1023u) - raw);  // 128B swizzle atoms are 1024 bytes
  Mbarrier* full = reinterpret_cast<Mbarrier*>(ring + Cfg::kStages * Cfg::kStageBytes);
  Mbarrier* empty = full + Cfg::kStages;
  float* epilogue_stage = reinterpret_cast<float*>(empty + Cfg::kStages);
  // After the epilogue staging: 128-byte aligned (the ring is 1024-aligned, the
  // barriers and staging buffers multiples of 16 bytes; rounded up here).
  const uintptr_t after_stage = reinterpret_cast<uintptr_t>(epilogue_stage + Cfg::kConsumerWarps * (kGemmWarpStageBytes / 4));
  float* scales = reinterpret_cast<float*>((after_stage + 127u) & ~uintptr_t{127u});
  static_assert(2 * Cfg::kStages * 8 % 16 == 0 && Cfg::kConsumerWarps == 4 * kConsumerWarpgroups, "epilogue staging layout");
  const int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    prefetch_tensor_map(&p.a_map);
    prefetch_tensor_map(&p.b_map);
    if (p.scales_tma) prefetch_tensor_map(&p.sa_map);
    for (int s = 0; s < Cfg::kStages; ++s) {
      full[s].init(1);
      empty[s].init(kConsumerWarpgroups);
    }
    Mbarrier::fence_init();
  }
  __syncthreads();
  if (wg == 0) {
    setmaxnreg_dec<Cfg::kProducerRegisters>();
    if (threadIdx.x == 0) producer(p, ring, scales, full, empty);
  } else {
    setmaxnreg_inc<Cfg::kConsumerRegisters>();
    consumer<Mma>(p, wg - 1, threadIdx.x % 128, ring, scales, full, empty, epilogue_stage);
  }
}

#endif  // HAL_PTX_SM90A

// A stub outside sm_90a (run and the wgmma wrappers exist only there).
template <class Mma>
__device__ __forceinline__ void entry(const GemmFp8Sm90aParams& p) {
#if HAL_PTX_SM90A
  run<Mma>(p);
#else
  (void)p;
#endif
}

}  // namespace hal::ptx::gemm_fp8_sm90a

using hal::ptx::GemmFp8Sm90aParams;
using hal::ptx::GemmFp8Sm90aTile;
using hal::ptx::gemm_fp8_sm90a::entry;
using namespace hal::ptx;  // the wgmma wrappers

// hal_gemm_fp8_sm90a_<A's format>_<B's format>: both gemm_fp8 and gemm_fp8_grouped.
extern "C" __global__ void __launch_bounds__(GemmFp8Sm90aTile::kThreads, 1)
    hal_gemm_fp8_sm90a_e4m3_e4m3(const __grid_constant__ GemmFp8Sm90aParams p) {
  entry<WgmmaM64N128K32F32E4m3E4m3SS>(p);
}
extern "C" __global__ void __launch_bounds__(GemmFp8Sm90aTile::kThreads, 1)
    hal_gemm_fp8_sm90a_e4m3_e5m2(const __grid_constant__ GemmFp8Sm90aParams p) {
  entry<WgmmaM64N128K32F32E4m3E5m2SS>(p);
}
extern "C" __global__ void __launch_bounds__(GemmFp8Sm90aTile::kThreads, 1)
    hal_gemm_fp8_sm90a_e5m2_e4m3(const __grid_constant__ GemmFp8Sm90aParams p) {
  entry<WgmmaM64N128K32F32E5m2E4m3SS>(p);
}
extern "C" __global__ void __launch_bounds__(GemmFp8Sm90aTile::kThreads, 1)
    hal_gemm_fp8_sm90a_e5m2_e5m2(const __grid_constant__ GemmFp8Sm90aParams p) {
  entry<WgmmaM64N128K32F32E5m2E5m2SS>(p);
}
