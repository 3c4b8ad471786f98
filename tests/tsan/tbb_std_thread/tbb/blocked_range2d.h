#pragma once
// ThreadSanitizer build only (HAL_TSAN): stands in for oneTBB's header; see
// parallel_for.h. A 2-D range; parallel_for splits it by rows.
#include <cstddef>

#include "tbb/blocked_range.h"
#include "tbb/parallel_for.h"

namespace tbb {

template <class RowValue, class ColValue = RowValue>
class blocked_range2d {
 public:
  blocked_range2d(RowValue row_begin, RowValue row_end, ColValue col_begin, ColValue col_end)
      : rows_(row_begin, row_end), cols_(col_begin, col_end) {}
  blocked_range2d(const blocked_range<RowValue>& rows, const blocked_range<ColValue>& cols) : rows_(rows), cols_(cols) {}
  const blocked_range<RowValue>& rows() const { return rows_; }
  const blocked_range<ColValue>& cols() const { return cols_; }
  bool empty() const { return rows_.empty() || cols_.empty(); }

 private:
  blocked_range<RowValue> rows_;
  blocked_range<ColValue> cols_;
};

// Split by rows (each chunk gets every column).
template <class RowValue, class ColValue, class Body>
void parallel_for(const blocked_range2d<RowValue, ColValue>& range, const Body& body) {
  if (range.empty()) return;
  parallel_for(range.rows(), [&](const blocked_range<RowValue>& rows) {
    body(blocked_range2d<RowValue, ColValue>(rows, range.cols()));
  });
}

}  // namespace tbb
