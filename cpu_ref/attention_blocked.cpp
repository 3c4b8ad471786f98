// fp32 attention (attention.cpp states the op) on the gemm micro-kernel
// (gemm_microkernel.h), the way gemm_blocked.cpp drives it. A task is a block
// of queries of one kv head: its rows are (query, query head) pairs, every
// query head that reads the kv head (grouped-query attention), so K and V are
// packed once for all of them and a decode step (one query) still fills the
// micro-kernel's rows. Q's rows are packed once; per block of kKeyBlock keys:
//
//   S = Q K^T   K's block packed (transposed, widened) as B panels; each
//               score is one ascending chain over the head dimension
//   per query   scale, block max, exp and sum (vector kernels) on its row of S
//   O += P V    V's block packed as B panels. A panel of MR queries runs the
//               micro-kernel over the keys all its queries see; each query's
//               remaining keys (the causal diagonal) follow with
//               weighted_row_sum, in ascending key order, as one chain.
//
// The accumulator O stays in the micro-kernel's tile layout for the whole
// task, rescaled row by row when a query's max grows. Both steps multiply-add
// alike by default (one FMA a step in the AVX2 / AVX-512 micro-kernels and
// the AVX2 weighted_row_sum; a multiply and an add in the portable ones;
// HAL_CPU_GEMM_KERNEL / HAL_CPU_VECTOR_KERNELS can pair unlike ones), and
// which keys go through which step depends only on the fixed blocks, so the
// bits do not depend on the thread count.
//
// Masked keys: a query's scores past its last key are computed (the block
// holds the keys of its task's last query) but never read, and P V only ever
// multiplies a key's V row into queries that see it, so a NaN or inf in a
// masked row reaches no result. Q's padding rows (the last MR panel) are zero
// and their results are never read.
//
// Calls with few rows per kv head (decode steps) take attention_rows.cpp
// instead: their tasks would fill a fraction of one row panel while packing
// every key, reading K and V one kv head at a time.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "cpu_ref/attention_task.h"
#include "cpu_ref/gemm_microkernel.h"
#include "cpu_ref/gemm_operands.h"
#include "cpu_ref/gemm_pack.h"
#include "cpu_ref/rows_access.h"
#include "cpu_ref/rows_math.h"
#include "cpu_ref/vector_kernels.h"
#include "hal/shape.h"

namespace hal::cpu_ref::attention_detail {

namespace {

// (query, head) rows per task: K and V blocks are packed once per task and key
// block, so a taller block spreads that over more arithmetic (profiled on the
// 2-core VM, f32 1x4096x4x128: packing took 62% of the micro-kernel's time at
// 128 rows, 27% at 256; bf16 1x1024x8x128: 60% at 64). 256 keeps a task's
// scratch (Q panels, S, P and O tiles: about 400 KiB) within a 512 KiB L2.
constexpr std::int64_t kRowBlock = 256;
constexpr std::int64_t kKeyBlock = 64;

// A [b, s, h, c] tensor's head as a GemmMatrix of rows s, columns c
// (transposed: rows c, columns s).
GemmMatrix head_matrix(const Tensor& t, std::int64_t b, std::int64_t h, bool transposed) {
  GemmMatrix m;
  m.data = t.data;
  m.dtype = t.dtype;
  m.offset = row_start(t, b, 0, h);
  m.row_stride = transposed ? t.strides[3] : t.strides[1];
  m.col_stride = transposed ? t.strides[1] : t.strides[3];
  return m;
}

// The accumulator layout of gemm_blocked.cpp: a rows x cols fp32 matrix as
// ceil(rows/MR) x ceil(cols/NR) micro-kernel tiles of MR x NR, row-major
// inside; the tile of row panel ip, column panel jp at (jp * m_panels + ip).
struct TileLayout {
  std::int64_t mr, nr, m_panels;
  float* tile(float* base, std::int64_t ip, std::int64_t jp) const { return base + (jp * m_panels + ip) * mr * nr; }
  // Row r's first NR-column chunk; chunk jp is jp * chunk_step() further.
  float* row(float* base, std::int64_t r) const { return base + (r / mr) * mr * nr + (r % mr) * nr; }
  std::int64_t chunk_step() const { return m_panels * mr * nr; }
  // Zeroes the tiles of row panels [0, row_panels) and column panels
  // [0, col_panels): what a task uses, not the whole scratch sized for the
  // tallest task (a decode step uses one row panel of kRowBlock / MR).
  void zero(float* base, std::int64_t row_panels, std::int64_t col_panels) const {
    for (std::int64_t jp = 0; jp < col_panels; ++jp) std::fill_n(tile(base, 0, jp), row_panels * mr * nr, 0.0f);
  }
};

// dst[0, n) = row r's first n columns.
void copy_row_out(const TileLayout& layout, float* tiles, std::int64_t r, std::int64_t n, float* dst) {
  const float* src = layout.row(tiles, r);
  for (std::int64_t c = 0; c < n; c += layout.nr, src += layout.chunk_step())
    std::copy_n(src, std::min(layout.nr, n - c), dst + c);
}

// A task: queries [q_begin, q_begin + q_count) of batch b, with every query
// head of kv head kv_head; row r is query q_begin + r / group of head
// kv_head * group + r % group.
struct GroupTask {
  std::int64_t b, kv_head, q_begin, q_count, rows;
};

struct Scratch {
  std::vector<float> q_rows, q_panels, k_panels, v_panels, p_panels, s_tiles, o_tiles, p_rows, out;
  std::vector<std::int64_t> row_keys;  // keys of this block each query takes (0: none)
  std::vector<QueryState<float>> state;
};

}  // namespace

void attention_f32_blocked(const AttentionCall& call) {
  const Tensor &q = call.q, &k = call.k, &v = call.v, &y = call.y;
  const Geometry g(call);
  const std::int64_t d = g.d, dv = g.dv;
  const float scale = g.scale<float>(call.scale);
  const VectorKernels& vk = vector_kernels();
  const GemmMicroKernel& kernel = selected_gemm_microkernel();
  const GemmPacking packing = kernel.packing;  // fp32: the selected kernel never pairs
  const std::int64_t mr = kernel.mr, nr = kernel.nr;
  // Whole queries per task (at least one, whatever the group).
  const std::int64_t group = g.group, queries_per_task = std::max<std::int64_t>(1, kRowBlock / group);
  const std::int64_t max_rows = queries_per_task * group, q_blocks = ceil_div(g.sq, queries_per_task);
  const std::int64_t q_panels = ceil_div(max_rows, mr);
  const std::int64_t k_panels = ceil_div(kKeyBlock, nr), v_panels = ceil_div(dv, nr);
  const std::int64_t qa_stride = panel_stride(packing, d, static_cast<int>(mr));
  const std::int64_t kb_stride = panel_stride(packing, d, static_cast<int>(nr));
  const std::int64_t pa_stride = panel_stride(packing, kKeyBlock, static_cast<int>(mr));
  // S (rows x keys) and O (rows x dv) tiles: one layout, q_panels row panels.
  const TileLayout layout{mr, nr, q_panels};

  const auto task_of = [&](std::int64_t task) {
    GroupTask t{};
    t.q_begin = (task % q_blocks) * queries_per_task;
    t.kv_head = (task / q_blocks) % g.hkv;
    t.b = task / (q_blocks * g.hkv);
    t.q_count = std::min(queries_per_task, g.sq - t.q_begin);
    t.rows = t.q_count * group;
    return t;
  };
  rows::parallel_rows(g.batch * g.hkv * q_blocks, max_rows * (g.sk + 1) * (d + dv + 1),
                      [&](std::int64_t begin, std::int64_t end) {
    Scratch s;
    s.q_rows.resize(static_cast<std::size_t>(max_rows * d));
    s.q_panels.resize(static_cast<std::size_t>(q_panels * qa_stride));
    s.k_panels.resize(static_cast<std::size_t>(k_panels * kb_stride));
    s.v_panels.resize(static_cast<std::size_t>(v_panels * panel_stride(packing, kKeyBlock, static_cast<int>(nr))));
    s.p_panels.resize(static_cast<std::size_t>(q_panels * pa_stride));
    s.s_tiles.resize(static_cast<std::size_t>(q_panels * k_panels * mr * nr));
    s.o_tiles.resize(static_cast<std::size_t>(q_panels * v_panels * mr * nr));
    s.p_rows.resize(static_cast<std::size_t>(max_rows * kKeyBlock));
    s.out.resize(static_cast<std::size_t>(dv));
    s.row_keys.resize(static_cast<std::size_t>(max_rows));
    s.state.resize(static_cast<std::size_t>(max_rows));

    for (std::int64_t task = begin; task < end; ++task) {
      const GroupTask t = task_of(task);
      const auto query_of = [&](std::int64_t r) { return t.q_begin + r / group; };
      const auto head_of = [&](std::int64_t r) { return t.kv_head * group + r % group; };
      const std::int64_t used_q_panels = ceil_div(t.rows, mr);
      // The rows come from several heads: gathered (and widened) first, then
      // packed as one row-major f32 matrix.
      for (std::int64_t r = 0; r < t.rows; ++r)
        rows::gather(q, row_start(q, t.b, query_of(r), head_of(r)), q.strides[3], d, s.q_rows.data() + r * d);
      GemmMatrix q_m;
      q_m.data = s.q_rows.data();
      q_m.dtype = DType::f32;
      q_m.row_stride = d;
      q_m.col_stride = 1;
      pack_a(packing, q_m, 0, 0, t.rows, 0, d, static_cast<int>(mr), s.q_panels.data());
      layout.zero(s.o_tiles.data(), used_q_panels, v_panels);
      // P's padding rows (past rows, in the last used panel) are never
      // written: zero, so that what the micro-kernel multiplies into rows
      // nobody reads stays finite unless V is not. Entries past the keys a
      // row takes may be stale: the shared run never reaches them. Panels
      // past the used ones are never read.
      std::fill_n(s.p_panels.begin(), used_q_panels * pa_stride, 0.0f);
      std::fill_n(s.state.begin(), t.rows, QueryState<float>{});
      const GemmMatrix k_t = head_matrix(k, t.b, t.kv_head, true), v_m = head_matrix(v, t.b, t.kv_head, false);

      const std::int64_t keys_end = g.keys_of(t.q_begin + t.q_count - 1);  // the last query sees the most keys
      for (std::int64_t kb = 0; kb < keys_end; kb += kKeyBlock) {
        const std::int64_t k_count = std::min(kKeyBlock, keys_end - kb);
        const std::int64_t used_k_panels = ceil_div(k_count, nr);
        pack_b(packing, k_t, 0, kb, k_count, 0, d, static_cast<int>(nr), s.k_panels.data());
        layout.zero(s.s_tiles.data(), used_q_panels, used_k_panels);
        for (std::int64_t jp = 0; jp < used_k_panels; ++jp)
          for (std::int64_t ip = 0; ip < used_q_panels; ++ip)
            kernel.run(d, s.q_panels.data() + ip * qa_stride, s.k_panels.data() + jp * kb_stride,
                       layout.tile(s.s_tiles.data(), ip, jp));

        // The online softmax, query by query.
        for (std::int64_t r = 0; r < t.rows; ++r) {
          std::int64_t& taken = s.row_keys[static_cast<std::size_t>(r)];
          taken = 0;
          const std::int64_t valid = g.keys_in_block(query_of(r), kb, k_count);
          if (valid == 0) continue;
          float* p = s.p_rows.data() + r * kKeyBlock;
          copy_row_out(layout, s.s_tiles.data(), r, valid, p);
          vk.scale(p, scale, p, valid);
          const std::optional<float> folded = fold_scores(s.state[static_cast<std::size_t>(r)], p, valid, vk);
          if (!folded) continue;
          const float correction = *folded;
          // x * 1 is x, bit for bit (NaN and -0 included): once a query's
          // max settles, its rows need no rescaling.
          if (correction != 1.0f) {
            float* o = layout.row(s.o_tiles.data(), r);
            for (std::int64_t jp = 0; jp < v_panels; ++jp, o += layout.chunk_step()) vk.scale(o, correction, o, nr);
          }
          float* pa = s.p_panels.data() + (r / mr) * pa_stride + r % mr;
          for (std::int64_t j = 0; j < valid; ++j) pa[j * mr] = p[j];
          taken = valid;
        }

        // O += P V: per MR panel of queries, the keys all of them take
        // through the micro-kernel, then each query's own remaining keys.
        pack_b(packing, v_m, 0, 0, dv, kb, k_count, static_cast<int>(nr), s.v_panels.data());
        const std::int64_t vb_stride = panel_stride(packing, k_count, static_cast<int>(nr));
        for (std::int64_t ip = 0; ip < used_q_panels; ++ip) {
          const std::int64_t r0 = ip * mr, r1 = std::min(r0 + mr, t.rows);
          const std::int64_t shared = *std::min_element(s.row_keys.begin() + r0, s.row_keys.begin() + r1);
          if (shared > 0)
            for (std::int64_t jp = 0; jp < v_panels; ++jp)
              kernel.run(shared, s.p_panels.data() + ip * pa_stride, s.v_panels.data() + jp * vb_stride,
                         layout.tile(s.o_tiles.data(), ip, jp));
          for (std::int64_t r = r0; r < r1; ++r) {
            const std::int64_t taken = s.row_keys[static_cast<std::size_t>(r)];
            if (taken <= shared) continue;
            const float* p = s.p_rows.data() + r * kKeyBlock;
            float* o = layout.row(s.o_tiles.data(), r);
            for (std::int64_t jp = 0; jp < v_panels; ++jp, o += layout.chunk_step())
              vk.weighted_row_sum(p + shared, s.v_panels.data() + jp * vb_stride + shared * nr, DType::f32, taken - shared, nr,
                                nr, o);
          }
        }
      }

      for (std::int64_t r = 0; r < t.rows; ++r) {
        copy_row_out(layout, s.o_tiles.data(), r, dv, s.out.data());
        if (call.lse) {
          const float lse = row_lse(s.state[static_cast<std::size_t>(r)]);
          rows::scatter(*call.lse, lse_index(*call.lse, t.b, query_of(r), head_of(r)), 1, 1, &lse);
        }
        finish_row(s.state[static_cast<std::size_t>(r)], s.out.data(), dv);
        rows::scatter(y, row_start(y, t.b, query_of(r), head_of(r)), y.strides[3], dv, s.out.data());
      }
    }
  });
}

}  // namespace hal::cpu_ref::attention_detail
