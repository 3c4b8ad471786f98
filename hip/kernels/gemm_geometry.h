#pragma once
// Tile configurations of the HIP GEMM kernels (gemm_mfma.hip,
// gemm_general.hip), shared with their launcher (backends/hip/hip_gemm.cpp).
// The kernels take hal::kernel_params::GemmParams (kernel_params/gemm.h).
// Plain host/device header.

namespace hal::hip::kernels {

// Tile configuration of gemm_mfma.hip.
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
