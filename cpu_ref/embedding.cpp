// Embedding lookup: y[i, :] = table[ids[i], :] for every position i of ids.
//
// Two passes: every id is read and checked against [0, V) first, so a bad id
// throws before any row of y is written (the caller's buffer is left as it
// was); then rows are gathered in parallel, each by one task. Rows are moved as
// bytes when table and y share a dtype (exact for any dtype), converted through
// fp64 otherwise.
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "cpu_ref/element_io.h"
#include "cpu_ref/kernels.h"
#include "cpu_ref/strided_index.h"
#include "hal/error.h"

namespace hal::cpu_ref {

namespace {

// The ids in row-major order, each checked to be a row of the table.
std::vector<std::int64_t> checked_ids(const Tensor& ids, std::int64_t vocab) {
  const std::int64_t count = ids.numel();
  std::vector<std::int64_t> out(static_cast<std::size_t>(count));
  if (count == 0) return out;
  const StridedLayout<1> layout(ids.shape, {&ids});
  StridedCursor<1> cursor(layout, 0);
  for (std::int64_t i = 0; i < count; ++i, cursor.advance()) {
    std::int64_t id = 0;
    if (ids.dtype == DType::i64) {
      id = static_cast<const std::int64_t*>(ids.data)[cursor.offset(0)];
    } else {
      id = static_cast<const std::int32_t*>(ids.data)[cursor.offset(0)];
    }
    if (id < 0 || id >= vocab)
      throw_invalid_argument("embedding", "ids", fmt::format("ids in [0, {})", vocab),
                             fmt::format("{} at position {}", id, i));
    out[static_cast<std::size_t>(i)] = id;
  }
  return out;
}

// Copies one table row (starting at element `src`) to one y row (at `dst`).
void copy_row(const Tensor& table, std::int64_t src, const Tensor& y, std::int64_t dst, std::int64_t dim) {
  const std::int64_t src_step = table.strides[1];
  const std::int64_t dst_step = y.strides[y.rank() - 1];
  if (table.dtype != y.dtype) {
    for (std::int64_t j = 0; j < dim; ++j)
      store_element(y.data, y.dtype, dst + j * dst_step, load_element(table.data, table.dtype, src + j * src_step));
    return;
  }
  const auto bytes = static_cast<std::int64_t>(dtype_size(y.dtype));
  const auto* from = static_cast<const unsigned char*>(table.data);
  auto* to = static_cast<unsigned char*>(y.data);
  if (src_step == 1 && dst_step == 1) {
    std::memcpy(to + dst * bytes, from + src * bytes, static_cast<std::size_t>(dim * bytes));
    return;
  }
  for (std::int64_t j = 0; j < dim; ++j)
    std::memcpy(to + (dst + j * dst_step) * bytes, from + (src + j * src_step) * bytes, static_cast<std::size_t>(bytes));
}

}  // namespace

void embedding(const EmbeddingCall& call) {
  const Tensor& table = call.table;
  const Tensor& y = call.y;
  const std::vector<std::int64_t> ids = checked_ids(call.ids, table.shape[0]);
  const std::int64_t dim = table.shape[1];
  const auto rows = static_cast<std::int64_t>(ids.size());
  if (rows == 0 || dim == 0) return;

  // y viewed as its rows: shape ids.shape, strides without the last axis.
  Tensor y_rows = y;
  y_rows.shape = call.ids.shape;
  y_rows.strides.erase(y.rank() - 1);
  const StridedLayout<1> row_layout(y_rows.shape, {&y_rows});
  const std::int64_t rows_per_task = std::max<std::int64_t>(1, kBlockElements / dim);
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, rows, rows_per_task),
                    [&](const tbb::blocked_range<std::int64_t>& r) {
                      StridedCursor<1> cursor(row_layout, r.begin());
                      for (std::int64_t i = r.begin(); i != r.end(); ++i, cursor.advance()) {
                        const std::int64_t src = table.offset + ids[static_cast<std::size_t>(i)] * table.strides[0];
                        copy_row(table, src, y, cursor.offset(0), dim);
                      }
                    });
}

}  // namespace hal::cpu_ref
