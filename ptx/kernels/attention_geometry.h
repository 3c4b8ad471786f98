#pragma once
// Launch geometry of the tensor-core attention kernel (attention_flash.cu),
// shared with its host launcher (backends/cuda/cuda_attention.cpp). The kernel
// takes hal::kernel_params::AttentionParams (kernel_params/attention.h). Plain
// host/device header: no CUDA includes.
//
// Grid: x = ceil(sq / kFlashBlockQ) query tiles, y = hq, z = batch;
// block = 32 * kFlashWarps threads; dynamic shared memory
// flash_shared_bytes(d). Requirements checked by the launcher: q/k/v/y of
// one dtype (f16 or bf16), d == dv in {64, 128}, channel stride 1, other
// strides multiples of 8 elements and 16-byte aligned first elements.
#include <stdint.h>

namespace hal::ptx {

inline constexpr int kFlashBlockQ = 64;   // queries per block (16 per warp)
inline constexpr int kFlashBlockK = 64;   // keys per pipeline stage
inline constexpr int kFlashWarps = 4;

// Q tile + double-buffered K and V tiles, 16-bit elements.
constexpr uint32_t flash_shared_bytes(int d) {
  return static_cast<uint32_t>((kFlashBlockQ + 4 * kFlashBlockK) * d * 2);
}

}  // namespace hal::ptx
