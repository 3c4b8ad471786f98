#pragma once
// Parameters of the attention kernels (attention_*.cu). Plain host/device
// header: no CUDA includes.
//
//   y = softmax(scale * Q K^T + causal mask) V, grouped-query: query head h
//   reads kv head h / (hq / hkv). Q [b, sq, hq, d], K [b, sk, hkv, d],
//   V [b, sk, hkv, dv], y [b, sq, hq, dv], each with arbitrary strides (in
//   elements, dims in that order). Causal: key j is masked for query i when
//   j > i + (sk - sq); a query with every key masked gets zeros.
#include <stdint.h>

namespace hal::ptx {

struct AttentionParams {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* y = nullptr;
  int64_t q_stride[4] = {}, k_stride[4] = {}, v_stride[4] = {}, y_stride[4] = {};
  int64_t batch = 0, sq = 0, sk = 0;
  int32_t hq = 0, hkv = 0, d = 0, dv = 0;
  uint8_t qkv_type = 0, y_type = 0;  // hal::DType numbering
  uint8_t causal = 0;
  float scale = 1.0f;
};

}  // namespace hal::ptx
