#pragma once
// Parameters of the sm_90a warp-specialised GEMM (gemm_sm90a.cu).
// Plain host/device header: no CUDA includes. The two TMA descriptors are
// CUtensorMap values (128 opaque bytes, 64-byte alignment required by the
// hardware) encoded on the host with cuTensorMapEncodeTiled; the kernel takes
// this struct as `const __grid_constant__`, so the maps stay in parameter
// space and TMA reads them from there.
#include <stdint.h>

#include "kernel_params/gemm.h"
#include "ptx/kernels/gemm_geometry.h"

namespace hal::ptx {

struct alignas(64) TmaDescriptorBytes {
  unsigned char bytes[128];
};
static_assert(sizeof(TmaDescriptorBytes) == 128, "CUtensorMap is 128 bytes");

// Tile shapes shared by kernel and launcher: 128 x kBlockN output tiles, two
// consumer warpgroups of 64 rows each. Narrow (128 x 128, five stages) for
// calls with few tiles (decode shapes, small N); wide (128 x 256, four
// stages, one m64n256k16 wgmma per consumer per k16 step) when the wide tiles
// still fill every SM: it loads 48 KB of A and B per 4 MFLOP instead of 32 KB
// per 2, which is what L2 bandwidth allows at full tensor-core rate.
template <int kBlockN_>
struct GemmSm90aTile {
  static constexpr int kBlockM = 128, kBlockN = kBlockN_, kBlockK = 64;  // kBlockK * 2 bytes = the 128B swizzle span
  static constexpr int kStages = kBlockN == 256 ? 4 : 5;
  static constexpr int kThreads = 384;  // producer warpgroup + 2 consumer warpgroups
  static constexpr int kConsumerWarps = 8;
  static constexpr int kAccumulators = kBlockN / 2;  // fp32 per consumer thread (m64 x kBlockN / 128 threads)
  // setmaxnreg budgets: 128 * producer + 256 * consumer <= 64K registers;
  // the wide tile's 128 accumulators fit the consumers' 232 as they are.
  static constexpr int kProducerRegisters = 40;
  static constexpr int kConsumerRegisters = 232;
  static constexpr int kTileABytes = kBlockM * kBlockK * 2;
  static constexpr int kTileBBytes = kBlockN * kBlockK * 2;
  static constexpr int kStageBytes = kTileABytes + kTileBBytes;
  // Ring + mbarriers (2 per stage) + each consumer warp's epilogue staging
  // buffer (gemm_epilogue.cuh, general form) + slack to align the ring to
  // 1024 bytes.
  static constexpr int kSharedBytes =
      kStages * kStageBytes + 2 * kStages * 8 + kConsumerWarps * kGemmWarpStageBytes + 1024;
  static_assert(128 * kProducerRegisters + 256 * kConsumerRegisters <= 65536, "register file");
  static_assert(kSharedBytes <= 227 * 1024, "shared memory per block on sm_90");
};
using GemmSm90aNarrow = GemmSm90aTile<128>;
using GemmSm90aWide = GemmSm90aTile<256>;

// The persistent scheduler's tile order. Row-major over (m, n) tiles, the
// ~SM-count tiles in flight at once span one or two rows of m-tiles and every
// n-tile, so all of B streams from DRAM again for each row of A (8192^3
// bf16: B is 128 MiB against H200's 50 MB L2). Grouped: kTileGroupM rows of
// m-tiles at a time, walked column by column within the group, so the tiles
// in flight share about kTileGroupM A row blocks and SM-count / kTileGroupM
// B column blocks, which stay in L2. A bijection of [0, m_tiles * n_tiles)
// onto the tiles (the last group may have fewer rows).
struct GemmTileIndex {
  int32_t m, n;
};

#if defined(__CUDACC__)
__host__ __device__
#endif
inline GemmTileIndex gemm_sm90a_tile(int32_t tile, int32_t m_tiles, int32_t n_tiles) {
  constexpr int32_t kTileGroupM = 8;
  const int32_t group_tiles = kTileGroupM * n_tiles;
  const int32_t group = tile / group_tiles;
  const int32_t first_m = group * kTileGroupM;
  const int32_t rows = m_tiles - first_m < kTileGroupM ? m_tiles - first_m : kTileGroupM;
  const int32_t in_group = tile - group * group_tiles;
  return {first_m + in_group % rows, in_group / rows};
}

struct GemmSm90aParams {
  TmaDescriptorBytes a_map;  // op(A) [M, K], K contiguous; box {kBlockK, kBlockM}, 128B swizzle
  TmaDescriptorBytes b_map;  // K-major kernels: op(B)^T [N, K]; box {kBlockK, the tile's kBlockN}
                             // N-major (_bn): op(B) [K, N]; box {64, kBlockK}; 128B swizzle
  kernel_params::GemmParams g;  // sizes, C/bias addresses and strides, epilogue (batch == 1)
  int32_t m_tiles = 0, n_tiles = 0, k_blocks = 0;
};

}  // namespace hal::ptx
