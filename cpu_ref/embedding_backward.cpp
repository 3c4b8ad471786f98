// embedding_backward: dtable[ids[i], :] += dy[i, :].
//
// Every id is read and checked first (a bad one throws before anything is
// written). A stable counting sort of the positions by id then gives each
// table row its positions in ascending order; rows are independent tasks,
// each starting from its prior value, adding its dy rows in that order in
// fp32 (fp64 for the oracle) and rounding once. No float atomics, no order
// that depends on threads: PyTorch's CUDA embedding backward and index_add_
// are non-deterministic for repeated ids; this is not.
#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cstdint>
#include <vector>

#include "cpu_ref/kernels.h"
#include "cpu_ref/rows_access.h"
#include "cpu_ref/strided_index.h"
#include "hal/error.h"

namespace hal::cpu_ref {

namespace {

std::vector<std::int64_t> checked_ids(const Tensor& ids, std::int64_t vocab) {
  const std::int64_t count = ids.numel();
  std::vector<std::int64_t> out(static_cast<std::size_t>(count));
  if (count == 0) return out;
  const StridedLayout<1> layout(ids.shape, {&ids});
  StridedCursor<1> cursor(layout, 0);
  for (std::int64_t i = 0; i < count; ++i, cursor.advance()) {
    const std::int64_t id = ids.dtype == DType::i64 ? static_cast<const std::int64_t*>(ids.data)[cursor.offset(0)]
                                                    : static_cast<const std::int32_t*>(ids.data)[cursor.offset(0)];
    if (id < 0 || id >= vocab)
      throw_invalid_argument("embedding_backward", "ids", fmt::format("ids in [0, {})", vocab),
                             fmt::format("{} at position {}", id, i));
    out[static_cast<std::size_t>(i)] = id;
  }
  return out;
}

template <class T> void embedding_backward_typed(const EmbeddingBackwardCall& c) {
  const Tensor& table = c.dtable;
  const std::int64_t vocab = table.shape[0], dim = table.shape[1];
  const std::vector<std::int64_t> ids = checked_ids(c.ids, vocab);
  if (ids.empty() || dim == 0) return;
  // Positions grouped by id, ascending within each id (stable counting sort).
  std::vector<std::int64_t> start(static_cast<std::size_t>(vocab) + 1, 0);
  for (std::int64_t id : ids) ++start[static_cast<std::size_t>(id) + 1];
  for (std::int64_t r = 0; r < vocab; ++r) start[static_cast<std::size_t>(r) + 1] += start[static_cast<std::size_t>(r)];
  std::vector<std::int64_t> order(ids.size()), fill(start.begin(), start.end() - 1);
  for (std::size_t i = 0; i < ids.size(); ++i) order[static_cast<std::size_t>(fill[static_cast<std::size_t>(ids[i])]++)] = static_cast<std::int64_t>(i);
  std::vector<std::int64_t> touched;
  for (std::int64_t r = 0; r < vocab; ++r)
    if (start[static_cast<std::size_t>(r) + 1] > start[static_cast<std::size_t>(r)]) touched.push_back(r);

  // dy viewed as its rows (one per position of ids, row-major).
  Tensor dy_rows = c.dy;
  dy_rows.shape = c.ids.shape;
  dy_rows.strides.erase(c.dy.rank() - 1);
  const std::int64_t dy_step = c.dy.strides[c.dy.rank() - 1];
  const Shape& pos_shape = dy_rows.shape;
  const Strides& pos_strides = dy_rows.strides;

  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, touched.size()), [&](const tbb::blocked_range<std::size_t>& br) {
    std::vector<T> acc(static_cast<std::size_t>(dim)), row(static_cast<std::size_t>(dim));
    for (std::size_t k = br.begin(); k != br.end(); ++k) {
      const std::int64_t r = touched[k];
      const std::int64_t at = table.offset + r * table.strides[0];
      rows::gather(table, at, table.strides[1], dim, acc.data());
      for (std::int64_t p = start[static_cast<std::size_t>(r)]; p < start[static_cast<std::size_t>(r) + 1]; ++p) {
        const std::int64_t pos = order[static_cast<std::size_t>(p)];
        rows::gather(c.dy, rows::offset_of(pos, pos_shape, pos_strides, c.dy.offset), dy_step, dim, row.data());
        for (std::int64_t j = 0; j < dim; ++j) acc[j] += row[j];
      }
      rows::scatter(table, at, table.strides[1], dim, acc.data());
    }
  });
}

}  // namespace

void embedding_backward(const EmbeddingBackwardCall& call) {
  if (call.dtable.dtype == DType::f64)
    embedding_backward_typed<double>(call);
  else
    embedding_backward_typed<float>(call);
}

}  // namespace hal::cpu_ref
