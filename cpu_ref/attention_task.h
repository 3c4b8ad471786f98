#pragma once
// What the CPU attention paths share: the problem's geometry, each query's
// online-softmax state and the end of a query's row. (Each path splits the
// work its own way: per query head in attention.cpp, per kv head with its
// query heads in attention_blocked.cpp.)
// attention.cpp holds the fp64 oracle's scalar loops, attention_blocked.cpp
// the fp32 path on the gemm micro-kernel; the semantics are the ones
// attention.cpp's header states.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

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

// The fp32 path (attention_blocked.cpp).
void attention_f32_blocked(const AttentionCall& call);

}  // namespace hal::cpu_ref::attention_detail
