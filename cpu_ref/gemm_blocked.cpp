#include "cpu_ref/gemm_blocked.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include "cpu_ref/activation.h"
#include "cpu_ref/gemm_pack.h"
#include "hal/dtype.h"

namespace hal::cpu_ref {
namespace {

// A grow-only, 64-byte-aligned float buffer (one cache line; a zmm register).
class ScratchBuffer {
 public:
  float* get(std::int64_t count) {
    if (count > capacity_) {
      data_.reset(static_cast<float*>(::operator new[](static_cast<std::size_t>(count) * sizeof(float),
                                                       std::align_val_t{64})));
      capacity_ = count;
    }
    return data_.get();
  }

 private:
  struct AlignedDelete {
    void operator()(float* p) const { ::operator delete[](p, std::align_val_t{64}); }
  };
  std::unique_ptr<float[], AlignedDelete> data_;
  std::int64_t capacity_ = 0;
};

// Per-thread scratch; a task never yields to another task mid-tile (its body
// runs no nested parallel work), so one set per thread is enough.
struct GemmScratch {
  ScratchBuffer a_panels, b_panels, accumulator;
};
thread_local GemmScratch t_scratch;

std::int64_t round_up(std::int64_t v, std::int64_t multiple) { return (v + multiple - 1) / multiple * multiple; }
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// act(alpha * acc + beta * C + bias), evaluated in this order in fp32, then
// rounded once to C's dtype. C is read only when beta != 0.
void write_tile(const GemmProblem& p, std::int64_t batch, std::int64_t i0, std::int64_t mc, std::int64_t j0,
                std::int64_t nc, const float* acc, std::int64_t m_panels, int mr, int nr) {
  void* c_data = const_cast<void*>(p.c.data);
  for (std::int64_t i = 0; i < mc; ++i) {
    const std::int64_t ip = i / mr, r = i % mr;
    for (std::int64_t j = 0; j < nc; ++j) {
      const std::int64_t jp = j / nr, col = j % nr;
      float v = p.alpha * acc[(jp * m_panels + ip) * mr * nr + r * nr + col];
      const std::int64_t ci = p.c.index(batch, i0 + i, j0 + j);
      if (p.beta != 0.0f) v += p.beta * load_element_f32(c_data, p.c.dtype, ci);
      if (p.has_bias) v += load_element_f32(p.bias.data, p.bias.dtype, p.bias.index(0, 0, j0 + j));
      v = apply_activation(p.activation, v);
      if (p.c.dtype == DType::f32) static_cast<float*>(c_data)[ci] = v;
      else store_element_f32(c_data, p.c.dtype, ci, v);
    }
  }
}

}  // namespace

void gemm_fp32_blocked(const GemmProblem& p, const GemmMicroKernel& kernel, const GemmBlocking& blocking) {
  if (p.batch == 0 || p.m == 0 || p.n == 0) return;
  const int mr = kernel.mr, nr = kernel.nr;
  const std::int64_t mc_max = round_up(std::min(blocking.mc, round_up(p.m, mr)), mr);
  const std::int64_t nc_max = round_up(std::min(blocking.nc, round_up(p.n, nr)), nr);
  const std::int64_t kc_max = std::max<std::int64_t>(1, std::min(blocking.kc, p.k));
  const std::int64_t n_blocks = ceil_div(p.n, nc_max);
  // A task covers `rows_per_task` rows (several MC blocks) so that its packed
  // B block is reused by all of them instead of being packed again per MC
  // block; rows are split only as far as needed to give each thread a few
  // tasks. The split changes which task computes an element, never how.
  const std::int64_t wanted_tasks = 4 * static_cast<std::int64_t>(tbb::this_task_arena::max_concurrency());
  const std::int64_t row_splits = std::max<std::int64_t>(
      {1, ceil_div(wanted_tasks, p.batch * n_blocks), ceil_div(p.m, blocking.max_rows_per_task)});
  const std::int64_t rows_per_task = round_up(ceil_div(p.m, row_splits), mc_max);
  const std::int64_t m_tasks = ceil_div(p.m, rows_per_task);
  const std::int64_t tiles = p.batch * m_tasks * n_blocks;

  auto run_tile = [&](std::int64_t tile) {
    const std::int64_t batch = tile / (m_tasks * n_blocks);
    const std::int64_t mt = (tile / n_blocks) % m_tasks, nb = tile % n_blocks;
    const std::int64_t i0 = mt * rows_per_task, rows = std::min(rows_per_task, p.m - i0);
    const std::int64_t j0 = nb * nc_max, nc = std::min(nc_max, p.n - j0);
    const std::int64_t m_panels = ceil_div(rows, mr), n_panels = ceil_div(nc, nr);

    float* acc = t_scratch.accumulator.get(m_panels * n_panels * mr * nr);
    float* a_panels = t_scratch.a_panels.get(ceil_div(mc_max, mr) * packed_panel_stride(kc_max, mr));
    float* b_panels = t_scratch.b_panels.get(n_panels * packed_panel_stride(kc_max, nr));
    std::memset(acc, 0, sizeof(float) * static_cast<std::size_t>(m_panels * n_panels * mr * nr));

    for (std::int64_t k0 = 0; k0 < p.k; k0 += kc_max) {
      const std::int64_t kc = std::min(kc_max, p.k - k0);
      const std::int64_t a_stride = packed_panel_stride(kc, mr), b_stride = packed_panel_stride(kc, nr);
      pack_b(p.b, batch, j0, nc, k0, kc, nr, b_panels);
      for (std::int64_t ib = 0; ib < rows; ib += mc_max) {
        const std::int64_t mc = std::min(mc_max, rows - ib);
        pack_a(p.a, batch, i0 + ib, mc, k0, kc, mr, a_panels);
        const std::int64_t first_panel = ib / mr, block_panels = ceil_div(mc, mr);
        for (std::int64_t jp = 0; jp < n_panels; ++jp)
          for (std::int64_t ip = 0; ip < block_panels; ++ip)
            kernel.run(kc, a_panels + ip * a_stride, b_panels + jp * b_stride,
                       acc + (jp * m_panels + first_panel + ip) * mr * nr);
      }
    }
    write_tile(p, batch, i0, rows, j0, nc, acc, m_panels, mr, nr);
  };

  if (tiles == 1) {
    run_tile(0);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, tiles, 1),
                    [&](const tbb::blocked_range<std::int64_t>& range) {
                      for (std::int64_t t = range.begin(); t != range.end(); ++t) run_tile(t);
                    },
                    tbb::simple_partitioner());
}

}  // namespace hal::cpu_ref
