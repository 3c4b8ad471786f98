#pragma once
// Parameters of the attention backward kernels (ptx/kernels/attention_backward_*.cu,
// hip/kernels/attention_backward_*.hip); packed by backends/gpu/kernel_args_training.cpp
// (attention_backward_params), launched in the order of
// backends/gpu/attention_backward_plan.h.
//
//   P = exp(scale Q K^T + mask - lse); D_i = dy_i . y_i;
//   dV = P^T dY; dS = P * (dY V^T - D); dQ = scale dS K; dK = scale dS^T Q
// (hal/op_training.h, AttentionBackwardCall). q, dq [b, sq, hq, d]; k, dk
// [b, sk, hkv, d]; v, dv [b, sk, hkv, dv]; y, dy [b, sq, hq, dv]; lse f32
// [b, sq, hq]; strides in elements, dims in that order. Causal: key j is
// masked for query i when j > i + (sk - sq). Query head h reads kv head
// h / (hq / hkv).
//
// delta is device scratch of batch * sq * hq floats written by the first
// kernel (hal_attention_bwd_delta_<t>) and read by the other two: D of query i,
// head h, batch b at (b * sq + i) * hq + h.
#include <stdint.h>

#include "hal/host_device.h"

namespace hal::kernel_params {

struct AttentionBackwardParams {
  const void* q;
  const void* k;
  const void* v;
  const void* y;
  const void* dy;
  const float* lse;
  void* dq;
  void* dk;
  void* dv;
  float* delta;
  int64_t q_stride[4], k_stride[4], v_stride[4], y_stride[4], dy_stride[4];
  int64_t dq_stride[4], dk_stride[4], dv_stride[4];
  int64_t lse_stride[3];
  int64_t batch, sq, sk;
  int32_t hq, hkv, d, dv_dim;  // dv_dim: v's head dim (dv is v's gradient)
  // hal::DType numbering of every tensor but lse (ops/ checks they agree).
  uint8_t dtype;
  uint8_t causal;
  float scale;
};

// Queries [0, sq) that see key j: [first_query_of_key(j), sq).
HAL_HOST_DEVICE inline int64_t first_query_of_key(const AttentionBackwardParams& p, int64_t j) {
  if (!p.causal) return 0;
  const int64_t first = j - (p.sk - p.sq);
  return first < 0 ? 0 : first;
}

// Keys [0, keys_of_query(i)) are visible to query i.
HAL_HOST_DEVICE inline int64_t keys_of_query(const AttentionBackwardParams& p, int64_t i) {
  if (!p.causal) return p.sk;
  const int64_t end = i + (p.sk - p.sq) + 1;
  return end < 0 ? 0 : (end < p.sk ? end : p.sk);
}

}  // namespace hal::kernel_params
