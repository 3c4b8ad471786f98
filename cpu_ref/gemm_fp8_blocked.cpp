#include "cpu_ref/gemm_fp8_blocked.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu_ref/activation.h"
#include "cpu_ref/gemm_fp8_pack.h"
#include "cpu_ref/vector_kernels.h"
#include "hal/dtype.h"
#include "hal/error.h"

namespace hal::cpu_ref {
namespace {

// Cache blocking, as the bf16 GEMM's (cpu_ref/gemm_blocked.h): the packed A
// block (MC x 128) stays in L2 beside the packed B block (NC x 128); NC is a
// multiple of 128 so that a column panel never straddles two scale blocks.
constexpr std::int64_t kMc = 144;
constexpr std::int64_t kNc = 1024;
constexpr std::int64_t kMaxRowsPerTask = 1024;  // bounds the per-task accumulator (rows x NC floats)
constexpr std::int64_t kMinRowsPerTask = 256;   // thinner tasks repack B more often
static_assert(kNc % kFp8BlockSize == 0);

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
std::int64_t round_up(std::int64_t v, std::int64_t multiple) { return ceil_div(v, multiple) * multiple; }
std::int64_t at(const Tensor& t, std::int64_t i, std::int64_t j) { return t.offset + i * t.strides[0] + j * t.strides[1]; }

// Per-thread scratch, reused across tasks (a task runs no nested parallel work).
struct Fp8Scratch {
  std::vector<std::uint32_t> a_panels, b_panels;
  std::vector<float> acc, row;
};
thread_local Fp8Scratch t_scratch;

template <class T> T* sized(std::vector<T>& v, std::int64_t count) {
  if (static_cast<std::int64_t>(v.size()) < count) v.resize(static_cast<std::size_t>(count));
  return v.data();
}

struct Fp8Task {
  std::size_t problem;
  std::int64_t i0, rows, j0, cols;
};

// Rows [i0, i0 + rows) x columns [j0, j0 + cols): gathers each row's
// accumulators (stored per MR x NR tile) and applies act(alpha * acc + beta *
// c + bias) in this order in fp32, rounding once to c's dtype.
void write_tile(const Fp8GemmProblem& p, const Fp8Task& t, const float* acc, std::int64_t m_panels, int mr, int nr,
                float* row) {
  const Fp8Epilogue& e = *p.epilogue;
  const bool plain = e.alpha == 1.0f && e.beta == 0.0f && !p.bias && e.activation == Activation::none;
  const std::int64_t cs = p.c.strides[1];
  for (std::int64_t r = 0; r < t.rows; ++r) {
    const float* acc_row = acc + (r / mr) * mr * nr + (r % mr) * nr;
    for (std::int64_t j = 0, jp = 0; j < t.cols; j += nr, ++jp)
      std::memcpy(row + j, acc_row + jp * m_panels * mr * nr,
                  sizeof(float) * static_cast<std::size_t>(std::min<std::int64_t>(nr, t.cols - j)));
    const std::int64_t i = t.i0 + r, c0 = at(p.c, i, t.j0);
    if (!plain)
      for (std::int64_t j = 0; j < t.cols; ++j) {
        float v = e.alpha * row[j];
        if (e.beta != 0.0f) v += e.beta * static_cast<float>(load_element(p.c.data, p.c.dtype, c0 + j * cs));
        if (p.bias)
          v += static_cast<float>(
              load_element(p.bias->data, p.bias->dtype, p.bias->offset + (t.j0 + j) * p.bias->strides[0]));
        row[j] = apply_activation(e.activation, v);
      }
    if (p.c.dtype == DType::f32 && cs == 1) {
      std::memcpy(static_cast<float*>(p.c.data) + c0, row, sizeof(float) * static_cast<std::size_t>(t.cols));
    } else if (p.c.dtype == DType::bf16 && cs == 1) {
      // The vector kernels round as store_element_f32 does (nearest even, NaN 0x7fff), without its dispatch.
      vector_kernels().narrow(static_cast<std::uint16_t*>(p.c.data) + c0, DType::bf16, t.cols, row);
    } else {
      for (std::int64_t j = 0; j < t.cols; ++j) store_element_f32(p.c.data, p.c.dtype, c0 + j * cs, row[j]);
    }
  }
}

void pack(const Fp8BlockKernel& kernel, const Fp8Lines& lines, std::int64_t extent, std::int64_t kc, int width,
          const Fp8Table& table, void* dst) {
  if (kernel.pack != nullptr && lines.k_stride == 1) return kernel.pack(lines, extent, kc, width, table, dst);
  pack_fp8_panels(kernel.packing, lines, extent, kc, width, table, dst);
}

void run_task(const Fp8GemmProblem& p, const Fp8Task& t, const Fp8BlockKernel& kernel, const Fp8Table& ta,
              const Fp8Table& tb) {
  const int mr = kernel.mr, nr = kernel.nr;
  const std::int64_t k = p.a.shape[1], kb_count = ceil_div(k, kFp8BlockSize);
  const std::int64_t m_panels = ceil_div(t.rows, mr), n_panels = ceil_div(t.cols, nr);
  const std::int64_t mc_max = round_up(std::min(kMc, t.rows), mr);
  const std::int64_t a_words = fp8_panel_words(kernel.packing, kFp8BlockSize, mr);
  const std::int64_t b_words = fp8_panel_words(kernel.packing, kFp8BlockSize, nr);
  std::uint32_t* a_panels = sized(t_scratch.a_panels, ceil_div(mc_max, mr) * a_words);
  std::uint32_t* b_panels = sized(t_scratch.b_panels, n_panels * b_words);
  float* acc = sized(t_scratch.acc, m_panels * n_panels * mr * nr);
  std::fill(acc, acc + m_panels * n_panels * mr * nr, 0.0f);
  const auto* a8 = static_cast<const std::uint8_t*>(p.a.data);
  const auto* b8 = static_cast<const std::uint8_t*>(p.b.data);
  const auto* sa = static_cast<const float*>(p.a_scales.data);
  const auto* sb = static_cast<const float*>(p.b_scales.data);
  std::vector<float> row_scale(static_cast<std::size_t>(mr));
  for (std::int64_t kb = 0; kb < kb_count; ++kb) {
    const std::int64_t q0 = kb * kFp8BlockSize, kc = std::min(kFp8BlockSize, k - q0);
    // Panels of this block are laid out for its own kc (a ragged last block is shorter).
    const std::int64_t a_stride = fp8_panel_words(kernel.packing, kc, mr);
    const std::int64_t b_stride = fp8_panel_words(kernel.packing, kc, nr);
    const std::int64_t packed_k = fp8_packed_k(kc);
    pack(kernel, {b8 + at(p.b, t.j0, q0), p.b.strides[0], p.b.strides[1]}, t.cols, kc, nr, tb, b_panels);
    for (std::int64_t ib = 0; ib < t.rows; ib += mc_max) {
      const std::int64_t mc = std::min(mc_max, t.rows - ib);
      pack(kernel, {a8 + at(p.a, t.i0 + ib, q0), p.a.strides[0], p.a.strides[1]}, mc, kc, mr, ta, a_panels);
      const std::int64_t first_panel = ib / mr, block_panels = ceil_div(mc, mr);
      for (std::int64_t jp = 0; jp < n_panels; ++jp) {
        const float sb_panel = sb[at(p.b_scales, (t.j0 + jp * nr) / kFp8BlockSize, kb)];
        for (std::int64_t ip = 0; ip < block_panels; ++ip) {
          // Rows past the edge are zero panels: any finite scale leaves them 0.
          const std::int64_t r0 = t.i0 + ib + ip * mr, valid = std::min<std::int64_t>(mr, t.i0 + t.rows - r0);
          for (int r = 0; r < mr; ++r) row_scale[static_cast<std::size_t>(r)] = r < valid ? sa[at(p.a_scales, r0 + r, kb)] * sb_panel : 0.0f;
          kernel.run(packed_k, a_panels + ip * a_stride, b_panels + jp * b_stride, row_scale.data(),
                     acc + (jp * m_panels + first_panel + ip) * mr * nr);
        }
      }
    }
  }
  write_tile(p, t, acc, m_panels, mr, nr, sized(t_scratch.row, n_panels * nr));
}

}  // namespace

void gemm_fp8_blocked(std::span<const Fp8GemmProblem> problems, const Fp8BlockKernel& kernel) {
  if (problems.empty()) return;
  const Fp8GemmProblem& first = problems.front();
  const std::int64_t n = first.c.shape[1];
  if (n == 0) return;
  if (kNc % kernel.nr != 0 || kFp8BlockSize % kernel.nr != 0)
    throw Error(ErrorCode::unsupported, std::string("cpu gemm_fp8: kernel ") + kernel.name + "'s NR does not divide 128");
  const Fp8Table ta = fp8_table(first.a.dtype), tb = fp8_table(first.b.dtype);
  // One column block when N fits (it starts at 0), else NC-wide blocks from 0.
  const std::int64_t nc = n <= kNc ? n : kNc, n_blocks = ceil_div(n, nc);
  // Rows split as the bf16 GEMM's wide split does: until every thread has a
  // task, then towards two per thread but not below kMinRowsPerTask, and never
  // over kMaxRowsPerTask (the bf16 GEMM's halving of NC, which pays where its
  // AMX kernel makes packing a large share, is not taken here). The split
  // changes which task computes an element, never how.
  const std::int64_t threads = tbb::this_task_arena::max_concurrency();
  std::vector<Fp8Task> tasks;
  for (std::size_t g = 0; g < problems.size(); ++g) {
    const std::int64_t m = problems[g].row1 - problems[g].row0;
    if (m <= 0) continue;
    const std::int64_t splits = std::max<std::int64_t>(
        {ceil_div(threads, n_blocks), std::min(ceil_div(2 * threads, n_blocks), std::max<std::int64_t>(1, m / kMinRowsPerTask)),
         ceil_div(m, kMaxRowsPerTask)});
    const std::int64_t rows_per_task = round_up(ceil_div(m, std::min(splits, ceil_div(m, kernel.mr))), kernel.mr);
    for (std::int64_t i = 0; i < m; i += rows_per_task)
      for (std::int64_t nb = 0; nb < n_blocks; ++nb)
        tasks.push_back({g, problems[g].row0 + i, std::min(rows_per_task, m - i), nb * nc, std::min(nc, n - nb * nc)});
  }
  if (tasks.empty()) return;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, tasks.size(), 1),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      for (std::size_t t = range.begin(); t != range.end(); ++t)
                        run_task(problems[tasks[t].problem], tasks[t], kernel, ta, tb);
                    },
                    tbb::simple_partitioner());
}

}  // namespace hal::cpu_ref
