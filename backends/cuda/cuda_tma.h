#pragma once
// The one way the sm_90a kernels' host code encodes a TMA descriptor of a
// 16-bit tensor: the GEMM's 2-D matrix maps (cuda_gemm_sm90a.cpp) and the
// attention forward's and backward's 4-D views (cuda_attention_tma.h).
#include <cstdint>

#include "hal/dtype.h"
#include "ptx/kernels/gemm_sm90a_params.h"  // TmaDescriptorBytes

namespace hal::cuda {

// A tiled map of `rank` dims over `base` (f16 or bf16 elements, dim 0
// contiguous; strides_bytes holds dims 1..rank-1) with the 128B swizzle and
// zero fill out of bounds, so rows past the end read as 0 (the kernels mask
// them, and a row of garbage would turn 0 * NaN into NaN). False when the
// driver has no cuTensorMapEncodeTiled or refuses the map; nothing is
// launched then.
bool encode_tma_16bit(ptx::TmaDescriptorBytes& out, const void* base, DType t, int rank, const std::uint64_t* dims,
                      const std::uint64_t* strides_bytes, const std::uint32_t* box);

// TMA needs 16-byte-aligned global addresses.
inline bool tma_aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace hal::cuda
