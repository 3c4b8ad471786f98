#pragma once
// attention_backward's launcher, one host logic for both GPU backends: the
// plan (attention_backward_plan.h) launched in order on the call's stream,
// with the D scratch (CallScratch, training_launcher.h: one stream
// synchronisation before it is freed). `Backend` is the backend's training
// traits (cuda_training.cpp, hip_training.cpp): Stream, LaunchShape, name.
//
// The kernels never ran on a GPU: the support matrix declines the op unless
// HAL_GPU_UNVERIFIED=1.
#include <optional>

#include "backends/gpu/attention_backward_plan.h"
#include "backends/gpu/kernel_args.h"
#include "backends/gpu/training_launcher.h"
#include "hal/op.h"

namespace hal::gpu {

template <class Backend>
typename Backend::LaunchShape attention_backward_shape(const AttentionBackwardStep& step) {
  typename Backend::LaunchShape shape;
  for (int d = 0; d < 3; ++d) shape.grid[d] = static_cast<unsigned>(step.grid[d]);
  shape.block[0] = static_cast<unsigned>(step.block);
  shape.shared_bytes = step.shared_bytes;
  return shape;
}

// The plan's own gradient kernels, no replacement.
struct PlannedGradients {
  template <class Stream>
  bool operator()(Stream&, const AttentionBackwardCall&, const kernel_params::AttentionBackwardParams&) const {
    return false;
  }
};

// `gradients(s, call, p)` runs after the delta kernel (p.delta set): a
// backend's own dk/dv and dq kernels (CUDA's sm_90a pair,
// backends/cuda/cuda_attention_sm90a_backward.h) launched on s, returning
// true; false (nothing launched) leaves them to the plan's dkdv and dq steps.
template <class Backend, class Gradients = PlannedGradients>
void run_attention_backward(typename Backend::Stream& s, const AttentionBackwardCall& call,
                            const AttentionBackwardTarget& target, Gradients&& gradients = {}) {
  kernel_params::AttentionBackwardParams p = attention_backward_params(call, Backend::name);
  const AttentionBackwardPlan plan = plan_attention_backward(call, p, target, Backend::name);
  std::optional<CallScratch<typename Backend::Stream>> scratch;
  if (plan.delta_floats > 0) {
    scratch.emplace(s, static_cast<std::size_t>(plan.delta_floats) * sizeof(float));
    p.delta = scratch->floats();
  }
  if (plan.delta.kernel != nullptr) launch(s, plan.delta.kernel, attention_backward_shape<Backend>(plan.delta), p);
  if (!gradients(s, call, p))
    for (const AttentionBackwardStep* step : {&plan.dkdv, &plan.dq})
      if (step->kernel != nullptr) launch(s, step->kernel, attention_backward_shape<Backend>(*step), p);
  if (scratch) scratch->finish();
}

}  // namespace hal::gpu
