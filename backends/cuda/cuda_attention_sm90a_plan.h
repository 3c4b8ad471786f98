#pragma once
// Host-side plan of the sm_90a attention kernel (ptx/kernels/attention_sm90a.cu):
// whether a call fits it, which kernel, the persistent grid, and the 4-D TMA
// views of Q, K and V. Pure C++ (no CUDA headers), so every rule is tested
// on the CPU (tests/unit/attention_sm90a_plan_test.cpp); the launcher
// (cuda_attention_sm90a.cpp) only encodes the views and launches.
#include <algorithm>
#include <cstdint>
#include <string_view>

#include "hal/dtype.h"
#include "kernel_params/attention.h"
#include "ptx/kernels/attention_sm90a_params.h"

namespace hal::cuda {

// cuTensorMapEncodeTiled's arguments for one tensor, rank 4:
// (channel, sequence, head, batch), channel contiguous, 16-bit elements.
struct TmaView4D {
  std::uint64_t dims[4] = {0, 0, 0, 0};
  std::uint64_t strides_bytes[3] = {0, 0, 0};  // of dims 1, 2, 3
  std::uint32_t box[4] = {0, 0, 0, 0};
};

// What the plan needs to know about the device.
struct AttentionSm90aDevice {
  int cc_major = 0;
  bool has_sm90a_kernels = false;
  int sm_count = 0;
  int max_shared_per_block_optin = 0;  // bytes
};

struct AttentionSm90aPlan {
  const char* kernel = nullptr;  // nullptr: the call does not fit; `why` says which rule failed
  const char* why = "";
  ptx::AttentionSm90aSchedule schedule = ptx::AttentionSm90aSchedule::serial;
  TmaView4D q, k, v;
  TmaView4D y;  // the TMA store's view (overlap, pingpong); box rows kYRowsPerConsumer
  unsigned grid = 0, threads = 0, shared_bytes = 0;
  std::int32_t m_tiles = 0, items = 0;
};

namespace attention_sm90a_detail {

inline constexpr std::int64_t kMaxI32 = 0x7fffffffLL;

// A TMA view of t [b, s, h, c] with strides in elements (b, s, h, c order).
// Each stride must be a positive multiple of 16 bytes below 2^40 where its
// dim has more than one element; a dim of one element takes a harmless
// stride (its coordinate is always 0). False when the tensor cannot be a view.
inline bool make_view(TmaView4D& v, std::int64_t b, std::int64_t s, std::int64_t h, std::int64_t c,
                      const std::int64_t (&stride)[4], std::uint32_t box_rows) {
  if (stride[3] != 1) return false;
  const std::int64_t sizes[3] = {s, h, b};
  const std::int64_t strides[3] = {stride[1], stride[2], stride[0]};
  v.dims[0] = static_cast<std::uint64_t>(c);
  std::int64_t fallback = c * 2;  // bytes of one row: valid for a one-element dim
  fallback = (fallback + 15) / 16 * 16;
  for (int i = 0; i < 3; ++i) {
    if (sizes[i] <= 0 || sizes[i] > kMaxI32) return false;
    v.dims[i + 1] = static_cast<std::uint64_t>(sizes[i]);
    std::int64_t bytes = strides[i] * 2;
    if (sizes[i] == 1) bytes = fallback;
    if (bytes <= 0 || bytes % 16 != 0 || bytes >= (std::int64_t{1} << 40)) return false;
    v.strides_bytes[i] = static_cast<std::uint64_t>(bytes);
  }
  v.box[0] = 64;  // 128 bytes: the 128B swizzle span
  v.box[1] = box_rows;
  v.box[2] = v.box[3] = 1;
  return true;
}

inline bool row_pairs_ok(const std::int64_t (&stride)[4]) {
  // y is stored as 4-byte pairs from registers; the launcher also checks the base address.
  return stride[3] == 1 && stride[0] % 8 == 0 && stride[1] % 8 == 0 && stride[2] % 8 == 0;
}

// hal_attention_sm90a_<f16|bf16>_d<64|128>[_overlap|_pingpong].
inline const char* kernel_name(bool f16, bool d64, ptx::AttentionSm90aSchedule s) {
  static const char* const names[3][4] = {
      {"hal_attention_sm90a_f16_d64", "hal_attention_sm90a_f16_d128", "hal_attention_sm90a_bf16_d64",
       "hal_attention_sm90a_bf16_d128"},
      {"hal_attention_sm90a_f16_d64_overlap", "hal_attention_sm90a_f16_d128_overlap",
       "hal_attention_sm90a_bf16_d64_overlap", "hal_attention_sm90a_bf16_d128_overlap"},
      {"hal_attention_sm90a_f16_d64_pingpong", "hal_attention_sm90a_f16_d128_pingpong",
       "hal_attention_sm90a_bf16_d64_pingpong", "hal_attention_sm90a_bf16_d128_pingpong"}};
  return names[static_cast<int>(s)][(f16 ? 0 : 2) + (d64 ? 0 : 1)];
}

}  // namespace attention_sm90a_detail

// HAL_ATTENTION_SM90A_SCHEDULE's values: "serial" (or unset / empty),
// "overlap", "pingpong". False for anything else (the launcher reports it).
inline bool parse_attention_sm90a_schedule(const char* v, ptx::AttentionSm90aSchedule& out) {
  const std::string_view s = v == nullptr ? std::string_view{} : std::string_view{v};
  if (s.empty() || s == "serial") {
    out = ptx::AttentionSm90aSchedule::serial;
  } else if (s == "overlap") {
    out = ptx::AttentionSm90aSchedule::overlap;
  } else if (s == "pingpong") {
    out = ptx::AttentionSm90aSchedule::pingpong;
  } else {
    return false;
  }
  return true;
}

// `p` as gpu::attention_params packs it; `bases_aligned16`: q, k, v and y
// start at 16-byte-aligned addresses; `schedule`: the kernel variant
// (overlap and pingpong only where built, kAttentionSm90aOverlapSchedulesBuilt).
inline AttentionSm90aPlan plan_attention_sm90a(const kernel_params::AttentionParams& p, bool bases_aligned16,
                                               const AttentionSm90aDevice& dev,
                                               ptx::AttentionSm90aSchedule schedule = ptx::AttentionSm90aSchedule::serial) {
  using namespace attention_sm90a_detail;
  AttentionSm90aPlan plan;
  auto no = [&](const char* why) {
    plan.kernel = nullptr;
    plan.why = why;
    return plan;
  };
  const auto f16 = static_cast<std::uint8_t>(DType::f16), bf16 = static_cast<std::uint8_t>(DType::bf16);
  const bool serial = schedule == ptx::AttentionSm90aSchedule::serial;
  if (!serial && !ptx::kAttentionSm90aOverlapSchedulesBuilt)
    return no("the overlap / pingpong schedules are not built "
              "(HAL_ATTENTION_SM90A_OVERLAP_SCHEDULES in attention_sm90a_params.h is 0)");
  if (dev.cc_major != 9 || !dev.has_sm90a_kernels || dev.sm_count <= 0) return no("not an sm_90 device with sm_90a code");
  if (p.qkv_type != p.y_type || (p.qkv_type != f16 && p.qkv_type != bf16)) return no("q/k/v/y not one dtype, f16 or bf16");
  if (p.d != p.dv || (p.d != 64 && p.d != 128)) return no("d == dv in {64, 128} only");
  if (p.hkv <= 0 || p.hq <= 0 || p.hq % p.hkv != 0) return no("hq a multiple of hkv");
  if (p.batch <= 0 || p.sq <= 0 || p.sk <= 0) return no("empty call");
  if (p.sq > kMaxI32 || p.sk > kMaxI32 || p.batch > kMaxI32) return no("sq, sk and batch below 2^31 (TMA coordinates)");
  if (!bases_aligned16 || !row_pairs_ok(p.y_stride)) return no("16-byte-aligned bases and y rows");
  const bool d64 = p.d == 64, is_bf16 = p.qkv_type == bf16;
  const int block_q = d64 ? ptx::AttentionSm90aTile<64>::kBlockQ : ptx::AttentionSm90aTile<128>::kBlockQ;
  // The schedule's tile (overlap / pingpong: 64 keys, bf16 d 128: 32): the
  // K / V boxes and the shared memory follow it.
  const int block_k = ptx::attention_sm90a_block_k(schedule, static_cast<int>(p.d), is_bf16);
  const int shared = ptx::attention_sm90a_shared_bytes(schedule, static_cast<int>(p.d), is_bf16);
  const int threads = d64 ? ptx::AttentionSm90aTile<64>::kThreads : ptx::AttentionSm90aTile<128>::kThreads;
  if (dev.max_shared_per_block_optin < shared) return no("the device grants less shared memory than the tile needs");
  if (!make_view(plan.q, p.batch, p.sq, p.hq, p.d, p.q_stride, static_cast<std::uint32_t>(block_q)) ||
      !make_view(plan.k, p.batch, p.sk, p.hkv, p.d, p.k_stride, static_cast<std::uint32_t>(block_k)) ||
      !make_view(plan.v, p.batch, p.sk, p.hkv, p.dv, p.v_stride, static_cast<std::uint32_t>(block_k)))
    return no("q/k/v strides not TMA views (channel stride 1, others positive multiples of 8 elements)");
  if (!serial && !make_view(plan.y, p.batch, p.sq, p.hq, p.dv, p.y_stride,
                            static_cast<std::uint32_t>(ptx::AttentionSm90aTile<64>::kYRowsPerConsumer)))
    return no("y strides not a TMA view (the overlap / pingpong store)");
  const std::int64_t m_tiles = (p.sq + block_q - 1) / block_q;
  const std::int64_t items = m_tiles * p.hq * p.batch;
  if (items > kMaxI32) return no("at most 2^31 - 1 work items (query tiles x heads x batch)");
  plan.m_tiles = static_cast<std::int32_t>(m_tiles);
  plan.items = static_cast<std::int32_t>(items);
  plan.grid = static_cast<unsigned>(std::min<std::int64_t>(dev.sm_count, items));
  plan.threads = static_cast<unsigned>(threads);
  plan.shared_bytes = static_cast<unsigned>(shared);
  plan.schedule = schedule;
  plan.kernel = kernel_name(p.qkv_type == f16, d64, schedule);
  return plan;
}

}  // namespace hal::cuda
