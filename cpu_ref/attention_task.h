#pragma once
// What the CPU attention paths share: the problem's geometry, each query's
// online-softmax state, the fold of a block of scores into it and the end of
// a query's row. (Each path splits the work its own way: per query head in
// attention.cpp, per kv head with its query heads in attention_blocked.cpp,
// per run of kv heads in attention_rows.cpp.)
// attention.cpp holds the fp64 oracle's scalar loops, attention_blocked.cpp
// the fp32 path on the gemm micro-kernel, attention_rows.cpp the fp32 path
// for few rows per kv head; the semantics are the ones attention.cpp's header
// states.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "cpu_ref/rows_math.h"
#include "cpu_ref/vector_kernels.h"
#include "hal/op.h"

namespace hal::cpu_ref::attention_detail {

// Position of row `i` of head `h` in batch `b` of a [b, s, h, c] tensor.
inline std::int64_t row_start(const Tensor& t, std::int64_t b, std::int64_t i, std::int64_t h) {
  return t.offset + b * t.strides[0] + i * t.strides[1] + h * t.strides[2];
}

struct Geometry {
  std::int64_t batch, sq, hq, d, sk, hkv, dv, group;
  bool causal;

  explicit Geometry(const AttentionCall& call)
      : batch(call.q.shape[0]), sq(call.q.shape[1]), hq(call.q.shape[2]), d(call.q.shape[3]),
        sk(call.k.shape[1]), hkv(call.k.shape[2]), dv(call.v.shape[3]),
        group(hkv > 0 ? std::max<std::int64_t>(1, hq / hkv) : 1), causal(call.causal) {}

  // Unmasked keys of query i (absolute index): keys [0, keys_of(i)).
  std::int64_t keys_of(std::int64_t i) const { return causal ? std::clamp<std::int64_t>(i + (sk - sq) + 1, 0, sk) : sk; }
  // Of the block of `count` keys from key kb, how many query i sees (its first ones).
  std::int64_t keys_in_block(std::int64_t i, std::int64_t kb, std::int64_t count) const {
    return std::clamp<std::int64_t>(keys_of(i) - kb, 0, count);
  }

  // ops/ normalises the scale; 0 still means 1/sqrt(d), defensively.
  template <class T> T scale(float given) const {
    if (given != 0.0f) return static_cast<T>(given);
    return d > 0 ? T(1) / std::sqrt(static_cast<T>(d)) : T(1);
  }
};

template <class T> struct QueryState {
  T m = -std::numeric_limits<T>::infinity();  // running max of the scores
  T l = T(0);                                 // running sum of exp(score - m)
  bool any_key = false;                       // saw at least one unmasked key
};

// Folds a block of one query's scores, p[0, valid) (valid >= 1, scaled),
// into its state; p becomes exp(score - new max). Returns the factor the
// output accumulated so far must be multiplied by, or nothing when every
// score so far is -inf: then the block adds nothing (exp(-inf - -inf) would
// be NaN) and a later finite score or the end decides the row.
inline std::optional<float> fold_scores(QueryState<float>& st, float* p, std::int64_t valid, const VectorKernels& vk) {
  const float inf = std::numeric_limits<float>::infinity();
  st.any_key = true;
  // vk.max need not propagate NaN. Any other answer than -inf (or NaN)
  // settles the row: a NaN score then reaches the sum through its exp. -inf
  // must be told from all-NaN, exactly.
  float block_max = vk.max(p, valid);
  if (!(block_max > -inf)) {
    block_max = -inf;
    for (std::int64_t j = 0; j < valid; ++j) block_max = rows::nan_max(block_max, p[j]);
  }
  const float m_new = rows::nan_max(st.m, block_max);
  if (m_new == -inf) return std::nullopt;
  const float correction = std::exp(st.m - m_new);  // 0 on the first finite block
  st.l = st.l * correction + vk.exp_shifted_sum(p, m_new, p, valid, std::numeric_limits<float>::quiet_NaN(), {});
  st.m = m_new;
  return correction;
}

// out (the unnormalised sum of p * V) becomes the query's output: divided by
// l, or zeros for a query with no unmasked key, or NaN when every score was
// -inf (as softmax gives it).
template <class T> void finish_row(const QueryState<T>& st, T* out, std::int64_t dv) {
  if (!st.any_key) {
    std::fill(out, out + dv, T(0));
  } else if (st.l == T(0)) {
    std::fill(out, out + dv, std::numeric_limits<T>::quiet_NaN());
  } else {
    for (std::int64_t c = 0; c < dv; ++c) out[c] /= st.l;
  }
}

// The row's natural log-sum-exp of its scaled, unmasked scores (the lse
// output): m + log(l); -inf for a query with no unmasked key and for one
// whose scores are all -inf (l = 0, m = -inf), NaN when a score was NaN.
template <class T> T row_lse(const QueryState<T>& st) {
  if (!st.any_key) return -std::numeric_limits<T>::infinity();
  return st.m + std::log(st.l);
}

// Position of query i of head h in batch b of a [b, s, h] tensor (lse).
inline std::int64_t lse_index(const Tensor& t, std::int64_t b, std::int64_t i, std::int64_t h) {
  return t.offset + b * t.strides[0] + i * t.strides[1] + h * t.strides[2];
}

// The fp32 paths: on the gemm micro-kernel (attention_blocked.cpp), and row
// by row for few query rows per kv head (attention_rows.cpp).
void attention_f32_blocked(const AttentionCall& call);
void attention_f32_rows(const AttentionCall& call);
// Whether the row path takes the call: at most kRowPathRows (query, head)
// rows read each kv head (a decode step, a few speculative queries). On the
// 2-core VM (f32, d = 128, 4096 keys) the row path took 0.55-0.6x the blocked
// path's time at 8 rows (1 query x 8 heads, 2 x 4, 8 x 1) and about the same
// at 16 (4 x 4, 16 x 1).
inline constexpr std::int64_t kRowPathRows = 8;
inline bool use_row_path(const Geometry& g) { return g.sq * g.group <= kRowPathRows; }

}  // namespace hal::cpu_ref::attention_detail
