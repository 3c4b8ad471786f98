#include "cpu_ref/gemm_f64.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <vector>

#include "cpu_ref/activation.h"
#include "hal/dtype.h"

namespace hal::cpu_ref {
namespace {

constexpr std::int64_t kRowsPerTask = 16;  // op(B)'s column is loaded once per this many rows

}  // namespace

void gemm_f64(const GemmProblem& p) {
  if (p.batch == 0 || p.m == 0 || p.n == 0) return;
  const std::int64_t row_blocks = (p.m + kRowsPerTask - 1) / kRowsPerTask;
  void* c_data = const_cast<void*>(p.c.data);

  auto run_task = [&](std::int64_t task) {
    const std::int64_t batch = task / row_blocks;
    const std::int64_t i0 = (task % row_blocks) * kRowsPerTask;
    const std::int64_t rows = std::min(kRowsPerTask, p.m - i0);
    std::vector<double> a_rows(static_cast<std::size_t>(rows * p.k));
    std::vector<double> b_col(static_cast<std::size_t>(p.k));
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t k = 0; k < p.k; ++k)
        a_rows[static_cast<std::size_t>(r * p.k + k)] = load_element(p.a.data, p.a.dtype, p.a.index(batch, i0 + r, k));
    for (std::int64_t j = 0; j < p.n; ++j) {
      for (std::int64_t k = 0; k < p.k; ++k)
        b_col[static_cast<std::size_t>(k)] = load_element(p.b.data, p.b.dtype, p.b.index(batch, k, j));
      const double bias = p.has_bias ? load_element(p.bias.data, p.bias.dtype, p.bias.index(0, 0, j)) : 0.0;
      for (std::int64_t r = 0; r < rows; ++r) {
        const double* a = a_rows.data() + r * p.k;
        double sum = 0.0;
        for (std::int64_t k = 0; k < p.k; ++k) sum += a[k] * b_col[static_cast<std::size_t>(k)];
        const std::int64_t ci = p.c.index(batch, i0 + r, j);
        double v = static_cast<double>(p.alpha) * sum;
        if (p.beta != 0.0f) v += static_cast<double>(p.beta) * load_element(c_data, p.c.dtype, ci);
        if (p.has_bias) v += bias;
        store_element(c_data, p.c.dtype, ci, apply_activation(p.activation, v));
      }
    }
  };

  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, p.batch * row_blocks, 1),
                    [&](const tbb::blocked_range<std::int64_t>& range) {
                      for (std::int64_t t = range.begin(); t != range.end(); ++t) run_task(t);
                    });
}

}  // namespace hal::cpu_ref
