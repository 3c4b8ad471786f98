// Host side of the sm_90a attention kernel (ptx/kernels/attention_sm90a.cu):
// the plan (cuda_attention_sm90a_plan.h, tested on the CPU), TMA descriptor
// encoding of its three views, persistent launch over the device's SMs.
#include "backends/cuda/cuda_attention_sm90a.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backends/cuda/cuda_attention_sm90a_plan.h"
#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/cuda_launch.h"
#include "backends/cuda/cuda_paths.h"
#include "backends/cuda/cuda_stream.h"
#include "backends/gpu/unverified.h"
#include "hal/error.h"
#include "ptx/kernels/attention_sm90a_params.h"

namespace hal::cuda {

namespace {

static_assert(sizeof(CUtensorMap) == sizeof(ptx::TmaDescriptorBytes), "opaque TMA descriptor must match CUtensorMap");

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

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// 128B swizzle (64 channels of 16 bits a row), zero fill out of bounds: Q rows
// past sq and K/V rows past sk read as 0 (a V row of garbage would turn
// 0 * NaN into NaN).
bool encode_view(ptx::TmaDescriptorBytes& out, const void* base, DType t, const TmaView4D& v) {
  const Driver* d = driver();
  if (d == nullptr || d->cuTensorMapEncodeTiled == nullptr) return false;
  CUtensorMap map;
  cuuint64_t dims[4], strides[3];
  cuuint32_t box[4];
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  for (int i = 0; i < 4; ++i) {
    dims[i] = static_cast<cuuint64_t>(v.dims[i]);
    box[i] = static_cast<cuuint32_t>(v.box[i]);
  }
  for (int i = 0; i < 3; ++i) strides[i] = static_cast<cuuint64_t>(v.strides_bytes[i]);
  const CUresult r = d->cuTensorMapEncodeTiled(
      &map, t == DType::f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4,
      const_cast<void*>(base), dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return false;
  std::memcpy(out.bytes, &map, sizeof(map));
  return true;
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
  for (const Tensor* t : {&call.q, &call.k, &call.v, &call.y}) aligned = aligned && aligned16(t->first());
  const AttentionSm90aPlan plan = plan_attention_sm90a(p, aligned, dev, schedule_from_env());
  if (plan.kernel == nullptr) return false;

  ptx::AttentionSm90aParams k{};
  const DType t = call.q.dtype;
  if (!encode_view(k.q_map, call.q.first(), t, plan.q) || !encode_view(k.k_map, call.k.first(), t, plan.k) ||
      !encode_view(k.v_map, call.v.first(), t, plan.v))
    return false;
  if (plan.schedule != ptx::AttentionSm90aSchedule::serial && !encode_view(k.y_map, call.y.first(), t, plan.y))
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
