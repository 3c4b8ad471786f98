// Host side of the sm_90a attention kernel (ptx/kernels/attention_sm90a.cu):
// the plan (cuda_attention_sm90a_plan.h, tested on the CPU), TMA descriptor
// encoding of its three views, persistent launch over the device's SMs.
#include "backends/cuda/cuda_attention_sm90a.h"

#include <atomic>
#include <cstdlib>
#include <string>

#include "backends/cuda/cuda_attention_sm90a_plan.h"
#include "backends/cuda/cuda_attention_tma.h"
#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/cuda_launch.h"
#include "backends/cuda/cuda_paths.h"
#include "backends/cuda/cuda_stream.h"
#include "backends/gpu/unverified.h"
#include "hal/error.h"
#include "ptx/kernels/attention_sm90a_params.h"

namespace hal::cuda {

namespace {

std::atomic<std::uint64_t> g_launches{0};

// HAL_ATTENTION_SM90A_SCHEDULE, read once: serial (default), overlap, pingpong.
ptx::AttentionSm90aSchedule schedule_from_env() {
  static const ptx::AttentionSm90aSchedule s = [] {
    const char* v = std::getenv("HAL_ATTENTION_SM90A_SCHEDULE");
    ptx::AttentionSm90aSchedule out{};
    if (!parse_attention_sm90a_schedule(v, out))
      throw Error(ErrorCode::invalid_argument, std::string("attention (sm_90a): HAL_ATTENTION_SM90A_SCHEDULE: expected serial, overlap or "
                              "pingpong, got \"") +
                  v + "\"");
    return out;
  }();
  return s;
}

}  // namespace

std::uint64_t attention_sm90a_launch_count() noexcept { return g_launches.load(); }

bool attention_sm90a_switched_on() { return gpu::unverified_kernels_enabled() && path_enabled("wgmma_attention"); }

bool try_attention_sm90a(CudaStream& s, const AttentionCall& call, const kernel_params::AttentionParams& p) {
  if (!attention_sm90a_switched_on()) return false;
  const CudaDeviceCaps& caps = stream_caps(s);
  AttentionSm90aDevice dev;
  dev.cc_major = caps.cc_major;
  dev.has_sm90a_kernels = caps.has_sm90a_kernels;
  dev.sm_count = caps.sm_count;
  dev.max_shared_per_block_optin = caps.max_shared_per_block_optin;
  bool aligned = true;
  for (const Tensor* t : {&call.q, &call.k, &call.v, &call.y}) aligned = aligned && tma_aligned(t->first());
  const AttentionSm90aPlan plan = plan_attention_sm90a(p, aligned, dev, schedule_from_env());
  if (plan.kernel == nullptr) return false;

  ptx::AttentionSm90aParams k{};
  const DType t = call.q.dtype;
  if (!encode_attention_view(k.q_map, call.q.first(), t, plan.q) ||
      !encode_attention_view(k.k_map, call.k.first(), t, plan.k) ||
      !encode_attention_view(k.v_map, call.v.first(), t, plan.v))
    return false;
  if (plan.schedule != ptx::AttentionSm90aSchedule::serial &&
      !encode_attention_view(k.y_map, call.y.first(), t, plan.y))
    return false;
  k.a = p;
  k.m_tiles = plan.m_tiles;
  k.items = plan.items;
  LaunchShape shape;
  shape.grid[0] = plan.grid;
  shape.block[0] = plan.threads;
  shape.shared_bytes = plan.shared_bytes;
  launch(s, plan.kernel, shape, k);
  g_launches.fetch_add(1, std::memory_order_relaxed);
  return true;
}

}  // namespace hal::cuda
