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
#include "cpu_ref/half_convert.h"
#include "cpu_ref/vector_kernels.h"
#include "hal/dtype.h"
#include "hal/error.h"
#include "hal/shape.h"

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
  ScratchBuffer a_panels, b_panels, accumulator, row;
};
thread_local GemmScratch t_scratch;

constexpr std::int64_t kMinRowsPerTask = 256;
// Tiles of at most this many rows stream op(B) instead of packing it
// (GemmStreamBFn): below it, packing B costs more than the kernel; above it,
// the packed micro-kernel's register-resident tile wins (measured on the
// 2-core VM: M = 1 and 16 at N = K = 4096 gain, M = 32 does not).
constexpr std::int64_t kStreamBRows = 24;

// op(B) layouts GemmStreamBFn reads in place: row-major f32 or bf16.
bool b_can_stream(const GemmMatrix& b) {
  return b.col_stride == 1 && (b.dtype == DType::f32 || b.dtype == DType::bf16);
}

std::int64_t round_up(std::int64_t v, std::int64_t multiple) { return (v + multiple - 1) / multiple * multiple; }

// Decode shapes (a few rows) cannot be split by rows, so their columns are
// split finer than NC: at least kDecodeTasksPerThread tasks per thread, none
// narrower than kMinDecodeColumns. Without it a one-row product over a weight
// of N <= NC columns (a model's q/k/v/o and down projections) ran as one task
// on one thread while the others idled. One task per thread, not two: each
// task streams its columns' segment of every B row, and the longer segments
// stream better (AVX2 Zen 3 VM, 2 threads, best of 10, alternating:
// 1x1024x1024 8.1 -> 10.1-11.0 GB/s, 1x1024x256 4.4-5.4 -> 7.6-8.0,
// 1x2816x1024 9.1 -> 10.7-11.0; bench/probes/decode_gemm_stream.cpp).
// Which task computes a column never changes how (K is not split), so the
// bits stay those of any other split.
//
// When the batch alone gives every thread a task and each batch's op(B) rows
// lie back to back (a column-blocked weight: [blocks, K, N / blocks], each
// block one batch), a task takes its batch's whole rows, up to
// kMaxWholeRowColumns: its B is then one contiguous stream instead of a
// segment of every row, which the 2-core Zen 3 VM read 9-20% faster
// (bench/probes/decode_stream_blocked.cpp).
constexpr std::int64_t kDecodeTasksPerThread = 1;
constexpr std::int64_t kMinDecodeColumns = 64;
constexpr std::int64_t kMaxWholeRowColumns = 4096;
std::int64_t decode_column_cap(const GemmProblem& p, const GemmBlocking& blocking, std::int64_t threads) {
  if (p.m > kStreamBRows) return blocking.nc;
  const std::int64_t per_batch = ceil_div(kDecodeTasksPerThread * threads, p.batch);
  if (per_batch == 1 && b_can_stream(p.b) && p.b.row_stride == p.n && p.n <= kMaxWholeRowColumns) return p.n;
  return std::min(blocking.nc, std::max(kMinDecodeColumns, ceil_div(p.n, per_batch)));
}

// One output row of a tile: gathers its fp32 accumulators (stored per MR x NR
// micro-tile) into `row`, then applies act(alpha * acc + beta * C + bias) in
// this order in fp32 and rounds once to C's dtype. Each step is a separate
// pass over the row, and the common case (alpha 1, beta 0, no bias, no
// activation, contiguous f32 C) copies the accumulators straight into C; the
// arithmetic per element is the same whichever steps run. C is read only
// when beta != 0.
void write_row(const GemmProblem& p, std::int64_t batch, std::int64_t i, std::int64_t j0, std::int64_t nc,
               const float* acc_row, std::int64_t panel_floats, int nr, float* row) {
  void* c_data = const_cast<void*>(p.c.data);
  const std::int64_t c0 = p.c.index(batch, i, j0), cs = p.c.col_stride;
  // No epilogue and a contiguous f32 C: the accumulators are the result.
  const bool plain = p.alpha == 1.0f && p.beta == 0.0f && !p.has_bias && p.activation == Activation::none &&
                     p.c.dtype == DType::f32 && cs == 1;
  float* gathered = plain ? static_cast<float*>(c_data) + c0 : row;
  for (std::int64_t j = 0, jp = 0; j < nc; j += nr, ++jp) {
    const std::int64_t width = std::min<std::int64_t>(nr, nc - j);
    // A loop, not memcpy: a libc call per NR floats was a few percent of a
    // 1024^3 AMX product (a profile's memmove share).
    const float* from = acc_row + jp * panel_floats;
    for (std::int64_t w = 0; w < width; ++w) gathered[j + w] = from[w];
  }
  if (plain) return;
  if (p.alpha != 1.0f)
    for (std::int64_t j = 0; j < nc; ++j) row[j] *= p.alpha;
  if (p.beta != 0.0f)
    for (std::int64_t j = 0; j < nc; ++j) row[j] += p.beta * load_element_f32(c_data, p.c.dtype, c0 + j * cs);
  if (p.has_bias) {
    const std::int64_t b0 = p.bias.index(0, 0, j0), bs = p.bias.col_stride;
    if (p.bias.dtype == DType::f32 && bs == 1) {
      const float* bias = static_cast<const float*>(p.bias.data) + b0;
      for (std::int64_t j = 0; j < nc; ++j) row[j] += bias[j];
    } else {
      for (std::int64_t j = 0; j < nc; ++j) row[j] += load_element_f32(p.bias.data, p.bias.dtype, b0 + j * bs);
    }
  }
  if (p.activation != Activation::none)
    for (std::int64_t j = 0; j < nc; ++j) row[j] = apply_activation(p.activation, row[j]);
  if (p.c.dtype == DType::f32 && cs == 1) {
    std::memcpy(static_cast<float*>(c_data) + c0, row, sizeof(float) * static_cast<std::size_t>(nc));
  } else if (p.c.dtype == DType::f32) {
    for (std::int64_t j = 0; j < nc; ++j) static_cast<float*>(c_data)[c0 + j * cs] = row[j];
  } else if ((p.c.dtype == DType::bf16 || p.c.dtype == DType::f16) && cs == 1) {
    // The vector kernels' rounding (the same bits as float_to_bf16_bits and
    // float_to_f16_bits): the baseline-ISA loop it replaced was about 12% of
    // a 1024^3 bf16 product on the AMX kernel (a profile, 2-core Xeon).
    vector_kernels().narrow(static_cast<std::uint16_t*>(c_data) + c0, p.c.dtype, nc, row);
  } else if (p.c.dtype == DType::bf16) {
    for (std::int64_t j = 0; j < nc; ++j) static_cast<std::uint16_t*>(c_data)[c0 + j * cs] = float_to_bf16_bits(row[j]);
  } else if (p.c.dtype == DType::f16) {
    for (std::int64_t j = 0; j < nc; ++j) static_cast<std::uint16_t*>(c_data)[c0 + j * cs] = float_to_f16_bits(row[j]);
  } else {
    for (std::int64_t j = 0; j < nc; ++j) store_element_f32(c_data, p.c.dtype, c0 + j * cs, row[j]);
  }
}

void write_tile(const GemmProblem& p, std::int64_t batch, std::int64_t i0, std::int64_t rows, std::int64_t j0,
                std::int64_t nc, const float* acc, std::int64_t m_panels, int mr, int nr, float* row) {
  const std::int64_t panel_floats = m_panels * mr * nr;  // from one NR column panel to the next
  for (std::int64_t i = 0; i < rows; ++i) {
    const float* acc_row = acc + (i / mr) * mr * nr + (i % mr) * nr;
    write_row(p, batch, i0 + i, j0, nc, acc_row, panel_floats, nr, row);
  }
}

// How the output is cut into tasks: n_blocks column blocks of nc columns,
// m_tasks row blocks of rows_per_task rows (per batch).
struct TaskSplit {
  std::int64_t nc, n_blocks, rows_per_task, m_tasks;
};

// A task covers `rows_per_task` rows (several MC blocks) so that its packed
// B block is reused by all of them instead of being packed again per MC
// block. Rows are split until every thread has a task, then further towards
// two tasks per thread (load balance) but not below kMinRowsPerTask (each
// task packs its own B block: thinner tasks repack B more often; on the
// 2-core VM, f32 2048^3 ran 1-7% faster in 9 of 10 alternating rounds with
// two tasks per thread than with four). Splits are even (a multiple of MR,
// not of MC: the last MC block of a task may be short).
TaskSplit split_for_columns(const GemmProblem& p, const GemmBlocking& blocking, std::int64_t threads,
                            std::int64_t nc, int mr) {
  const std::int64_t n_blocks = ceil_div(p.n, nc);
  const std::int64_t col_tasks = p.batch * n_blocks;
  const std::int64_t row_splits = std::max<std::int64_t>(
      {ceil_div(threads, col_tasks),
       std::min(ceil_div(2 * threads, col_tasks), std::max<std::int64_t>(1, p.m / kMinRowsPerTask)),
       ceil_div(p.m, blocking.max_rows_per_task)});
  const std::int64_t rows_per_task = round_up(ceil_div(p.m, row_splits), mr);
  return {nc, n_blocks, rows_per_task, ceil_div(p.m, rows_per_task)};
}

// Every task packs its own A rows for each of its column blocks and its own B
// columns for each of its row blocks, so a split packs m_tasks * N * K
// elements of B and n_blocks * M * K of A. When few column blocks leave the
// rows cut thin (1024^3 on 2 threads: 4 tasks of 256 rows, each packing all of
// B), NC / 2 packs less: it is taken when it does. On the 2-core AMX Xeon,
// 1024^3 bf16 ran 5-10% faster with NC 512 than 1024 (60 alternating
// samples, two rounds), while 2048^3 and 4096^3, where the rule keeps 1024,
// ran 3-6% slower with it; the f32 and AVX-512 BF16 kernels were unchanged
// (packing is a smaller share of their time). Only the split changes: which
// task computes an element, never how.
TaskSplit choose_task_split(const GemmProblem& p, const GemmBlocking& blocking, std::int64_t threads,
                            std::int64_t nc_max, int mr, int nr) {
  const TaskSplit wide = split_for_columns(p, blocking, threads, nc_max, mr);
  if (p.m <= kStreamBRows || nc_max < 2 * nr) return wide;
  const TaskSplit narrow = split_for_columns(p, blocking, threads, round_up(nc_max / 2, nr), mr);
  auto packed = [&](const TaskSplit& s) { return s.m_tasks * p.n + s.n_blocks * p.m; };  // times K
  return packed(narrow) < packed(wide) ? narrow : wide;
}

}  // namespace

void pack_pair_panels_baseline(const GemmMatrix& m, std::int64_t batch, std::int64_t line0, std::int64_t extent,
                               std::int64_t line_stride, std::int64_t k0, std::int64_t kc, std::int64_t k_stride,
                               int width, std::uint32_t* dst) {
  pack_pair_panels(m, batch, line0, extent, line_stride, k0, kc, k_stride, width, dst);
}

void gemm_fp32_blocked(const GemmProblem& p, const GemmMicroKernel& kernel, const GemmBlocking& blocking) {
  if (p.batch == 0 || p.m == 0 || p.n == 0) return;
  // Decode shapes on a kernel without stream_b: the same bits from one that has it.
  if (p.m <= kStreamBRows && b_can_stream(p.b) && !kernel.stream_b)
    if (const GemmMicroKernel* other = decode_kernel_for(kernel, gemm_microkernels_available()); other && other != &kernel)
      return gemm_fp32_blocked(p, *other, blocking);
  const int mr = kernel.mr, nr = kernel.nr;
  const std::int64_t mc_max = round_up(std::min(blocking.mc, round_up(p.m, mr)), mr);
  const std::int64_t threads = tbb::this_task_arena::max_concurrency();
  const std::int64_t nc_max = round_up(std::min(decode_column_cap(p, blocking, threads), round_up(p.n, nr)), nr);
  // K blocks start at multiples of the kernel's granule (bf16 pairs never straddle two blocks).
  const std::int64_t kc_max = round_up(std::max<std::int64_t>(1, std::min(blocking.kc, p.k)), kernel.k_granule());
  const GemmPacking packing = kernel.packing;
  if (kernel.bf16_only() && (p.a.dtype != DType::bf16 || p.b.dtype != DType::bf16))
    throw Error(ErrorCode::invalid_argument, std::string("cpu gemm: the ") + kernel.name +
                                                 " micro-kernel takes bf16 A and B only");
  const TaskSplit split = choose_task_split(p, blocking, threads, nc_max, mr, nr);
  const std::int64_t n_blocks = split.n_blocks, rows_per_task = split.rows_per_task, m_tasks = split.m_tasks;
  const std::int64_t nc_task = split.nc;
  const std::int64_t tiles = p.batch * m_tasks * n_blocks;

  auto run_tile = [&](std::int64_t tile) {
    const std::int64_t batch = tile / (m_tasks * n_blocks);
    const std::int64_t mt = (tile / n_blocks) % m_tasks, nb = tile % n_blocks;
    const std::int64_t i0 = mt * rows_per_task, rows = std::min(rows_per_task, p.m - i0);
    const std::int64_t j0 = nb * nc_task, nc = std::min(nc_task, p.n - j0);
    const std::int64_t m_panels = ceil_div(rows, mr), n_panels = ceil_div(nc, nr);

    float* acc = t_scratch.accumulator.get(m_panels * n_panels * mr * nr);
    float* a_panels = t_scratch.a_panels.get(ceil_div(mc_max, mr) * panel_stride(packing, kc_max, mr));
    float* b_panels = t_scratch.b_panels.get(n_panels * panel_stride(packing, kc_max, nr));
    std::memset(acc, 0, sizeof(float) * static_cast<std::size_t>(m_panels * n_panels * mr * nr));
    if (kernel.begin_task) kernel.begin_task();

    // A tile of a few rows (decode shapes) reads a row-major f32/bf16 op(B)
    // where it lies (GemmStreamBFn); only a partial last panel is packed.
    const bool stream_b = kernel.stream_b != nullptr && rows <= kStreamBRows && rows <= mc_max && b_can_stream(p.b);
    for (std::int64_t k0 = 0; k0 < p.k; k0 += kc_max) {
      const std::int64_t kc = std::min(kc_max, p.k - k0);
      const std::int64_t a_stride = panel_stride(packing, kc, mr), b_stride = panel_stride(packing, kc, nr);
      if (stream_b) {
        pack_a(packing, p.a, batch, i0, rows, k0, kc, mr, a_panels);
        const std::int64_t whole = nc / nr, b0 = p.b.index(batch, k0, j0);
        const void* b = static_cast<const char*>(p.b.data) + b0 * static_cast<std::int64_t>(dtype_size(p.b.dtype));
        kernel.stream_b(kc, a_panels, a_stride, rows, b, p.b.dtype, p.b.row_stride, whole, acc, m_panels);
        if (whole < n_panels) {
          pack_b(packing, p.b, batch, j0 + whole * nr, nc - whole * nr, k0, kc, nr, b_panels);
          for (std::int64_t ip = 0; ip < m_panels; ++ip)
            kernel.run(kc, a_panels + ip * a_stride, b_panels, acc + (whole * m_panels + ip) * mr * nr);
        }
        continue;
      }
      pack_b(packing, p.b, batch, j0, nc, k0, kc, nr, b_panels, kernel.pack_pairs);
      for (std::int64_t ib = 0; ib < rows; ib += mc_max) {
        const std::int64_t mc = std::min(mc_max, rows - ib);
        pack_a(packing, p.a, batch, i0 + ib, mc, k0, kc, mr, a_panels, kernel.pack_pairs);
        const std::int64_t first_panel = ib / mr, block_panels = ceil_div(mc, mr);
        if (kernel.run_grid) {
          kernel.run_grid(kc, a_panels, a_stride, block_panels, b_panels, b_stride, n_panels,
                          acc + first_panel * mr * nr, mr * nr, m_panels * mr * nr);
          continue;
        }
        for (std::int64_t jp = 0; jp < n_panels; ++jp)
          for (std::int64_t ip = 0; ip < block_panels; ++ip)
            kernel.run(kc, a_panels + ip * a_stride, b_panels + jp * b_stride,
                       acc + (jp * m_panels + first_panel + ip) * mr * nr);
      }
    }
    if (kernel.end_task) kernel.end_task();
    write_tile(p, batch, i0, rows, j0, nc, acc, m_panels, mr, nr, t_scratch.row.get(n_panels * nr));
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
