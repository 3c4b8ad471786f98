// fp32 attention (attention.cpp states the op) for calls with few (query,
// head) rows per kv head: a decode step, a few speculative queries
// (use_row_path, attention_task.h). Such a call reads every K and V row once
// for a handful of dot products each: it is bound by the reads, so this path
// is about their order, and it packs nothing.
//
// The keys are split into chunks (flash-decoding): a work item is one batch
// entry's chunk of keys for every head, so it reads K and V front to back,
// whole [hkv, d] rows at a time, one sequential stream per item. Split per kv
// head instead (the blocked path's tasks), consecutive reads are single
// d-element rows hkv * d elements apart, and a thread gets a fraction of the
// bandwidth (on the 2-core VM, 512-byte rows 16 KiB apart: 4.4 GB/s for two
// threads against 12 GB/s in order). Each item leaves, per row, its chunk's
// running max, sum and unnormalised output; a second pass merges the chunks
// of each row in ascending order and writes it.
//
// Per block of kKeyBlock keys of a chunk, each row's scores are dot products
// (vk.dot_rows: a fixed lane order, a kv head's query heads against one key
// row) times the scale, folded into the chunk's online softmax (fold_scores),
// and O += p V runs key by key in ascending order (weighted_row_sum: one
// chain per output column). The chunks depend on
// the shape only (chunk_keys), so the bits never depend on the
// thread count. They differ from the blocked path's (another summation order),
// within the same accuracy contract.
//
// A key a row does not see is never read for that row: its score is not
// computed and its V row is not multiplied into the row's output.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "cpu_ref/attention_task.h"
#include "cpu_ref/rows_access.h"
#include "cpu_ref/vector_kernels.h"
#include "hal/shape.h"

namespace hal::cpu_ref::attention_detail {

namespace {

constexpr std::int64_t kKeyBlock = 64;
// Keys per step of P V (a divisor of kKeyBlock).
constexpr std::int64_t kPvTile = 8;
// Keys per chunk: at least kMinChunkKeys, and at most kMaxChunks chunks, fewer
// when a batch entry's chunk results (a state and dv floats per row and chunk)
// would pass kChunkResultBytes. Batch entries (their query rows and chunk
// results) are then taken as many at a time as fit in it (at least one).
constexpr std::int64_t kMinChunkKeys = 128;
constexpr std::int64_t kMaxChunks = 64;
constexpr std::int64_t kChunkResultBytes = std::int64_t{8} << 20;

// A whole number of key blocks; a function of the shape only (keys, rows of a
// batch entry, dv), never of the thread count.
std::int64_t chunk_keys(std::int64_t keys, std::int64_t rows, std::int64_t dv) {
  const std::int64_t row_bytes = rows * static_cast<std::int64_t>(dv * sizeof(float) + sizeof(QueryState<float>));
  const std::int64_t max_chunks = std::clamp<std::int64_t>(kChunkResultBytes / std::max<std::int64_t>(1, row_bytes), 1, kMaxChunks);
  return std::max(kMinChunkKeys, ceil_div(ceil_div(keys, max_chunks), kKeyBlock) * kKeyBlock);
}

// Rows [i, i + count) of head h in batch b of a [b, s, h, c] tensor, n
// elements each, as the vector kernels read them: the tensor's own memory
// when it is f32 or bf16 with unit stride (`stride` elements apart), else
// widened into `scratch` (count * n floats, n apart).
struct Rows {
  const void* data;
  DType type;
  std::int64_t stride;
};
Rows rows_of(const Tensor& t, std::int64_t b, std::int64_t i, std::int64_t h, std::int64_t count, std::int64_t n,
             float* scratch) {
  if ((t.dtype == DType::f32 || t.dtype == DType::bf16) && t.strides[3] == 1)
    return {static_cast<const char*>(t.data) + row_start(t, b, i, h) * static_cast<std::int64_t>(dtype_size(t.dtype)),
            t.dtype, t.strides[1]};
  for (std::int64_t j = 0; j < count; ++j) rows::gather(t, row_start(t, b, i + j, h), t.strides[3], n, scratch + j * n);
  return {scratch, DType::f32, n};
}

// Folds one chunk's result (its state and unnormalised output) into a row's
// running one, the chunks taken in ascending order: the outputs are scaled to
// the larger max and added, as the online softmax does key block by key block.
void merge_chunk(QueryState<float>& st, float* out, const QueryState<float>& chunk, const float* chunk_out,
                 std::int64_t dv) {
  if (!chunk.any_key) return;
  st.any_key = true;
  // Every score of the chunk -inf: it adds nothing (as fold_scores skips such
  // a block); the row's end decides what that means.
  if (chunk.m == -std::numeric_limits<float>::infinity()) return;
  const float m_new = rows::nan_max(st.m, chunk.m);
  const float a = std::exp(st.m - m_new), c = std::exp(chunk.m - m_new);  // a = 0 for the first chunk that adds
  st.l = st.l * a + chunk.l * c;
  for (std::int64_t j = 0; j < dv; ++j) out[j] = out[j] * a + chunk_out[j] * c;
  st.m = m_new;
}

}  // namespace

void attention_f32_rows(const AttentionCall& call) {
  const Tensor &q = call.q, &k = call.k, &v = call.v, &y = call.y;
  const Geometry g(call);
  if (g.batch == 0 || g.sq == 0 || g.hq == 0 || g.hkv == 0) return;
  const std::int64_t d = g.d, dv = g.dv, group = g.group, hkv = g.hkv;
  const float scale = g.scale<float>(call.scale);
  const VectorKernels& vk = vector_kernels();
  // A batch entry's rows, kv head by kv head: query 0's query heads of the
  // kv head, then query 1's, ...
  const std::int64_t head_rows = g.sq * group, rows = hkv * head_rows;
  const auto query_of = [&](std::int64_t r) { return (r % head_rows) / group; };
  const auto head_of = [&](std::int64_t r) { return (r / head_rows) * group + r % group; };
  const std::int64_t keys_end = g.keys_of(g.sq - 1);  // the last query sees the most keys
  const std::int64_t chunk = chunk_keys(keys_end, rows, dv), chunks = std::max<std::int64_t>(1, ceil_div(keys_end, chunk));
  // Per batch entry: its query rows (widened once, read by every chunk) and
  // its chunk results.
  const std::int64_t entry_bytes =
      rows * static_cast<std::int64_t>(d * sizeof(float) + chunks * (dv * sizeof(float) + sizeof(QueryState<float>)));
  const std::int64_t batch_group = std::clamp<std::int64_t>(kChunkResultBytes / std::max<std::int64_t>(1, entry_bytes), 1, g.batch);
  std::vector<float> q_rows(static_cast<std::size_t>(batch_group * rows * d));
  std::vector<float> chunk_out(static_cast<std::size_t>(batch_group * chunks * rows * dv));
  std::vector<QueryState<float>> chunk_state(static_cast<std::size_t>(batch_group * chunks * rows));

  for (std::int64_t b0 = 0; b0 < g.batch; b0 += batch_group) {
    const std::int64_t entries = std::min(batch_group, g.batch - b0);
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, entries * rows, 64),
                      [&](const tbb::blocked_range<std::int64_t>& range) {
      for (std::int64_t i = range.begin(); i < range.end(); ++i) {
        const std::int64_t r = i % rows;
        rows::gather(q, row_start(q, b0 + i / rows, query_of(r), head_of(r)), q.strides[3], d, q_rows.data() + i * d);
      }
    });
    // Each (batch entry, chunk): every row's state and output over the chunk's keys.
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, entries * chunks, 1),
                      [&](const tbb::blocked_range<std::int64_t>& range) {
      std::vector<float> scores(static_cast<std::size_t>(rows * kKeyBlock));
      std::vector<float> k_row(static_cast<std::size_t>(d)), v_tile(static_cast<std::size_t>(kPvTile * dv));
      std::vector<float> dots(static_cast<std::size_t>(head_rows));
      std::vector<std::int64_t> taken(static_cast<std::size_t>(rows));  // keys of this block each row takes
      for (std::int64_t item = range.begin(); item < range.end(); ++item) {
        const std::int64_t b = b0 + item / chunks, c0 = (item % chunks) * chunk;
        const std::int64_t c1 = std::min(keys_end, c0 + chunk);
        float* out = chunk_out.data() + item * rows * dv;
        QueryState<float>* state = chunk_state.data() + item * rows;
        std::fill_n(out, rows * dv, 0.0f);
        std::fill_n(state, rows, QueryState<float>{});
        const float* entry_q = q_rows.data() + (item / chunks) * rows * d;

        for (std::int64_t kb = c0; kb < c1; kb += kKeyBlock) {
          const std::int64_t k_count = std::min(kKeyBlock, c1 - kb);
          for (std::int64_t r = 0; r < rows; ++r)
            taken[static_cast<std::size_t>(r)] = g.keys_in_block(query_of(r), kb, k_count);
          // A kv head's rows run query by query and a later query sees at
          // least the keys an earlier one does, so the rows of kv head h that
          // take key j are a suffix of them: [first_taker(h, j), end).
          const auto first_taker = [&](std::int64_t h, std::int64_t j) {
            std::int64_t r = h * head_rows;
            while (r < (h + 1) * head_rows && taken[static_cast<std::size_t>(r)] <= j) ++r;
            return r;
          };

          for (std::int64_t j = 0; j < k_count; ++j)
            for (std::int64_t h = 0; h < hkv; ++h) {
              const std::int64_t r0 = first_taker(h, j), r1 = (h + 1) * head_rows;
              if (r0 == r1) continue;
              const Rows key = rows_of(k, b, kb + j, h, 1, d, k_row.data());
              vk.dot_rows(entry_q + r0 * d, r1 - r0, d, key.data, key.type, d, dots.data());
              for (std::int64_t r = r0; r < r1; ++r) scores[static_cast<std::size_t>(r * kKeyBlock + j)] = dots[static_cast<std::size_t>(r - r0)];
            }

          for (std::int64_t r = 0; r < rows; ++r) {
            std::int64_t& valid = taken[static_cast<std::size_t>(r)];
            if (valid == 0) continue;
            float* p = scores.data() + r * kKeyBlock;
            vk.scale(p, scale, p, valid);
            const std::optional<float> correction = fold_scores(state[r], p, valid, vk);
            if (!correction) {
              valid = 0;  // nothing to add: P V skips the row
              continue;
            }
            // x * 1 is x, bit for bit: a row whose max settled needs no rescale.
            if (*correction != 1.0f) vk.scale(out + r * dv, *correction, out + r * dv, dv);
          }

          // O += P V, kPvTile keys at a time: each row's output is loaded and
          // stored once per tile, not once per key (the same steps, so the
          // same bits).
          for (std::int64_t t0 = 0; t0 < k_count; t0 += kPvTile) {
            const std::int64_t tile = std::min(kPvTile, k_count - t0);
            for (std::int64_t h = 0; h < hkv; ++h) {
              std::optional<Rows> values;
              for (std::int64_t r = h * head_rows; r < (h + 1) * head_rows; ++r) {
                const std::int64_t count = std::clamp<std::int64_t>(taken[static_cast<std::size_t>(r)] - t0, 0, tile);
                if (count == 0) continue;
                if (!values) values = rows_of(v, b, kb + t0, h, tile, dv, v_tile.data());
                vk.weighted_row_sum(scores.data() + r * kKeyBlock + t0, values->data, values->type, count, values->stride,
                                    dv, out + r * dv);
              }
            }
          }
        }
      }
    });

    // Each row: its chunks merged in ascending order, then finished and written.
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, entries * rows, 16),
                      [&](const tbb::blocked_range<std::int64_t>& range) {
      std::vector<float> o(static_cast<std::size_t>(dv));
      for (std::int64_t i = range.begin(); i < range.end(); ++i) {
        const std::int64_t e = i / rows, r = i % rows;
        QueryState<float> st;
        std::fill(o.begin(), o.end(), 0.0f);
        for (std::int64_t c = 0; c < chunks; ++c) {
          const std::int64_t item = e * chunks + c;
          merge_chunk(st, o.data(), chunk_state[static_cast<std::size_t>(item * rows + r)],
                      chunk_out.data() + (item * rows + r) * dv, dv);
        }
        if (call.lse) {
          const float lse = row_lse(st);
          rows::scatter(*call.lse, lse_index(*call.lse, b0 + e, query_of(r), head_of(r)), 1, 1, &lse);
        }
        finish_row(st, o.data(), dv);
        rows::scatter(y, row_start(y, b0 + e, query_of(r), head_of(r)), y.strides[3], dv, o.data());
      }
    });
  }
}

}  // namespace hal::cpu_ref::attention_detail
