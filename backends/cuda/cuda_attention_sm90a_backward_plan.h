#pragma once
// Host-side plan of the sm_90a attention backward
// (ptx/kernels/attention_sm90a_backward.cu): whether a call fits it, its two
// kernels, their grids and shared memory, and the 4-D TMA views each kernel
// reads (Q, K, V, dY; the box rows differ between the two kernels). Pure C++
// (no CUDA headers), tested on the CPU
// (tests/unit/attention_sm90a_backward_plan_test.cpp); the launcher
// (cuda_attention_sm90a_backward.cpp) only encodes the views and launches,
// after hal_attention_bwd_delta_<t> of the shared GPU plan
// (backends/gpu/attention_backward_plan.h).
#include <cstdint>

#include "backends/cuda/cuda_attention_sm90a_plan.h"  // TmaView4D, AttentionSm90aDevice, make_view
#include "hal/dtype.h"
#include "kernel_params/attention_backward.h"
#include "ptx/kernels/attention_sm90a_backward_params.h"

namespace hal::cuda {

// One kernel's launch and its views.
struct AttentionSm90aBwdKernel {
  const char* kernel = nullptr;
  TmaView4D q, k, v, dy;
  unsigned grid[3] = {1, 1, 1};
  unsigned threads = 0, shared_bytes = 0;
};

struct AttentionSm90aBwdPlan {
  bool fits = false;  // false: `why` says which rule failed; nothing is launched
  const char* why = "";
  AttentionSm90aBwdKernel dkdv, dq;  // launched in this order, after the delta kernel
};

namespace attention_sm90a_bwd_detail {

inline constexpr std::int64_t kMaxGridYZ = 65535;

// dq / dk / dv are stored from registers as 4-byte pairs; rows 16-byte
// aligned like the mma.sync kernels' (the launcher checks the bases).
inline bool gradient_rows_ok(const std::int64_t (&stride)[4]) {
  return stride[3] == 1 && stride[0] % 8 == 0 && stride[1] % 8 == 0 && stride[2] % 8 == 0;
}

// The views, grid and shared memory of one head dim.
template <int D>
bool fill(AttentionSm90aBwdPlan& plan, const kernel_params::AttentionBackwardParams& p) {
  using attention_sm90a_detail::make_view;
  using Dkdv = ptx::AttentionSm90aBwdDkdvTile<D>;
  using Dq = ptx::AttentionSm90aBwdDqTile<D>;
  const auto rows = [](int r) { return static_cast<std::uint32_t>(r); };
  AttentionSm90aBwdKernel& a = plan.dkdv;
  if (!make_view(a.q, p.batch, p.sq, p.hq, p.d, p.q_stride, rows(Dkdv::kBlockM)) ||
      !make_view(a.dy, p.batch, p.sq, p.hq, p.dv_dim, p.dy_stride, rows(Dkdv::kBlockM)) ||
      !make_view(a.k, p.batch, p.sk, p.hkv, p.d, p.k_stride, rows(Dkdv::kBlockN)) ||
      !make_view(a.v, p.batch, p.sk, p.hkv, p.dv_dim, p.v_stride, rows(Dkdv::kBlockN)))
    return false;
  a.grid[0] = static_cast<unsigned>((p.sk + Dkdv::kBlockN - 1) / Dkdv::kBlockN);
  a.grid[1] = static_cast<unsigned>(p.hkv);
  a.grid[2] = static_cast<unsigned>(p.batch);
  a.threads = Dkdv::kThreads;
  a.shared_bytes = Dkdv::kSharedBytes;
  AttentionSm90aBwdKernel& q = plan.dq;
  if (!make_view(q.q, p.batch, p.sq, p.hq, p.d, p.q_stride, rows(Dq::kBlockM)) ||
      !make_view(q.dy, p.batch, p.sq, p.hq, p.dv_dim, p.dy_stride, rows(Dq::kBlockM)) ||
      !make_view(q.k, p.batch, p.sk, p.hkv, p.d, p.k_stride, rows(Dq::kBlockN)) ||
      !make_view(q.v, p.batch, p.sk, p.hkv, p.dv_dim, p.v_stride, rows(Dq::kBlockN)))
    return false;
  q.grid[0] = static_cast<unsigned>((p.sq + Dq::kBlockM - 1) / Dq::kBlockM);
  q.grid[1] = static_cast<unsigned>(p.hq);
  q.grid[2] = static_cast<unsigned>(p.batch);
  q.threads = Dq::kThreads;
  q.shared_bytes = Dq::kSharedBytes;
  return true;
}

}  // namespace attention_sm90a_bwd_detail

// `p` as gpu::attention_backward_params packs it; `bases_aligned16`: q, k,
// v, dy, dq, dk and dv start at 16-byte-aligned addresses.
inline AttentionSm90aBwdPlan plan_attention_backward_sm90a(const kernel_params::AttentionBackwardParams& p,
                                                           bool bases_aligned16, const AttentionSm90aDevice& dev) {
  using namespace attention_sm90a_bwd_detail;
  using attention_sm90a_detail::kMaxI32;
  AttentionSm90aBwdPlan plan;
  auto no = [&](const char* why) {
    AttentionSm90aBwdPlan none;
    none.why = why;
    return none;
  };
  const auto f16 = static_cast<std::uint8_t>(DType::f16), bf16 = static_cast<std::uint8_t>(DType::bf16);
  if (dev.cc_major != 9 || !dev.has_sm90a_kernels) return no("not an sm_90 device with sm_90a code");
  if (p.dtype != f16 && p.dtype != bf16) return no("f16 or bf16 only");
  if (p.d != p.dv_dim || (p.d != 64 && p.d != 128)) return no("d == dv in {64, 128} only");
  if (p.hkv <= 0 || p.hq <= 0 || p.hq % p.hkv != 0) return no("hq a multiple of hkv");
  // Empty calls (no query or no key) stay on the mma.sync path, which handles them.
  if (p.batch <= 0 || p.sq <= 0 || p.sk <= 0) return no("empty call");
  if (p.sq > kMaxI32 || p.sk > kMaxI32) return no("sq and sk below 2^31 (TMA coordinates)");
  if (p.batch > kMaxGridYZ || p.hq > kMaxGridYZ) return no("batch and hq at most 65535 (grid y / z)");
  if (!bases_aligned16 || !gradient_rows_ok(p.dq_stride) || !gradient_rows_ok(p.dk_stride) ||
      !gradient_rows_ok(p.dv_stride))
    return no("16-byte-aligned bases and gradient rows");
  const bool ok = p.d == 64 ? fill<64>(plan, p) : fill<128>(plan, p);
  if (!ok) return no("q/k/v/dy strides not TMA views (channel stride 1, others positive multiples of 8 elements)");
  const unsigned shared = plan.dkdv.shared_bytes > plan.dq.shared_bytes ? plan.dkdv.shared_bytes : plan.dq.shared_bytes;
  if (dev.max_shared_per_block_optin < static_cast<int>(shared))
    return no("the device grants less shared memory than the tiles need");
  const bool is_f16 = p.dtype == f16, d64 = p.d == 64;
  plan.dkdv.kernel = is_f16 ? (d64 ? "hal_attention_bwd_dkdv_sm90a_f16_d64" : "hal_attention_bwd_dkdv_sm90a_f16_d128")
                            : (d64 ? "hal_attention_bwd_dkdv_sm90a_bf16_d64" : "hal_attention_bwd_dkdv_sm90a_bf16_d128");
  plan.dq.kernel = is_f16 ? (d64 ? "hal_attention_bwd_dq_sm90a_f16_d64" : "hal_attention_bwd_dq_sm90a_f16_d128")
                          : (d64 ? "hal_attention_bwd_dq_sm90a_bf16_d64" : "hal_attention_bwd_dq_sm90a_bf16_d128");
  plan.fits = true;
  return plan;
}

}  // namespace hal::cuda
