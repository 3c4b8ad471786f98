#pragma once
// The sm_90a (Hopper TMA + wgmma) gradient kernels of attention_backward
// (ptx/kernels/attention_sm90a_backward.cu), in place of the mma.sync pair.
// Unverified (never run on a GPU): taken only with HAL_GPU_UNVERIFIED=1 and
// neither "wgmma_attention" (the sm_90a forward's switch) nor
// "wgmma_attention_bwd" in HAL_CUDA_DISABLE.
#include <cstdint>

#include "hal/op.h"

namespace hal::kernel_params {
struct AttentionBackwardParams;
}  // namespace hal::kernel_params

namespace hal::cuda {

class CudaStream;

// Launches hal_attention_bwd_{dkdv,dq}_sm90a_<f16|bf16>_d<64|128> for `call`
// and returns true when the call fits (cuda_attention_sm90a_backward_plan.h)
// and the switches allow it; returns false with nothing launched otherwise.
// `p`: the call's parameters with p.delta pointing at D, which the delta
// kernel has been launched to write on the same stream.
bool try_attention_backward_sm90a(CudaStream& s, const AttentionBackwardCall& call,
                                  const kernel_params::AttentionBackwardParams& p);

// Whether the switches allow the path (see above).
bool attention_backward_sm90a_switched_on();

// Kernels this process launched through the path (tests prove it ran).
std::uint64_t attention_backward_sm90a_launch_count() noexcept;

}  // namespace hal::cuda
