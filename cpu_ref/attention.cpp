// Scaled dot-product attention with grouped-query heads and causal mask:
//   y = softmax(scale * Q K^T + mask) V
// Q [b, sq, hq, d], K [b, sk, hkv, d], V [b, sk, hkv, dv], y [b, sq, hq, dv];
// query head h reads kv head h / (hq / hkv); key j is masked for query i when
// j > i + (sk - sq).
//
// Flash-style: a task is (batch, query head, block of queries); it walks the
// keys in blocks, keeping per query the running max m, the running sum l of
// exp(score - m) and the unnormalised output, rescaled by exp(m_old - m_new)
// when the max grows. Scratch is O(block) per task; the [sq, sk] score
// matrix never exists. Key blocks always start at key 0 and each query's
// arithmetic is independent of the other queries in its task, so the bits do
// not depend on how tasks are split over threads.
//
// Special values: a query with no unmasked key (sq > sk, causal) gives zeros.
// A NaN score makes that query's row NaN; so does a row whose scores are all
// -inf (as softmax gives it). A masked key never reaches a query's result.
// The optional lse output is m + log(l) per query (row_lse, attention_task.h),
// from the same state, so writing it changes nothing else.
//
// fp32 runs on the gemm micro-kernel (attention_blocked.cpp), or row by row
// when a kv head has few query rows (attention_rows.cpp: decode steps); this
// file is the fp64 oracle's plain loops.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "cpu_ref/attention_task.h"
#include "cpu_ref/kernels.h"
#include "cpu_ref/rows_access.h"
#include "cpu_ref/rows_math.h"
#include "hal/shape.h"

namespace hal::cpu_ref {

namespace {

using namespace attention_detail;

constexpr std::int64_t kQueryBlock = 16;
constexpr std::int64_t kKeyBlock = 64;

// One task: queries [q_begin, q_begin + q_count) of query head h in batch b.
struct Task {
  std::int64_t b, h, kv_head, q_begin, q_count;
};

std::int64_t task_count(const Geometry& g, std::int64_t query_block) {
  return g.batch * g.hq * ceil_div(g.sq, query_block);
}

Task task_of(const Geometry& g, std::int64_t task, std::int64_t query_block) {
  const std::int64_t q_blocks = ceil_div(g.sq, query_block);
  Task t{};
  const std::int64_t qb = task % q_blocks;
  t.h = (task / q_blocks) % g.hq;
  t.b = task / (q_blocks * g.hq);
  t.kv_head = std::min(t.h / g.group, g.hkv - 1);
  t.q_begin = qb * query_block;
  t.q_count = std::min(query_block, g.sq - t.q_begin);
  return t;
}

void attention_f64(const AttentionCall& call) {
  const Tensor &q = call.q, &k = call.k, &v = call.v, &y = call.y;
  const Geometry g(call);
  const std::int64_t d = g.d, dv = g.dv;
  const double scale = g.scale<double>(call.scale);
  const double inf = std::numeric_limits<double>::infinity();

  rows::parallel_rows(task_count(g, kQueryBlock), kQueryBlock * (g.sk + 1) * (d + dv + 1),
                      [&](std::int64_t begin, std::int64_t end) {
    std::vector<double> q_tile(static_cast<std::size_t>(kQueryBlock * d));
    std::vector<double> k_tile(static_cast<std::size_t>(kKeyBlock * d)), v_tile(static_cast<std::size_t>(kKeyBlock * dv));
    std::vector<double> acc(static_cast<std::size_t>(kQueryBlock * dv)), p(static_cast<std::size_t>(kKeyBlock));
    std::vector<QueryState<double>> state(static_cast<std::size_t>(kQueryBlock));

    for (std::int64_t task = begin; task < end; ++task) {
      const Task t = task_of(g, task, kQueryBlock);
      for (std::int64_t r = 0; r < t.q_count; ++r)
        rows::gather(q, row_start(q, t.b, t.q_begin + r, t.h), q.strides[3], d, q_tile.data() + r * d);
      std::fill(acc.begin(), acc.end(), 0.0);
      std::fill(state.begin(), state.end(), QueryState<double>{});

      const std::int64_t keys_end = g.keys_of(t.q_begin + t.q_count - 1);  // the last query sees the most keys
      for (std::int64_t kb = 0; kb < keys_end; kb += kKeyBlock) {
        const std::int64_t k_count = std::min(kKeyBlock, keys_end - kb);
        for (std::int64_t j = 0; j < k_count; ++j) {
          rows::gather(k, row_start(k, t.b, kb + j, t.kv_head), k.strides[3], d, k_tile.data() + j * d);
          rows::gather(v, row_start(v, t.b, kb + j, t.kv_head), v.strides[3], dv, v_tile.data() + j * dv);
        }
        for (std::int64_t r = 0; r < t.q_count; ++r) {
          const std::int64_t valid = g.keys_in_block(t.q_begin + r, kb, k_count);
          if (valid == 0) continue;
          QueryState<double>& st = state[static_cast<std::size_t>(r)];
          st.any_key = true;
          const double* qr = q_tile.data() + r * d;
          double block_max = -inf;
          for (std::int64_t j = 0; j < valid; ++j) {
            p[j] = rows::fixed_dot(qr, k_tile.data() + j * d, d) * scale;
            block_max = rows::nan_max(block_max, p[j]);
          }
          const double m_new = rows::nan_max(st.m, block_max);
          // Every score so far is -inf: nothing to add yet (exp(-inf - -inf)
          // would be NaN); a later finite score or the end decides the row.
          if (m_new == -inf) continue;
          const double correction = std::exp(st.m - m_new);  // 0 on the first finite block
          for (std::int64_t j = 0; j < valid; ++j) p[j] = std::exp(p[j] - m_new);
          st.l = st.l * correction + rows::fixed_sum(p.data(), valid);
          double* out = acc.data() + r * dv;
          for (std::int64_t c = 0; c < dv; ++c) out[c] *= correction;
          for (std::int64_t j = 0; j < valid; ++j) {
            const double pj = p[j];
            const double* vj = v_tile.data() + j * dv;
            for (std::int64_t c = 0; c < dv; ++c) out[c] += pj * vj[c];
          }
          st.m = m_new;
        }
      }

      for (std::int64_t r = 0; r < t.q_count; ++r) {
        double* out = acc.data() + r * dv;
        if (call.lse) {
          const double lse = row_lse(state[static_cast<std::size_t>(r)]);
          rows::scatter(*call.lse, lse_index(*call.lse, t.b, t.q_begin + r, t.h), 1, 1, &lse);
        }
        finish_row(state[static_cast<std::size_t>(r)], out, dv);
        rows::scatter(y, row_start(y, t.b, t.q_begin + r, t.h), y.strides[3], dv, out);
      }
    }
  });
}

}  // namespace

void attention(const AttentionCall& call) {
  if (call.q.rank() != 4) return;  // ops/ guarantees rank 4
  if (call.y.dtype == DType::f64) attention_f64(call);
  else if (attention_detail::use_row_path(attention_detail::Geometry(call))) attention_detail::attention_f32_rows(call);
  else attention_detail::attention_f32_blocked(call);
}

}  // namespace hal::cpu_ref
