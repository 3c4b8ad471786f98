#pragma once
// Parameters of the attention kernels (ptx/kernels/attention_*.cu,
// hip/kernels/attention_*.hip); packed by backends/gpu/attention_args.h.
//
//   y = softmax(scale * Q K^T + causal mask) V, grouped-query: query head h
//   reads kv head h / (hq / hkv). Q [b, sq, hq, d], K [b, sk, hkv, d],
//   V [b, sk, hkv, dv], y [b, sq, hq, dv], each with arbitrary strides (in
//   elements, dims in that order). Causal: key j is masked for query i when
//   j > i + (sk - sq); a query with every key masked gets zeros.
//
//   lse (optional, the *_lse kernels only): the row's natural log-sum-exp of
//   its scaled unmasked scores, m + log(l) as cpu_ref defines it (row_lse,
//   cpu_ref/attention_task.h): -inf for a query with no unmasked key or whose
//   scores are all -inf, NaN when a score was NaN. f32 [b, sq, hq].
#include <stdint.h>

namespace hal::kernel_params {

struct AttentionParams {
  const void* q;
  const void* k;
  const void* v;
  void* y;
  int64_t q_stride[4], k_stride[4], v_stride[4], y_stride[4];
  int64_t batch, sq, sk;
  int32_t hq, hkv, d, dv;
  // hal::DType numbering; q, k and v share a dtype (ops/ checks it). Bytes,
  // not int32: the CUDA general kernel loads the three in one access, and
  // with three 32-bit fields ptxas spills it on sm_80 (48 registers, 292
  // bytes of spill loads instead of 64 registers and none).
  uint8_t qkv_type, y_type;
  uint8_t causal;
  float scale;
  // Appended after the forward's fields, so the kernels that do not write
  // lse read the same offsets as before; null when lse is not asked.
  float* lse;
  int64_t lse_stride[3];
};

}  // namespace hal::kernel_params
