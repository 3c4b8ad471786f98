#pragma once
// Which kernels attention_backward runs on a GPU, in which order and with
// which grids: one plan for both GPU backends (the launch itself is
// attention_backward_launcher.h). Pure host code, tested on the CPU
// (tests/unit/gpu_attention_backward_plan_test.cpp).
//
// Three steps on one stream, each a kernel taking
// kernel_params::AttentionBackwardParams:
//   delta  hal_attention_bwd_delta_<t>: D = rowsum(dy * y) into device scratch
//          (delta_floats floats, freed after the call);
//   dkdv   dk and dv, one owner per key (block);
//   dq     dq, one owner per query (block).
// The tensor-core pair when the caller allows it and the call qualifies
// (f16/bf16, d == dv in {64, 128}, 16-byte rows, the shared memory fits):
// hal_attention_bwd_{dkdv,dq}_mma_<t>_d<d> (ptx/kernels/attention_backward_mma.cu)
// on CUDA, hal_attention_bwd_{dkdv,dq}_mfma_<t>_d<d>
// (hip/kernels/attention_backward_mfma.hip) on HIP; else the CUDA-core / wave kernels
// hal_attention_bwd_{dkdv,dq}_general_<t>, one warp (wave) per key / query.
// A step with nothing to compute (no keys, no queries) has no kernel.
#include <cstddef>
#include <cstdint>

#include "hal/op.h"
#include "kernel_params/attention_backward.h"

namespace hal::gpu {

struct AttentionBackwardStep {
  const char* kernel = nullptr;  // nullptr: nothing to launch
  std::int64_t grid[3] = {1, 1, 1};
  int block = 0;                  // threads
  std::uint32_t shared_bytes = 0;  // dynamic shared memory
};

struct AttentionBackwardPlan {
  AttentionBackwardStep delta, dkdv, dq;  // launched in this order
  std::int64_t delta_floats = 0;          // scratch for D (batch * sq * hq), 0 with no query
  bool tensor_cores = false;
};

struct AttentionBackwardTarget {
  int warp_size = 32;                     // 32 (CUDA) or 64 (CDNA waves)
  bool tensor_cores = false;              // the vendor's tensor-core kernels are not disabled
  bool mfma = false;                      // they are HIP's MFMA kernels (static LDS), not CUDA's mma.sync
  std::int64_t max_shared_per_block = 0;  // bytes the tensor-core kernels may ask for
};

// ops/ has validated the call; p is attention_backward_params(call).
// Throws unsupported (naming `backend`) when a grid would not fit.
AttentionBackwardPlan plan_attention_backward(const AttentionBackwardCall& call,
                                              const kernel_params::AttentionBackwardParams& p,
                                              const AttentionBackwardTarget& target, const char* backend);

}  // namespace hal::gpu
