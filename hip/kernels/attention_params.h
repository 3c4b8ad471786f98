#pragma once
// Parameters of hip/kernels/attention_general.hip. Plain host/device header.
//
// y = softmax(scale * Q K^T + causal mask) V with grouped-query heads: query
// head h reads kv head h / (hq / hkv). Q [b, sq, hq, d], K [b, sk, hkv, d],
// V [b, sk, hkv, dv], y [b, sq, hq, dv], strides in elements per dim.
#include <stdint.h>

namespace hal::hip::kernels {

// The wave-per-row kernel keeps head_dim / 64 values per lane in registers.
inline constexpr int kAttentionMaxHeadDim = 256;
inline constexpr int kAttentionThreads = 256;  // 4 wave64s, one query row each

struct AttentionParams {
  const void* q;
  const void* k;
  const void* v;
  void* y;
  int64_t batch, sq, sk, hq, hkv, d, dv;
  int64_t q_stride[4], k_stride[4], v_stride[4], y_stride[4];
  int32_t q_type, k_type, v_type, y_type;
  float scale;
  int32_t causal;
};

}  // namespace hal::hip::kernels
