#pragma once
// ThreadSanitizer build only (HAL_TSAN): stands in for oneTBB's header; see
// parallel_for.h. The functional form of parallel_reduce: the chunks are
// reduced in parallel, then joined in chunk order.
#include <algorithm>
#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

#include "tbb/blocked_range.h"
#include "tbb/parallel_for.h"

namespace tbb {

template <class Value, class T, class RealBody, class Reduction>
T parallel_reduce(const blocked_range<Value>& range, const T& identity, const RealBody& body,
                  const Reduction& reduction) {
  if (range.empty()) return identity;
  std::mutex mutex;
  std::vector<std::pair<Value, T>> partial;
  parallel_for(range, [&](const blocked_range<Value>& r) {
    T v = body(r, identity);
    std::lock_guard lock(mutex);
    partial.emplace_back(r.begin(), std::move(v));
  });
  std::sort(partial.begin(), partial.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  T result = identity;
  for (auto& p : partial) result = reduction(result, p.second);
  return result;
}

}  // namespace tbb
