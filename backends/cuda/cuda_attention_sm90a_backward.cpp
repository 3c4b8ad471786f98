// Host side of the sm_90a attention backward (ptx/kernels/attention_sm90a_backward.cu):
// the plan (cuda_attention_sm90a_backward_plan.h, tested on the CPU), TMA
// descriptors of the four views of each kernel (cuda_attention_tma.h), two launches.
#include "backends/cuda/cuda_attention_sm90a_backward.h"

#include <atomic>

#include "backends/cuda/cuda_attention_sm90a_backward_plan.h"
#include "backends/cuda/cuda_attention_tma.h"
#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/cuda_launch.h"
#include "backends/cuda/cuda_paths.h"
#include "backends/cuda/cuda_stream.h"
#include "backends/gpu/unverified.h"
#include "kernel_params/attention_backward.h"
#include "ptx/kernels/attention_sm90a_backward_params.h"

namespace hal::cuda {

namespace {

std::atomic<std::uint64_t> g_launches{0};

bool encode_kernel(ptx::AttentionSm90aBwdParams& k, const AttentionSm90aBwdKernel& plan,
                   const AttentionBackwardCall& call) {
  const DType t = call.q.dtype;
  return encode_attention_view(k.q_map, call.q.first(), t, plan.q) &&
         encode_attention_view(k.k_map, call.k.first(), t, plan.k) &&
         encode_attention_view(k.v_map, call.v.first(), t, plan.v) &&
         encode_attention_view(k.dy_map, call.dy.first(), t, plan.dy);
}

LaunchShape shape_of(const AttentionSm90aBwdKernel& plan) {
  LaunchShape shape;
  for (int i = 0; i < 3; ++i) shape.grid[i] = plan.grid[i];
  shape.block[0] = plan.threads;
  shape.shared_bytes = plan.shared_bytes;
  return shape;
}

}  // namespace

std::uint64_t attention_backward_sm90a_launch_count() noexcept { return g_launches.load(); }

bool attention_backward_sm90a_switched_on() {
  return gpu::unverified_kernels_enabled() && path_enabled("wgmma_attention") && path_enabled("wgmma_attention_bwd");
}

bool try_attention_backward_sm90a(CudaStream& s, const AttentionBackwardCall& call,
                                  const kernel_params::AttentionBackwardParams& p) {
  if (!attention_backward_sm90a_switched_on()) return false;
  const CudaDeviceCaps& caps = stream_caps(s);
  AttentionSm90aDevice dev;
  dev.cc_major = caps.cc_major;
  dev.has_sm90a_kernels = caps.has_sm90a_kernels;
  dev.sm_count = caps.sm_count;
  dev.max_shared_per_block_optin = caps.max_shared_per_block_optin;
  bool aligned = true;
  for (const Tensor* t : {&call.q, &call.k, &call.v, &call.dy, &call.dq, &call.dk, &call.dv})
    aligned = aligned && tma_aligned(t->first());
  const AttentionSm90aBwdPlan plan = plan_attention_backward_sm90a(p, aligned, dev);
  if (!plan.fits) return false;

  // Both kernels' descriptors before either launch: a failed encode leaves
  // the call to the mma.sync kernels with nothing launched.
  ptx::AttentionSm90aBwdParams dkdv{}, dq{};
  if (!encode_kernel(dkdv, plan.dkdv, call) || !encode_kernel(dq, plan.dq, call)) return false;
  dkdv.a = p;
  dq.a = p;
  launch(s, plan.dkdv.kernel, shape_of(plan.dkdv), dkdv);
  launch(s, plan.dq.kernel, shape_of(plan.dq), dq);
  g_launches.fetch_add(2, std::memory_order_relaxed);
  return true;
}

}  // namespace hal::cuda
