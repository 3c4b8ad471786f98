#pragma once
// The TMA descriptor of one 16-bit attention view, shared by the sm_90a
// forward (cuda_attention_sm90a.cpp) and backward
// (cuda_attention_sm90a_backward.cpp): both read Q, K, V (and dY) through
// the same 4-D [batch, head, row, channel] boxes.
#include <cstdint>

#include "backends/cuda/cuda_attention_sm90a_plan.h"  // TmaView4D
#include "hal/dtype.h"
#include "ptx/kernels/gemm_sm90a_params.h"            // TmaDescriptorBytes

namespace hal::cuda {

// Encodes `v` over `base` (f16 or bf16 elements) with the 128B swizzle
// (64 channels of 16 bits a row) and zero fill out of bounds: Q rows past sq
// and K/V rows past sk read as 0 (the kernels mask them, and a V row of
// garbage would turn 0 * NaN into NaN). False when the driver has no
// cuTensorMapEncodeTiled or refuses the view; nothing is launched then.
bool encode_attention_view(ptx::TmaDescriptorBytes& out, const void* base, DType t, const TmaView4D& v);

// TMA needs 16-byte-aligned global addresses.
inline bool tma_aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace hal::cuda
