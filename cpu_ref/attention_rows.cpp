// fp32 attention (attention.cpp states the op) for calls with few (query,
// head) rows per kv head: a decode step, a few speculative queries
// (use_row_path, attention_task.h). Such a call reads every K and V row once
// for a handful of dot products each: it is bound by the reads, so this path
// is about their order, and it packs nothing.
//
// A task is one batch entry and a run of consecutive kv heads with all their
// query rows. It walks the keys in order and, for each key, its run of heads,
// so each key's K (and V) rows of those heads are one contiguous stripe of a
// [b, s, h, d] tensor. Split per kv head instead (the blocked path's tasks),
// consecutive reads are single d-element rows hkv * d elements apart: on the
// 2-core VM, two threads read 512-byte rows 16 KiB apart at about 4.4 GB/s
// and 8 KiB stripes at 14-15 GB/s. So the runs are as long as the thread count
// allows: one task per thread when the batch is small.
//
// Per block of kKeyBlock keys, each row's scores are dot products (vk.dot: a
// fixed lane order) times the scale, folded into the row's online softmax
// (fold_scores), and O += p V runs one key at a time in ascending order
// (weighted_row_sum: one chain per output column). A row's arithmetic does
// not depend on which task holds it or what else the task holds, so the bits
// do not depend on the thread count (which sets the runs' length). They
// differ from the blocked path's (another summation order for the scores),
// within the same accuracy contract; which path runs depends on the shape only.
//
// A key a row does not see is never read for that row: its score is not
// computed and its V row is not multiplied into the row's output.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "cpu_ref/attention_task.h"
#include "cpu_ref/prefetch.h"
#include "cpu_ref/rows_access.h"
#include "cpu_ref/vector_kernels.h"

namespace hal::cpu_ref::attention_detail {

namespace {

constexpr std::int64_t kKeyBlock = 64;
// How many keys ahead the score pass requests K's rows.
constexpr std::int64_t kKeysAhead = 4;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Row i of head h in batch b of a [b, s, h, c] tensor as n floats: the
// tensor's own memory when it is f32 with unit stride, else widened into
// `scratch`.
const float* row_f32(const Tensor& t, std::int64_t b, std::int64_t i, std::int64_t h, std::int64_t n, float* scratch) {
  const std::int64_t start = row_start(t, b, i, h);
  if (t.dtype == DType::f32 && t.strides[3] == 1) return static_cast<const float*>(t.data) + start;
  rows::gather(t, start, t.strides[3], n, scratch);
  return scratch;
}

// Requests row i of heads [h0, h0 + heads) of batch b (n elements each).
void prefetch_rows(const Tensor& t, std::int64_t b, std::int64_t i, std::int64_t h0, std::int64_t heads, std::int64_t n) {
  const auto esize = static_cast<std::int64_t>(dtype_size(t.dtype));
  const std::int64_t bytes = t.strides[3] == 1 ? n * esize : 1;  // a strided row: its first element only
  for (std::int64_t h = h0; h < h0 + heads; ++h)
    prefetch_for_read(static_cast<const char*>(t.data) + row_start(t, b, i, h) * esize, bytes);
}

}  // namespace

void attention_f32_rows(const AttentionCall& call) {
  const Tensor &q = call.q, &k = call.k, &v = call.v, &y = call.y;
  const Geometry g(call);
  if (g.batch == 0 || g.sq == 0 || g.hq == 0 || g.hkv == 0) return;
  const std::int64_t d = g.d, dv = g.dv, group = g.group;
  const float scale = g.scale<float>(call.scale);
  const VectorKernels& vk = vector_kernels();
  // A kv head's rows: query 0's query heads, then query 1's, ...
  const std::int64_t head_rows = g.sq * group;
  const std::int64_t threads = tbb::this_task_arena::max_concurrency();
  const std::int64_t heads_per_task = ceil_div(g.hkv, std::clamp<std::int64_t>(ceil_div(threads, g.batch), 1, g.hkv));
  const std::int64_t tasks_per_batch = ceil_div(g.hkv, heads_per_task);
  const std::int64_t keys_end = g.keys_of(g.sq - 1);  // the last query sees the most keys

  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, g.batch * tasks_per_batch, 1),
                    [&](const tbb::blocked_range<std::int64_t>& range) {
    const std::int64_t max_rows = heads_per_task * head_rows;
    std::vector<float> q_rows(static_cast<std::size_t>(max_rows * d));
    std::vector<float> scores(static_cast<std::size_t>(max_rows * kKeyBlock));
    std::vector<float> out(static_cast<std::size_t>(max_rows * dv));
    std::vector<float> k_row(static_cast<std::size_t>(d)), v_row(static_cast<std::size_t>(dv));
    std::vector<QueryState<float>> state(static_cast<std::size_t>(max_rows));
    std::vector<std::int64_t> taken(static_cast<std::size_t>(max_rows));  // keys of this block each row takes

    for (std::int64_t task = range.begin(); task < range.end(); ++task) {
      const std::int64_t b = task / tasks_per_batch, h0 = (task % tasks_per_batch) * heads_per_task;
      const std::int64_t heads = std::min(heads_per_task, g.hkv - h0), rows = heads * head_rows;
      const auto query_of = [&](std::int64_t r) { return (r % head_rows) / group; };
      const auto head_of = [&](std::int64_t r) { return (h0 + r / head_rows) * group + r % group; };
      for (std::int64_t r = 0; r < rows; ++r)
        rows::gather(q, row_start(q, b, query_of(r), head_of(r)), q.strides[3], d, q_rows.data() + r * d);
      std::fill_n(out.begin(), rows * dv, 0.0f);
      std::fill_n(state.begin(), rows, QueryState<float>{});

      for (std::int64_t kb = 0; kb < keys_end; kb += kKeyBlock) {
        const std::int64_t k_count = std::min(kKeyBlock, keys_end - kb);
        for (std::int64_t r = 0; r < rows; ++r)
          taken[static_cast<std::size_t>(r)] = std::clamp<std::int64_t>(g.keys_of(query_of(r)) - kb, 0, k_count);
        // Keys of this block any row of kv head h0 + hl takes.
        const auto head_keys = [&](std::int64_t hl) {
          return *std::max_element(taken.begin() + hl * head_rows, taken.begin() + (hl + 1) * head_rows);
        };

        // The score pass also requests the K rows kKeysAhead keys on (into
        // the next block) and this key's V rows, which the P V pass below
        // reads: the hardware prefetcher does not follow rows this far apart.
        for (std::int64_t j = 0; j < k_count; ++j) {
          if (kb + j + kKeysAhead < keys_end) prefetch_rows(k, b, kb + j + kKeysAhead, h0, heads, d);
          prefetch_rows(v, b, kb + j, h0, heads, dv);
          for (std::int64_t hl = 0; hl < heads; ++hl) {
            if (j >= head_keys(hl)) continue;
            const float* key = row_f32(k, b, kb + j, h0 + hl, d, k_row.data());
            for (std::int64_t r = hl * head_rows; r < (hl + 1) * head_rows; ++r)
              if (j < taken[static_cast<std::size_t>(r)])
                scores[static_cast<std::size_t>(r * kKeyBlock + j)] = vk.dot(q_rows.data() + r * d, key, d);
          }
        }

        for (std::int64_t r = 0; r < rows; ++r) {
          std::int64_t& valid = taken[static_cast<std::size_t>(r)];
          if (valid == 0) continue;
          float* p = scores.data() + r * kKeyBlock;
          vk.scale(p, scale, p, valid);
          const std::optional<float> correction = fold_scores(state[static_cast<std::size_t>(r)], p, valid, vk);
          if (!correction) {
            valid = 0;  // nothing to add: P V skips the row
            continue;
          }
          // x * 1 is x, bit for bit: a row whose max settled needs no rescale.
          if (*correction != 1.0f) vk.scale(out.data() + r * dv, *correction, out.data() + r * dv, dv);
        }

        for (std::int64_t j = 0; j < k_count; ++j)
          for (std::int64_t hl = 0; hl < heads; ++hl) {
            if (j >= head_keys(hl)) continue;
            const float* value = row_f32(v, b, kb + j, h0 + hl, dv, v_row.data());
            for (std::int64_t r = hl * head_rows; r < (hl + 1) * head_rows; ++r)
              if (j < taken[static_cast<std::size_t>(r)])
                vk.weighted_row_sum(scores.data() + r * kKeyBlock + j, value, 1, dv, out.data() + r * dv);
          }
      }

      for (std::int64_t r = 0; r < rows; ++r) {
        float* o = out.data() + r * dv;
        finish_row(state[static_cast<std::size_t>(r)], o, dv);
        rows::scatter(y, row_start(y, b, query_of(r), head_of(r)), y.strides[3], dv, o);
      }
    }
  });
}

}  // namespace hal::cpu_ref::attention_detail
