#pragma once
// The sm_90a (Hopper TMA + wgmma, FlashAttention-3 style) path of
// cuda_attention.cpp. Unverified (never run on a GPU): taken only with
// HAL_GPU_UNVERIFIED=1 and not disabled by HAL_CUDA_DISABLE=wgmma_attention.
#include <cstdint>

#include "hal/op.h"

namespace hal::kernel_params {
struct AttentionParams;
}  // namespace hal::kernel_params

namespace hal::cuda {

class CudaStream;

// Launches hal_attention_sm90a_<f16|bf16>_d<64|128> for `call` and returns
// true when the call fits (cuda_attention_sm90a_plan.h: sm_90 device with
// sm_90a code, one 16-bit dtype, d == dv in {64, 128}, TMA-viewable strides,
// 16-byte-aligned bases; cuTensorMapEncodeTiled available) and the switches
// allow it; returns false with nothing launched otherwise. `p`: the call's
// parameters as run_attention packed them.
bool try_attention_sm90a(CudaStream& s, const AttentionCall& call, const kernel_params::AttentionParams& p);

// Whether the switches allow the path: HAL_GPU_UNVERIFIED=1 and
// "wgmma_attention" not in HAL_CUDA_DISABLE.
bool attention_sm90a_switched_on();

// Kernels this process launched through the path (tests prove it ran).
std::uint64_t attention_sm90a_launch_count() noexcept;

}  // namespace hal::cuda
