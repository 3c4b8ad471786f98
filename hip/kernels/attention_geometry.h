#pragma once
// Tile configuration of the MFMA attention kernel (attention_flash.hip),
// and of the general one (attention_general.hip), shared with their launcher
// (backends/hip/hip_attention.cpp). The kernels take
// hal::kernel_params::AttentionParams (kernel_params/attention.h). Plain
// host/device header: no HIP include.
//
// Grid: x = ceil(sq / kFlashBlockQ) query tiles, y = hq, z = batch; block =
// kFlashThreads (4 wave64s, 32 query rows each); static LDS only
// (flash_lds_bytes(d), the same ~17 KiB for both head dims, so 3 workgroups
// fit the 64 KiB of a CDNA3 CU). Requirements checked by the launcher: q, k,
// v, y of one dtype (f16 or bf16); d == dv in {64, 128}; channel stride 1,
// every other stride a multiple of 8 elements and each first element 16-byte
// aligned (K/V rows move in 16-byte chunks, Q and y in 8-byte groups).
#include <stdint.h>

namespace hal::hip::kernels {

// attention_general: one wave64 per query row keeps head_dim / 64 values per
// lane in registers.
inline constexpr int kAttentionMaxHeadDim = 256;
inline constexpr int kAttentionThreads = 256;  // 4 wave64s, one query row each

inline constexpr int kFlashWaves = 4;
inline constexpr int kFlashThreads = 64 * kFlashWaves;
inline constexpr int kFlashRowsPerWave = 32;  // one 32x32x8 MFMA column block
inline constexpr int kFlashBlockQ = kFlashRowsPerWave * kFlashWaves;
inline constexpr int kFlashLdsPad = 4;  // halfs added per LDS row against bank conflicts

// Keys per K/V tile: 64 for d = 64, 32 for d = 128 (tile of 4096 elements,
// so every thread moves exactly two 16-byte chunks of K and two of V).
constexpr int flash_block_k(int d) { return 4096 / d; }

// K tile [keys][d + pad] plus V^T tile [d][keys + pad], 16-bit elements.
constexpr uint32_t flash_lds_bytes(int d) {
  return static_cast<uint32_t>(2 * (flash_block_k(d) * (d + kFlashLdsPad) + d * (flash_block_k(d) + kFlashLdsPad)));
}

}  // namespace hal::hip::kernels
