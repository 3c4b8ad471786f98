// Persistent warp-specialised GEMM for sm_90a (Hopper): f16/bf16 A and B,
// fp32 accumulation in registers via wgmma, fused epilogue.
//
// Block: 384 threads = 3 warpgroups. Warpgroup 0 is the producer: after
// giving registers back (setmaxnreg.dec) one thread issues TMA loads of the A
// tile [128 x 64] and B tile [kBlockN x 64] (both K-major, 128B swizzle) into
// a kStages-deep shared-memory ring. Warpgroups 1 and 2 are consumers
// (setmaxnreg.inc): consumer c owns rows 64c..64c+63 of the 128 x kBlockN
// output tile and issues 4 wgmma m64nNk16 (N = kBlockN) per k-block. Two tile
// shapes (gemm_sm90a_params.h GemmSm90aTile): narrow 128 x 128, wide
// 128 x 256; the launcher picks wide when its tiles fill the SMs.
//
// Ring protocol, per stage s:
//   full[s]  (1 arrival + TMA bytes): producer arrive.expect_tx(kStageBytes),
//            then the stage's TMA loads (A, and B as one box or kBlockN / 64
//            boxes) complete exactly kStageBytes (TMA counts the whole box,
//            out-of-bounds parts zero-filled included).
//   empty[s] (2 arrivals): one thread per consumer warpgroup arrives once
//            the wgmmas that read stage s have completed: after issuing the
//            next k-block's wgmmas and wgmma.wait_group 1 (one k-block in
//            flight), or wait_group 0 after a tile's last k-block. A wgmma is
//            one warpgroup-wide operation, so its completion seen by one
//            thread is its completion for all 128. FlashAttention-3 and
//            DeepGEMM release stages this way; FA3 measured all-thread
//            arrivals (what this kernel did before) as a slowdown. (Run on
//            the H200 since 884a693; its own effect was not timed apart.)
// Both sides walk the same (tile, k-block) sequence, so the ring index and
// parity agree; parity flips on each ring wrap. The producer's first pass
// waits for parity 1 of empty[s], which a fresh mbarrier reports as complete.
//
// Tile scheduler: persistent grid (= SM count, set by the launcher from the
// device), tile t = blockIdx.x + i * gridDim.x, in the grouped order of
// gemm_sm90a_tile (gemm_sm90a_params.h), which both roles follow.
//
// Shared layout of a K-major tile: row r (of M or N) is 128 bytes (64
// elements); TMA's 128B swizzle stores 16-byte chunk c of row r at
// c ^ (r & 7). The wgmma descriptor says the same (layout 128B swizzle,
// stride between 8-row groups 1024 bytes); the k-th 16-wide slice starts 32k
// bytes into the row, which the hardware swizzles like the TMA did because
// each stage is 1024-byte aligned.
//
// B N-major (the *_bn kernels): B [K, N] with N contiguous is loaded as
// kBlockN / 64 [64 k][64 n] boxes per stage (128-byte rows of n, 128B swizzle) and read by
// wgmma with the transpose bit (16-bit types only), canonical MN-major layout
// ((8,8,2) n, (8,k)) : ((1,8,LBO = 8 KiB), (64,SBO = 1 KiB)) in elements/bytes.
//
// Launcher preconditions (cuda_gemm_sm90a.cpp): batch 1, A contiguous along K, B along K or N,
// base addresses 16-byte aligned, row strides multiples of 16 bytes.
// Everything compiles to an empty stub outside sm_90a.
#include <stdint.h>

// Bounded mbarrier waits stay on (a wrong byte count traps instead of hanging
// the GPU), but without printf: a call anywhere in the kernel serialises the
// wgmma pipeline (ptxas C7510). Build with -DHAL_GEMM_SM90A_TRAP_MESSAGE=1 to
// get the message while debugging.
#ifndef HAL_GEMM_SM90A_TRAP_MESSAGE
#define HAL_GEMM_SM90A_TRAP_MESSAGE 0
#endif
#define HAL_PTX_BOUNDED_WAITS 1
#define HAL_PTX_MBARRIER_TRAP_MESSAGE HAL_GEMM_SM90A_TRAP_MESSAGE
// No legitimate wait here lasts more than milliseconds; trap within seconds.
#define HAL_PTX_MBARRIER_SPIN_LIMIT (1u << 24)

#include "ptx/arch_config.cuh"
#include "ptx/kernels/gemm_epilogue.cuh"
#include "ptx/kernels/gemm_sm90a_params.h"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma_sm90a.cuh"

namespace hal::ptx::gemm_sm90a {

#if HAL_PTX_SM90A

constexpr int kConsumerWarpgroups = 2;
constexpr int kKSteps = GemmSm90aNarrow::kBlockK / 16;  // wgmma k16 per k-block
// A 128B-swizzled box of B N-major: [64 k][64 n], 128-byte rows.
constexpr int kNBoxBytes = 64 * 128;

template <class Cfg, bool kBNMajor>
__device__ __forceinline__ void producer(const GemmSm90aParams& p, uint8_t* ring, Mbarrier* full, Mbarrier* empty) {
  const int num_tiles = p.m_tiles * p.n_tiles;
  int stage = 0;
  uint32_t phase = 0;
  for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const GemmTileIndex at = gemm_sm90a_tile(tile, p.m_tiles, p.n_tiles);
    const int m0 = at.m * Cfg::kBlockM;
    const int n0 = at.n * Cfg::kBlockN;
    for (int kb = 0; kb < p.k_blocks; ++kb) {
      empty[stage].wait(phase ^ 1u);
      full[stage].arrive_expect_tx(Cfg::kStageBytes);
      uint8_t* sa = ring + stage * Cfg::kStageBytes;
      TmaLoad2D::copy(sa, &p.a_map, full[stage], kb * Cfg::kBlockK, m0);
      if constexpr (kBNMajor) {
        // kBlockN / 64 boxes of [64 k][64 n] (a 128B-swizzle row holds 64 n), side by side.
#pragma unroll
        for (int box = 0; box < Cfg::kBlockN / 64; ++box)
          TmaLoad2D::copy(sa + Cfg::kTileABytes + box * kNBoxBytes, &p.b_map, full[stage], n0 + 64 * box,
                          kb * Cfg::kBlockK);
      } else {
        TmaLoad2D::copy(sa + Cfg::kTileABytes, &p.b_map, full[stage], kb * Cfg::kBlockK, n0);
      }
      if (++stage == Cfg::kStages) {
        stage = 0;
        phase ^= 1u;
      }
    }
  }
}

template <class Cfg, class Mma, bool kBNMajor>
__device__ __forceinline__ void consumer(const GemmSm90aParams& p, int cw, int t, uint8_t* ring, Mbarrier* full,
                                         Mbarrier* empty, float* epilogue_stage) {
  const int num_tiles = p.m_tiles * p.n_tiles;
  const int warp = t / 32, lane = t % 32;
  float* stage_buf = epilogue_stage + (cw * 4 + warp) * (kGemmWarpStageBytes / 4);
  int stage = 0;
  uint32_t phase = 0;
  float acc[Cfg::kAccumulators];
  for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const GemmTileIndex at = gemm_sm90a_tile(tile, p.m_tiles, p.n_tiles);
    const int m0 = at.m * Cfg::kBlockM;
    const int n0 = at.n * Cfg::kBlockN;
#pragma unroll
    for (int i = 0; i < Cfg::kAccumulators; ++i) acc[i] = 0.0f;
    // One k-block of wgmma stays in flight: k-block kb's wgmmas are issued
    // before k-block kb-1's are waited for, so the tensor cores never drain
    // between k-blocks. A stage is released only once the wgmmas that read it
    // have completed, i.e. one iteration late (prev_stage).
    int prev_stage = -1;
    for (int kb = 0; kb < p.k_blocks; ++kb) {
      full[stage].wait(phase);
      const uint8_t* sa = ring + stage * Cfg::kStageBytes + cw * 64 * 128;
      const uint8_t* sb = ring + stage * Cfg::kStageBytes + Cfg::kTileABytes;
#pragma unroll
      for (int i = 0; i < Cfg::kAccumulators; ++i) wgmma_fence_operand(acc[i]);
      wgmma_fence();
#pragma unroll
      for (int k = 0; k < kKSteps; ++k) {
        // N-major B: k16 slice k = rows 16k.. of each box (2048 bytes apart); the
        // 8-row groups are 1024 bytes apart (SBO), the 64-wide n boxes
        // kNBoxBytes apart (LBO).
        const uint64_t desc_b = kBNMajor ? make_wgmma_desc(sb + 2048 * k, kNBoxBytes, 1024, WgmmaSwizzle::b128)
                                         : make_wgmma_desc(sb + 32 * k, 16, 1024, WgmmaSwizzle::b128);
        Mma::fma(acc, make_wgmma_desc(sa + 32 * k, 16, 1024, WgmmaSwizzle::b128), desc_b, 1);
      }
      wgmma_commit();
      wgmma_wait<1>();  // k-block kb-1's group is done; kb's may still run
#pragma unroll
      for (int i = 0; i < Cfg::kAccumulators; ++i) wgmma_fence_operand(acc[i]);
      if (prev_stage >= 0 && t == 0) empty[prev_stage].arrive();
      prev_stage = stage;
      if (++stage == Cfg::kStages) {
        stage = 0;
        phase ^= 1u;
      }
    }
    // Drain the last k-block before reading acc, then release its stage (each
    // stage used by this tile is released exactly once).
    wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < Cfg::kAccumulators; ++i) wgmma_fence_operand(acc[i]);
    if (prev_stage >= 0 && t == 0) empty[prev_stage].arrive();
    // Epilogue straight from the accumulator fragments (layout in
    // ptx/wgmma_sm90a.cuh), kBlockN / 32 blocks of 16 x 32 per warp; column
    // group j of the m64nN fragment is acc[4j .. 4j + 3].
    gemm_epilogue_warp<Cfg::kBlockN / 32>(p.g, 0, stage_buf, lane, [&](int i) {
      GemmBlock16x32 b;
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r) b.v[j][r] = acc[4 * (4 * i + j) + r];
      b.row0 = m0 + cw * 64 + warp * 16;
      b.col0 = n0 + 32 * i;
      return b;
    });
  }
}

template <class Cfg, class Mma, bool kBNMajor>
__device__ __forceinline__ void run(const GemmSm90aParams& p) {
  extern __shared__ uint8_t smem_raw[];
  const uint32_t raw = smem_u32(smem_raw);
  uint8_t* ring = smem_raw + (((raw + 1023u) & ~1023u) - raw);  // 128B swizzle atoms are 1024 bytes
  Mbarrier* full = reinterpret_cast<Mbarrier*>(ring + Cfg::kStages * Cfg::kStageBytes);
  Mbarrier* empty = full + Cfg::kStages;
  float* epilogue_stage = reinterpret_cast<float*>(empty + Cfg::kStages);  // 16-byte aligned: 2 * kStages * 8 bytes in
  static_assert(2 * Cfg::kStages * 8 % 16 == 0 && Cfg::kConsumerWarps == 4 * kConsumerWarpgroups, "epilogue staging layout");
  const int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    prefetch_tensor_map(&p.a_map);
    prefetch_tensor_map(&p.b_map);
    for (int s = 0; s < Cfg::kStages; ++s) {
      full[s].init(1);
      empty[s].init(kConsumerWarpgroups);
    }
    Mbarrier::fence_init();
  }
  __syncthreads();
  if (wg == 0) {
    setmaxnreg_dec<Cfg::kProducerRegisters>();
    if (threadIdx.x == 0) producer<Cfg, kBNMajor>(p, ring, full, empty);
  } else {
    setmaxnreg_inc<Cfg::kConsumerRegisters>();
    consumer<Cfg, Mma, kBNMajor>(p, wg - 1, threadIdx.x % 128, ring, full, empty, epilogue_stage);
  }
}

#endif  // HAL_PTX_SM90A

}  // namespace hal::ptx::gemm_sm90a

namespace hal::ptx::gemm_sm90a {
// A stub outside sm_90a (run and the wgmma wrappers exist only there).
template <class Cfg, class Mma, bool kBNMajor>
__device__ __forceinline__ void entry(const GemmSm90aParams& p) {
#if HAL_PTX_SM90A
  run<Cfg, Mma, kBNMajor>(p);
#else
  (void)p;
#endif
}
}  // namespace hal::ptx::gemm_sm90a

using hal::ptx::GemmSm90aNarrow;
using hal::ptx::GemmSm90aWide;
using hal::ptx::gemm_sm90a::entry;
using namespace hal::ptx;  // the wgmma wrappers

// <dtype>: B K-major ([N, K]); <dtype>_bn: B N-major ([K, N]), wgmma
// transpose bit; hal_gemm_sm90a_wide_*: the 128 x 256 tile.
extern "C" __global__ void __launch_bounds__(GemmSm90aNarrow::kThreads, 1)
    hal_gemm_sm90a_bf16(const __grid_constant__ GemmSm90aParams p) {
  entry<GemmSm90aNarrow, WgmmaM64N128K16F32Bf16SS<0, 0>, false>(p);
}
extern "C" __global__ void __launch_bounds__(GemmSm90aNarrow::kThreads, 1)
    hal_gemm_sm90a_bf16_bn(const __grid_constant__ GemmSm90aParams p) {
  entry<GemmSm90aNarrow, WgmmaM64N128K16F32Bf16SS<0, 1>, true>(p);
}
extern "C" __global__ void __launch_bounds__(GemmSm90aNarrow::kThreads, 1)
    hal_gemm_sm90a_f16(const __grid_constant__ GemmSm90aParams p) {
  entry<GemmSm90aNarrow, WgmmaM64N128K16F32F16SS<0, 0>, false>(p);
}
extern "C" __global__ void __launch_bounds__(GemmSm90aNarrow::kThreads, 1)
    hal_gemm_sm90a_f16_bn(const __grid_constant__ GemmSm90aParams p) {
  entry<GemmSm90aNarrow, WgmmaM64N128K16F32F16SS<0, 1>, true>(p);
}
extern "C" __global__ void __launch_bounds__(GemmSm90aWide::kThreads, 1)
    hal_gemm_sm90a_wide_bf16(const __grid_constant__ GemmSm90aParams p) {
  entry<GemmSm90aWide, WgmmaM64N256K16F32Bf16SS<0, 0>, false>(p);
}
extern "C" __global__ void __launch_bounds__(GemmSm90aWide::kThreads, 1)
    hal_gemm_sm90a_wide_bf16_bn(const __grid_constant__ GemmSm90aParams p) {
  entry<GemmSm90aWide, WgmmaM64N256K16F32Bf16SS<0, 1>, true>(p);
}
extern "C" __global__ void __launch_bounds__(GemmSm90aWide::kThreads, 1)
    hal_gemm_sm90a_wide_f16(const __grid_constant__ GemmSm90aParams p) {
  entry<GemmSm90aWide, WgmmaM64N256K16F32F16SS<0, 0>, false>(p);
}
extern "C" __global__ void __launch_bounds__(GemmSm90aWide::kThreads, 1)
    hal_gemm_sm90a_wide_f16_bn(const __grid_constant__ GemmSm90aParams p) {
  entry<GemmSm90aWide, WgmmaM64N256K16F32F16SS<0, 1>, true>(p);
}
