#pragma once
// The fixed split of R rows into blocks for gradients that sum over rows
// (norm backward's dweight and dbias): block b holds rows
// [b * size, min(R, (b + 1) * size)), each block sums its rows in order into
// its own partial, and the partials are added in block order. The split
// depends on R alone (never on the thread count), so the sum's bits do not
// either; at most kMaxBlocks partials keep the scratch at kMaxBlocks x D.
#include <algorithm>
#include <cstdint>

namespace hal::cpu_ref::rows {

struct RowBlocks {
  static constexpr std::int64_t kMinRows = 32;
  static constexpr std::int64_t kMaxBlocks = 256;
  std::int64_t size = 1, count = 0;

  explicit RowBlocks(std::int64_t rows) {
    size = std::max(kMinRows, (rows + kMaxBlocks - 1) / kMaxBlocks);
    count = (rows + size - 1) / size;
  }
};

}  // namespace hal::cpu_ref::rows
