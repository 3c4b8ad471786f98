// Attention, general path: one wave64 per (batch, query, head) row, an online
// softmax over the keys (running max m, running sum l, rescaled accumulator),
// fp32 throughout. Lane t holds channels t, t+64, t+128, t+192 of q and of
// the output accumulator; each score is a wave_sum of the lanes' partial dot
// products. Correct for any strides, head dims up to 256, grouped-query heads
// and the causal mask; it does NOT use the matrix cores: K and V are re-read
// per query row. f16/bf16 calls with head dim 64 or 128 and 16-byte rows run
// on attention_flash.hip instead (the launcher, hip_attention.cpp, decides).
// A row whose keys are all masked gives zeros, as softmax does; a row of -inf
// scores NaN (l = 0: 0 * 1/0), a NaN score NaN, as cpu_ref
// (kernel_math/online_softmax.h).
//
// attention_general_lse also writes the row log-sum-exp (p.lse,
// kernel_params/attention.h) from a second running state (lm, ll), written
// when the y state's rescale still gave exp(-inf - -inf) = NaN; it shifts the
// same way, so that a row of -inf scores gives -inf and a NaN score NaN, as
// cpu_ref's row_lse.
#include <hip/hip_runtime.h>

#include "attention_geometry.h"
#include "hip/element.h"
#include "hip/wave.h"
#include "kernel_math/online_softmax.h"
#include "kernel_params/attention.h"

using namespace hal::hip;
using namespace hal::hip::kernels;
using namespace hal::kernel_params;
using hal::kernel_math::online_softmax_shift;

template <bool kLse>
__device__ __forceinline__ void attention_rows(const AttentionParams& p) {
  constexpr int kPerLane = kAttentionMaxHeadDim / kWaveSize;
  const int lane = lane_id();
  const int64_t rows = p.batch * p.sq * p.hq;
  const int64_t waves_in_grid = static_cast<int64_t>(gridDim.x) * (kAttentionThreads / kWaveSize);
  const int64_t group = p.hq / p.hkv;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * (kAttentionThreads / kWaveSize) + wave_id(); row < rows;
       row += waves_in_grid) {
    const int64_t h = row % p.hq;
    const int64_t i = (row / p.hq) % p.sq;
    const int64_t b = row / (p.hq * p.sq);
    const int64_t kvh = h / group;
    float q[kPerLane], acc[kPerLane];
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) {
      const int64_t c = lane + kWaveSize * t;
      q[t] = c < p.d ? load_f32(p.q, p.qkv_type, b * p.q_stride[0] + i * p.q_stride[1] + h * p.q_stride[2] + c * p.q_stride[3]) : 0.0f;
      acc[t] = 0.0f;
    }
    // Keys j > i + (sk - sq) are masked under causal.
    int64_t end = p.sk;
    if (p.causal) {
      const int64_t limit = i + (p.sk - p.sq) + 1;
      end = limit < 0 ? 0 : (limit < p.sk ? limit : p.sk);
    }
    float m = -INFINITY, l = 0.0f;
    float lm = -INFINITY, ll = 0.0f;  // kLse only
    for (int64_t j = 0; j < end; ++j) {
      const int64_t kb = b * p.k_stride[0] + j * p.k_stride[1] + kvh * p.k_stride[2];
      float part = 0.0f;
#pragma unroll
      for (int t = 0; t < kPerLane; ++t) {
        const int64_t c = lane + kWaveSize * t;
        if (c < p.d) part += q[t] * load_f32(p.k, p.qkv_type, kb + c * p.k_stride[3]);
      }
      const float s = wave_sum(part) * p.scale;
      const float m_new = fmaxf(m, s);
      // Shifted by 0 while every score so far is -inf: corr = w = 0, not
      // exp(-inf - -inf) = NaN (a leading -inf key made the whole row NaN).
      const float shift = online_softmax_shift(m_new);
      const float corr = expf(m - shift);
      const float w = expf(s - shift);  // NaN score -> NaN weight -> NaN row, as softmax
      l = l * corr + w;
      if (kLse) {
        const float lm_use = m_new == -INFINITY ? 0.0f : m_new;
        ll = ll * expf(lm - lm_use) + expf(s - lm_use);
        lm = m_new;
      }
      const int64_t vb = b * p.v_stride[0] + j * p.v_stride[1] + kvh * p.v_stride[2];
#pragma unroll
      for (int t = 0; t < kPerLane; ++t) {
        const int64_t c = lane + kWaveSize * t;
        if (c < p.dv) acc[t] = acc[t] * corr + w * load_f32(p.v, p.qkv_type, vb + c * p.v_stride[3]);
      }
      m = m_new;
    }
    const float inv_l = end > 0 ? 1.0f / l : 0.0f;
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) {
      const int64_t c = lane + kWaveSize * t;
      if (c < p.dv)
        store_f32(p.y, p.y_type, b * p.y_stride[0] + i * p.y_stride[1] + h * p.y_stride[2] + c * p.y_stride[3],
                  end > 0 ? acc[t] * inv_l : 0.0f);
    }
    if (kLse && lane == 0) p.lse[b * p.lse_stride[0] + i * p.lse_stride[1] + h * p.lse_stride[2]] = lm + logf(ll);
  }
}

extern "C" __global__ __launch_bounds__(kAttentionThreads) void attention_general(AttentionParams p) {
  attention_rows<false>(p);
}
extern "C" __global__ __launch_bounds__(kAttentionThreads) void attention_general_lse(AttentionParams p) {
  attention_rows<true>(p);
}
