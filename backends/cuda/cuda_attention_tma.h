#pragma once
// The TMA descriptor of one 16-bit attention view, shared by the sm_90a
// forward (cuda_attention_sm90a.cpp) and backward
// (cuda_attention_sm90a_backward.cpp): both read Q, K, V (and dY) through
// the same 4-D [batch, head, row, channel] boxes.
#include "backends/cuda/cuda_attention_sm90a_plan.h"  // TmaView4D
#include "backends/cuda/cuda_tma.h"

namespace hal::cuda {

// `v` over `base` (64 channels of 16 bits a box row = the 128B swizzle span);
// Q rows past sq and K/V rows past sk read as 0. False: nothing is launched.
inline bool encode_attention_view(ptx::TmaDescriptorBytes& out, const void* base, DType t, const TmaView4D& v) {
  return encode_tma_16bit(out, base, t, 4, v.dims, v.strides_bytes, v.box);
}

}  // namespace hal::cuda
