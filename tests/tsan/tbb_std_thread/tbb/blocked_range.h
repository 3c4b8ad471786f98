#pragma once
// ThreadSanitizer build only (HAL_TSAN): stands in for oneTBB's header; see
// parallel_for.h for why. The subset of tbb::blocked_range that hal uses.
#include <cstddef>

namespace tbb {

template <class Value>
class blocked_range {
 public:
  blocked_range(Value begin, Value end, std::size_t grainsize = 1)
      : begin_(begin), end_(end), grainsize_(grainsize ? grainsize : 1) {}
  Value begin() const { return begin_; }
  Value end() const { return end_; }
  std::size_t size() const { return static_cast<std::size_t>(end_ - begin_); }
  bool empty() const { return !(begin_ < end_); }
  std::size_t grainsize() const { return grainsize_; }

 private:
  Value begin_, end_;
  std::size_t grainsize_;
};

}  // namespace tbb
