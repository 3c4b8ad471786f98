// Attention backward on the vector units, any head dims, strides and
// f32/f16/bf16 (kernel_params/attention_backward.h): the design of
// ptx/kernels/attention_backward_general.cu with one wave64 per row. Three
// kernels, launched in this order on one stream
// (backends/gpu/attention_backward_plan.h, warp_size 64):
//   hal_attention_bwd_delta_<t>         one wave per (batch, query, head): D_i = dy_i . y_i;
//   hal_attention_bwd_dkdv_general_<t>  one wave per (batch, kv head, key): dk_j, dv_j over
//                                       the query heads of the kv head (ascending), each
//                                       over the queries that see key j (ascending);
//   hal_attention_bwd_dq_general_<t>    one wave per (batch, query, head): dq_i over its
//                                       visible keys (ascending).
// Each output element is one wave's fixed chain of fp32 FMAs: no atomics, the
// same bits for any grid. Both gradient kernels compute P and dS with the same
// function. Lane t holds channels c0 + t + 64u (u < kPerLane) of a slice;
// wider heads take several slices. Only visible (query, key) pairs are read.
// f16/bf16 calls with d == dv in {64, 128} and 16-byte rows take the MFMA
// kernels (attention_backward_mfma.hip) instead.
#include <hip/hip_runtime.h>
#include <math.h>
#include <stdint.h>

#include "hip/float_convert.h"
#include "hip/wave.h"
#include "kernel_params/attention_backward.h"

using namespace hal::hip;
using namespace hal::kernel_params;

namespace {

constexpr int kThreads = 256;
constexpr int kWavesPerBlock = kThreads / kWaveSize;
constexpr int kPerLane = 4;
constexpr int kSlice = kWaveSize * kPerLane;

struct F32 {
  static __device__ __forceinline__ float ld(const void* b, int64_t i) { return static_cast<const float*>(b)[i]; }
  static __device__ __forceinline__ void st(void* b, int64_t i, float x) { static_cast<float*>(b)[i] = x; }
};
struct F16 {
  static __device__ __forceinline__ float ld(const void* b, int64_t i) {
    return f16_to_f32(static_cast<const uint16_t*>(b)[i]);
  }
  static __device__ __forceinline__ void st(void* b, int64_t i, float x) { static_cast<uint16_t*>(b)[i] = f32_to_f16(x); }
};
struct Bf16 {
  static __device__ __forceinline__ float ld(const void* b, int64_t i) {
    return bf16_to_f32(static_cast<const uint16_t*>(b)[i]);
  }
  static __device__ __forceinline__ void st(void* b, int64_t i, float x) { static_cast<uint16_t*>(b)[i] = f32_to_bf16(x); }
};

__device__ __forceinline__ int64_t row_of(const int64_t* st, int64_t b, int64_t i, int64_t h) {
  return b * st[0] + i * st[1] + h * st[2];
}

template <class E>
__device__ __forceinline__ void probability(const AttentionBackwardParams& p, int64_t qr, int64_t dyr, int64_t kr,
                                            int64_t vr, float lse, float delta, float& pij, float& dsij) {
  const int lane = lane_id();
  float s = 0.0f, dp = 0.0f;
  for (int c = lane; c < p.d; c += kWaveSize) s = fmaf(E::ld(p.q, qr + c * p.q_stride[3]), E::ld(p.k, kr + c * p.k_stride[3]), s);
  for (int c = lane; c < p.dv_dim; c += kWaveSize)
    dp = fmaf(E::ld(p.dy, dyr + c * p.dy_stride[3]), E::ld(p.v, vr + c * p.v_stride[3]), dp);
  s = wave_sum(s) * p.scale;
  dp = wave_sum(dp);
  pij = expf(s - lse);
  dsij = pij * (dp - delta);
}

template <class E> __device__ __forceinline__ void bwd_delta(const AttentionBackwardParams& p) {
  const int lane = lane_id();
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWavesPerBlock + wave_id();
  if (row >= p.batch * p.sq * p.hq) return;  // whole waves
  const int64_t h = row % p.hq, i = (row / p.hq) % p.sq, b = row / (static_cast<int64_t>(p.hq) * p.sq);
  const int64_t yr = row_of(p.y_stride, b, i, h), dyr = row_of(p.dy_stride, b, i, h);
  float acc = 0.0f;
  for (int c = lane; c < p.dv_dim; c += kWaveSize)
    acc = fmaf(E::ld(p.dy, dyr + c * p.dy_stride[3]), E::ld(p.y, yr + c * p.y_stride[3]), acc);
  acc = wave_sum(acc);
  if (lane == 0) p.delta[row] = acc;
}

template <class E> __device__ __forceinline__ void bwd_dkdv(const AttentionBackwardParams& p) {
  const int lane = lane_id();
  const int64_t w = static_cast<int64_t>(blockIdx.x) * kWavesPerBlock + wave_id();
  if (w >= p.batch * p.hkv * p.sk) return;
  const int64_t j = w % p.sk, kvh = (w / p.sk) % p.hkv, b = w / (p.sk * static_cast<int64_t>(p.hkv));
  const int64_t group = p.hq / p.hkv;
  const int64_t kr = row_of(p.k_stride, b, j, kvh), vr = row_of(p.v_stride, b, j, kvh);
  const int64_t i_first = first_query_of_key(p, j);
  const int width = p.d > p.dv_dim ? p.d : p.dv_dim;
  for (int c0 = 0; c0 < width; c0 += kSlice) {
    float dk[kPerLane], dv[kPerLane];
#pragma unroll
    for (int u = 0; u < kPerLane; ++u) dk[u] = dv[u] = 0.0f;
    for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h)
      for (int64_t i = i_first; i < p.sq; ++i) {
        const int64_t qr = row_of(p.q_stride, b, i, h), dyr = row_of(p.dy_stride, b, i, h);
        float pij, dsij;
        probability<E>(p, qr, dyr, kr, vr, p.lse[row_of(p.lse_stride, b, i, h)], p.delta[(b * p.sq + i) * p.hq + h],
                       pij, dsij);
#pragma unroll
        for (int u = 0; u < kPerLane; ++u) {
          const int c = c0 + lane + kWaveSize * u;
          if (c < p.d) dk[u] = fmaf(dsij, E::ld(p.q, qr + c * p.q_stride[3]), dk[u]);
          if (c < p.dv_dim) dv[u] = fmaf(pij, E::ld(p.dy, dyr + c * p.dy_stride[3]), dv[u]);
        }
      }
    const int64_t dkr = row_of(p.dk_stride, b, j, kvh), dvr = row_of(p.dv_stride, b, j, kvh);
#pragma unroll
    for (int u = 0; u < kPerLane; ++u) {
      const int c = c0 + lane + kWaveSize * u;
      if (c < p.d) E::st(p.dk, dkr + c * p.dk_stride[3], dk[u] * p.scale);
      if (c < p.dv_dim) E::st(p.dv, dvr + c * p.dv_stride[3], dv[u]);
    }
  }
}

template <class E> __device__ __forceinline__ void bwd_dq(const AttentionBackwardParams& p) {
  const int lane = lane_id();
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWavesPerBlock + wave_id();
  if (row >= p.batch * p.sq * p.hq) return;
  const int64_t h = row % p.hq, i = (row / p.hq) % p.sq, b = row / (static_cast<int64_t>(p.hq) * p.sq);
  const int64_t kvh = h / (p.hq / p.hkv);
  const int64_t qr = row_of(p.q_stride, b, i, h), dyr = row_of(p.dy_stride, b, i, h);
  const float lse = p.lse[row_of(p.lse_stride, b, i, h)], delta = p.delta[row];
  const int64_t keys = keys_of_query(p, i);
  for (int c0 = 0; c0 < p.d; c0 += kSlice) {
    float dq[kPerLane];
#pragma unroll
    for (int u = 0; u < kPerLane; ++u) dq[u] = 0.0f;
    for (int64_t j = 0; j < keys; ++j) {
      const int64_t kr = row_of(p.k_stride, b, j, kvh), vr = row_of(p.v_stride, b, j, kvh);
      float pij, dsij;
      probability<E>(p, qr, dyr, kr, vr, lse, delta, pij, dsij);
#pragma unroll
      for (int u = 0; u < kPerLane; ++u) {
        const int c = c0 + lane + kWaveSize * u;
        if (c < p.d) dq[u] = fmaf(dsij, E::ld(p.k, kr + c * p.k_stride[3]), dq[u]);
      }
    }
    const int64_t dqr = row_of(p.dq_stride, b, i, h);
#pragma unroll
    for (int u = 0; u < kPerLane; ++u) {
      const int c = c0 + lane + kWaveSize * u;
      if (c < p.d) E::st(p.dq, dqr + c * p.dq_stride[3], dq[u] * p.scale);
    }
  }
}

}  // namespace

// One macro per kernel, its name spelled out: cmake/embed_device_code.py
// finds kernel names in the macro's name argument.
#define HAL_BWD_KERNEL(name, fn, E) \
  extern "C" __global__ __launch_bounds__(kThreads) void name(AttentionBackwardParams p) { fn<E>(p); }
HAL_BWD_KERNEL(hal_attention_bwd_delta_f32, bwd_delta, F32)
HAL_BWD_KERNEL(hal_attention_bwd_delta_f16, bwd_delta, F16)
HAL_BWD_KERNEL(hal_attention_bwd_delta_bf16, bwd_delta, Bf16)
HAL_BWD_KERNEL(hal_attention_bwd_dkdv_general_f32, bwd_dkdv, F32)
HAL_BWD_KERNEL(hal_attention_bwd_dkdv_general_f16, bwd_dkdv, F16)
HAL_BWD_KERNEL(hal_attention_bwd_dkdv_general_bf16, bwd_dkdv, Bf16)
HAL_BWD_KERNEL(hal_attention_bwd_dq_general_f32, bwd_dq, F32)
HAL_BWD_KERNEL(hal_attention_bwd_dq_general_f16, bwd_dq, F16)
HAL_BWD_KERNEL(hal_attention_bwd_dq_general_bf16, bwd_dq, Bf16)
#undef HAL_BWD_KERNEL
