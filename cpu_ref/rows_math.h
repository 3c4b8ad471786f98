#pragma once
// Fixed-order reductions and the task split shared by the row-wise reference
// kernels.
//
// Sums use 32 interleaved partial sums (lane l takes the terms k with
// k % 32 == l) combined pairwise: the order depends only on the length, never
// on threads, so results are bitwise reproducible; the compiler can vectorise
// the lanes without reassociating anything (no fast-math), and the error bound
// is that of a sequential sum of n/32 terms plus five pairwise levels (within
// Higham's gamma_n). 32 lanes rather than 8: four independent 8-wide add
// chains, where one chain made the AVX2 sums wait 3 cycles per vector.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace hal::cpu_ref::rows {

inline constexpr int kLanes = 32;

// The four groups of eight lanes added lane by lane, ((g0 + g1) + (g2 + g3)),
// then the eight results pairwise.
template <class T> T combine_lanes(const T (&acc)[kLanes]) {
  T l[8];
  for (int i = 0; i < 8; ++i) l[i] = (acc[i] + acc[8 + i]) + (acc[16 + i] + acc[24 + i]);
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
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

// The index of the first largest (largest) or smallest element of v[0, n),
// 0 when n is 0. A NaN counts as both, so the first NaN wins. This is
// reduce's argmax, and its max / min are v at this index: a strict compare
// keeps the first of equal values, -0 and +0 included.
template <class T> std::int64_t first_extreme(const T* v, std::int64_t n, bool largest) {
  std::int64_t best = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    if (std::isnan(v[k])) return k;
    if (largest ? v[k] > v[best] : v[k] < v[best]) best = k;
  }
  return best;
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
