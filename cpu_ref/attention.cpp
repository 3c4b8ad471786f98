// Scaled dot-product attention with grouped-query heads and causal mask:
//   y = softmax(scale * Q K^T + mask) V
// Q [b, sq, hq, d], K [b, sk, hkv, d], V [b, sk, hkv, dv], y [b, sq, hq, dv];
// query head h reads kv head h / (hq / hkv); key j is masked for query i when
// j > i + (sk - sq).
//
// Flash-style: a task is (batch, query head, block of kQueryBlock queries); it
// walks the keys in blocks of kKeyBlock, keeping per query the running max m,
// the running sum l of exp(score - m) and the unnormalised output, rescaled
// by exp(m_old - m_new) when the max grows. Scratch is O(block) per task; the
// [sq, sk] score matrix never exists. Key blocks always start at key 0 and
// each query's arithmetic is independent of the other queries in its task, so
// the bits do not depend on how tasks are split over threads.
//
// Special values: a query with no unmasked key (sq > sk, causal) gives zeros.
// A NaN score makes that query's row NaN; so does a row whose scores are all
// -inf (as softmax gives it). Masked keys are never read.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "cpu_ref/kernels.h"
#include "cpu_ref/rows_access.h"
#include "cpu_ref/rows_math.h"
#include "cpu_ref/vector_kernels.h"

namespace hal::cpu_ref {

namespace {

constexpr std::int64_t kQueryBlock = 16;
constexpr std::int64_t kKeyBlock = 64;

// Position of row `i` of head `h` in batch `b` of a [b, s, h, c] tensor.
std::int64_t row_start(const Tensor& t, std::int64_t b, std::int64_t i, std::int64_t h) {
  return t.offset + b * t.strides[0] + i * t.strides[1] + h * t.strides[2];
}

template <class T> struct QueryState {
  T m = -std::numeric_limits<T>::infinity();  // running max of the scores
  T l = T(0);                                 // running sum of exp(score - m)
  bool any_key = false;                       // saw at least one unmasked key
};

template <class T> void attention_typed(const AttentionCall& call) {
  const Tensor &q = call.q, &k = call.k, &v = call.v, &y = call.y;
  if (q.rank() != 4) return;  // ops/ guarantees rank 4
  const std::int64_t batch = q.shape[0], sq = q.shape[1], hq = q.shape[2], d = q.shape[3];
  const std::int64_t sk = k.shape[1], hkv = k.shape[2], dv = v.shape[3];
  const std::int64_t group = hkv > 0 ? std::max<std::int64_t>(1, hq / hkv) : 1;
  // ops/ normalises the scale; 0 still means 1/sqrt(d), defensively.
  const T scale = call.scale != 0.0f ? static_cast<T>(call.scale)
                                     : (d > 0 ? T(1) / std::sqrt(static_cast<T>(d)) : T(1));
  const std::int64_t q_blocks = (sq + kQueryBlock - 1) / kQueryBlock;
  const std::int64_t tasks = batch * hq * q_blocks;
  const T inf = std::numeric_limits<T>::infinity();
  // fp32 runs its inner loops (scores, exp with their sum, the weighted sum
  // of V rows) on the run-time-selected vector kernels; the fp64 oracle
  // keeps the scalar loops.
  constexpr bool kVector = std::is_same_v<T, float>;
  const VectorKernels& vk = vector_kernels();

  rows::parallel_rows(tasks, kQueryBlock * (sk + 1) * (d + dv + 1), [&](std::int64_t begin, std::int64_t end) {
    std::vector<T> q_tile(static_cast<std::size_t>(kQueryBlock * d));
    std::vector<T> k_tile(static_cast<std::size_t>(kKeyBlock * d)), v_tile(static_cast<std::size_t>(kKeyBlock * dv));
    std::vector<T> acc(static_cast<std::size_t>(kQueryBlock * dv)), p(static_cast<std::size_t>(kKeyBlock));
    std::vector<QueryState<T>> state(static_cast<std::size_t>(kQueryBlock));

    for (std::int64_t task = begin; task < end; ++task) {
      const std::int64_t qb = task % q_blocks;
      const std::int64_t h = (task / q_blocks) % hq;
      const std::int64_t b = task / (q_blocks * hq);
      const std::int64_t kv_head = std::min(h / group, hkv - 1);
      const std::int64_t q_begin = qb * kQueryBlock;
      const std::int64_t q_count = std::min(kQueryBlock, sq - q_begin);

      // Number of unmasked keys of query i (absolute index).
      const auto keys_of = [&](std::int64_t i) {
        return call.causal ? std::clamp<std::int64_t>(i + (sk - sq) + 1, 0, sk) : sk;
      };
      for (std::int64_t r = 0; r < q_count; ++r)
        rows::gather(q, row_start(q, b, q_begin + r, h), q.strides[3], d, q_tile.data() + r * d);
      std::fill(acc.begin(), acc.end(), T(0));
      std::fill(state.begin(), state.end(), QueryState<T>{});

      const std::int64_t keys_end = keys_of(q_begin + q_count - 1);  // the last query sees the most keys
      for (std::int64_t kb = 0; kb < keys_end; kb += kKeyBlock) {
        const std::int64_t k_count = std::min(kKeyBlock, keys_end - kb);
        for (std::int64_t j = 0; j < k_count; ++j) {
          rows::gather(k, row_start(k, b, kb + j, kv_head), k.strides[3], d, k_tile.data() + j * d);
          rows::gather(v, row_start(v, b, kb + j, kv_head), v.strides[3], dv, v_tile.data() + j * dv);
        }
        for (std::int64_t r = 0; r < q_count; ++r) {
          const std::int64_t valid = std::clamp<std::int64_t>(keys_of(q_begin + r) - kb, 0, k_count);
          if (valid == 0) continue;
          QueryState<T>& st = state[r];
          st.any_key = true;
          const T* qr = q_tile.data() + r * d;
          if constexpr (kVector) {
            vk.dot_rows(qr, k_tile.data(), valid, d, p.data());
          } else {
            for (std::int64_t j = 0; j < valid; ++j) p[j] = rows::fixed_dot(qr, k_tile.data() + j * d, d);
          }
          T block_max = -inf;
          for (std::int64_t j = 0; j < valid; ++j) {
            p[j] *= scale;
            block_max = rows::nan_max(block_max, p[j]);
          }
          const T m_new = rows::nan_max(st.m, block_max);
          // Every score so far is -inf: nothing to add yet (exp(-inf - -inf)
          // would be NaN); a later finite score or the end decides the row.
          if (m_new == -inf) continue;
          const T correction = std::exp(st.m - m_new);  // 0 on the first finite block
          T* out = acc.data() + r * dv;
          if constexpr (kVector) {
            st.l = st.l * correction + vk.exp_shifted_sum(p.data(), m_new, p.data(), valid, {});
            vk.scale(out, correction, out, dv);
            vk.weighted_row_sum(p.data(), v_tile.data(), valid, dv, out);
          } else {
            for (std::int64_t j = 0; j < valid; ++j) p[j] = std::exp(p[j] - m_new);
            st.l = st.l * correction + rows::fixed_sum(p.data(), valid);
            for (std::int64_t c = 0; c < dv; ++c) out[c] *= correction;
            for (std::int64_t j = 0; j < valid; ++j) {
              const T pj = p[j];
              const T* vj = v_tile.data() + j * dv;
              for (std::int64_t c = 0; c < dv; ++c) out[c] += pj * vj[c];
            }
          }
          st.m = m_new;
        }
      }

      for (std::int64_t r = 0; r < q_count; ++r) {
        T* out = acc.data() + r * dv;
        const QueryState<T>& st = state[r];
        if (!st.any_key) {
          std::fill(out, out + dv, T(0));  // fully masked query
        } else if (st.l == T(0)) {
          std::fill(out, out + dv, std::numeric_limits<T>::quiet_NaN());  // all scores -inf
        } else {
          for (std::int64_t c = 0; c < dv; ++c) out[c] /= st.l;
        }
        rows::scatter(y, row_start(y, b, q_begin + r, h), y.strides[3], dv, out);
      }
    }
  });
}

}  // namespace

void attention(const AttentionCall& call) {
  if (call.y.dtype == DType::f64) {
    attention_typed<double>(call);
  } else {
    attention_typed<float>(call);
  }
}

}  // namespace hal::cpu_ref
