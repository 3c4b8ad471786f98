// General attention: any head dims, any strides, f32/f16/bf16. One warp per
// (batch, query, head); keys are taken 32 at a time (one per lane computes its
// score), the block's max rescales the running output (online softmax), and
// each lane accumulates its own output channels (lane, lane + 32, ...).
// Output channels are processed in slices of kMaxDvSlice (the scores are
// recomputed per slice), so every dv works. The correct-for-every-call
// fallback behind the tensor-core kernel.
//
// hal_attention_general_lse also writes the row log-sum-exp (p.lse,
// kernel_params/attention.h): m + log(l) of the same running state, in
// natural units since the scores here are not in the log2 domain; a NaN score
// seen anywhere makes it NaN (nan_seen, written before the running state
// carried NaN blocks; it is kept so the lse kernel's answer does not rest on
// the state alone). With dv == 0 the slice loop still runs once, for lse.
//
// Special values (kernel_math/online_softmax.h, as cpu_ref): no visible key
// gives zeros, a row of -inf scores NaN, a NaN score NaN.
#include <math.h>

#include "ptx/element.cuh"
#include "kernel_math/online_softmax.h"
#include "kernel_params/attention.h"

namespace {
constexpr int kWarpsPerBlock = 8;
constexpr int kPerLane = 16;  // output channels per lane and slice
constexpr int kMaxDvSlice = 32 * kPerLane;
}  // namespace

using namespace hal::ptx;
using namespace hal::kernel_params;
using hal::kernel_math::online_softmax_block_max;
using hal::kernel_math::online_softmax_output;

template <bool kLse>
__device__ __forceinline__ void attention_general(const AttentionParams& p) {
  const int lane = threadIdx.x % 32;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int64_t rows = p.batch * p.sq * p.hq;
  if (row >= rows) return;  // whole warps
  const ElemType t = static_cast<ElemType>(p.qkv_type), yt = static_cast<ElemType>(p.y_type);
  const int h = static_cast<int>(row % p.hq);
  const int64_t i = (row / p.hq) % p.sq;
  const int64_t b = row / (static_cast<int64_t>(p.hq) * p.sq);
  const int kvh = h / (p.hq / p.hkv);

  int64_t valid = p.sk;
  if (p.causal) {
    const int64_t last = i + (p.sk - p.sq);
    valid = last < 0 ? 0 : (last + 1 < p.sk ? last + 1 : p.sk);
  }
  const int64_t q0 = b * p.q_stride[0] + i * p.q_stride[1] + h * p.q_stride[2];
  const int64_t k0 = b * p.k_stride[0] + kvh * p.k_stride[2];
  const int64_t v0 = b * p.v_stride[0] + kvh * p.v_stride[2];
  const int64_t y0 = b * p.y_stride[0] + i * p.y_stride[1] + h * p.y_stride[2];

  for (int c0 = 0; c0 < p.dv || (kLse && c0 == 0); c0 += kMaxDvSlice) {
    bool nan_seen = false;  // kLse only
    float acc[kPerLane];
#pragma unroll
    for (int u = 0; u < kPerLane; ++u) acc[u] = 0.0f;
    float m = -INFINITY, l = 0.0f;
    for (int64_t j0 = 0; j0 < valid; j0 += 32) {
      const int64_t j = j0 + lane;
      float s = -INFINITY;
      if (j < valid) {
        float dot = 0.0f;
        const int64_t kr = k0 + j * p.k_stride[1];
        for (int c = 0; c < p.d; ++c)
          dot = fmaf(load_as_float(p.q, t, q0 + c * p.q_stride[3]), load_as_float(p.k, t, kr + c * p.k_stride[3]), dot);
        s = p.scale * dot;
      }
      const bool blk_nan = __any_sync(0xffffffffu, s != s);
      if (kLse) nan_seen = nan_seen || blk_nan;
      float blk_max = s;
      for (int off = 16; off > 0; off >>= 1) blk_max = fmaxf(blk_max, __shfl_xor_sync(0xffffffffu, blk_max, off));
      // fmaxf drops NaN: a block of NaN (and -inf) scores would otherwise be
      // skipped below and the row end as zeros, not NaN.
      const float m_new = online_softmax_block_max(m, blk_max, blk_nan);
      if (m_new == -INFINITY) continue;  // every score so far is -inf: nothing to add
      const float corr = expf(m - m_new);  // 0 when m was -inf
      const float pj = (j < valid) ? expf(s - m_new) : 0.0f;  // NaN score -> NaN, propagates
      float psum = pj;
      for (int off = 16; off > 0; off >>= 1) psum += __shfl_xor_sync(0xffffffffu, psum, off);
      l = l * corr + psum;
#pragma unroll
      for (int u = 0; u < kPerLane; ++u) acc[u] *= corr;
      const int n_keys = valid - j0 < 32 ? static_cast<int>(valid - j0) : 32;
      for (int jj = 0; jj < n_keys; ++jj) {
        const float w = __shfl_sync(0xffffffffu, pj, jj);
        const int64_t vr = v0 + (j0 + jj) * p.v_stride[1];
#pragma unroll
        for (int u = 0; u < kPerLane; ++u) {
          const int c = c0 + lane + 32 * u;
          if (c < p.dv) acc[u] = fmaf(w, load_as_float(p.v, t, vr + c * p.v_stride[3]), acc[u]);
        }
      }
      m = m_new;
    }
    // Zeros only for a row with no visible key; a row of -inf scores
    // (l = 0) gives 0 / 0 = NaN, as softmax and cpu_ref do.
#pragma unroll
    for (int u = 0; u < kPerLane; ++u) {
      const int c = c0 + lane + 32 * u;
      if (c < p.dv) store_from_float(p.y, yt, y0 + c * p.y_stride[3], online_softmax_output(acc[u], l, valid > 0));
    }
    // m = -inf, l = 0 (no key, or every score -inf) gives -inf + log(0) = -inf.
    if (kLse && c0 == 0 && lane == 0)
      p.lse[b * p.lse_stride[0] + i * p.lse_stride[1] + h * p.lse_stride[2]] = nan_seen ? NAN : m + logf(l);
  }
}

extern "C" __global__ void __launch_bounds__(32 * kWarpsPerBlock) hal_attention_general(AttentionParams p) {
  attention_general<false>(p);
}
extern "C" __global__ void __launch_bounds__(32 * kWarpsPerBlock) hal_attention_general_lse(AttentionParams p) {
  attention_general<true>(p);
}
