#pragma once
// Fixed-order reductions and the task split shared by the row-wise reference
// kernels.
//
// Sums use eight interleaved partial sums combined pairwise: the order depends
// only on the length, never on threads, so results are bitwise reproducible;
// the compiler can vectorise the lanes without reassociating anything (no
// fast-math), and the error bound is that of a sequential sum of n/8 terms
// plus three pairwise levels (within Higham's gamma_n).
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace hal::cpu_ref::rows {

inline constexpr int kLanes = 8;

template <class T> T combine_lanes(const T (&acc)[kLanes]) {
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// sum of f(k) for k < n in the fixed lane order.
template <class T, class F> T lane_sum(std::int64_t n, F&& f) {
  T acc[kLanes] = {};
  std::int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += f(k + l);
  for (int l = 0; k < n; ++k, ++l) acc[l] += f(k);
  return combine_lanes(acc);
}

template <class T> T fixed_sum(const T* v, std::int64_t n) {
  return lane_sum<T>(n, [v](std::int64_t k) { return v[k]; });
}

template <class T> T fixed_dot(const T* a, const T* b, std::int64_t n) {
  return lane_sum<T>(n, [a, b](std::int64_t k) { return a[k] * b[k]; });
}

// Maximum that propagates NaN: once NaN, always NaN.
template <class T> T nan_max(T m, T v) { return (v > m || std::isnan(v)) && !std::isnan(m) ? v : m; }

// Runs body(begin, end) over [0, count) in chunks of about `target_work`
// units, where one item costs `item_cost` units. Each item's result must not
// depend on the chunk it lands in (the kernels guarantee that), so the split
// does not affect the bits.
template <class Body> void parallel_rows(std::int64_t count, std::int64_t item_cost, Body&& body) {
  if (count <= 0) return;
  constexpr std::int64_t target_work = 1 << 15;
  const std::int64_t grain = std::max<std::int64_t>(1, target_work / std::max<std::int64_t>(1, item_cost));
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, count, static_cast<std::size_t>(grain)),
                    [&](const tbb::blocked_range<std::int64_t>& r) { body(r.begin(), r.end()); });
}

}  // namespace hal::cpu_ref::rows
