#pragma once
// ThreadSanitizer build only (HAL_TSAN, cmake/HalDependencies.cmake): the
// subset of oneTBB's parallel_for that hal uses, on plain std::threads.
//
// Why: TSan reports a race unless it saw the synchronisation that orders two
// accesses, and it sees only code compiled with -fsanitize=thread. Debian's
// libtbb is not, so every hand-off between a TBB worker and the thread that
// waits for it looks like a race. Here each loop starts its helper threads
// and joins them (thread creation and join are synchronisation TSan knows),
// and the chunks are handed out through a std::atomic, so what TSan reports
// is a real race in hal's code or its tests: between the chunks of one loop,
// or between host threads.
//
// Semantics kept: the body gets disjoint sub-ranges covering the range (no
// sub-range larger than needed and none below the grain size unless it is the
// last); an exception thrown by a body reaches the caller (the first one);
// helpers run under the caller's arena limit. Performance is not a goal.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "tbb/blocked_range.h"
#include "tbb/task_arena.h"

namespace tbb {

struct simple_partitioner {};
struct auto_partitioner {};
struct static_partitioner {};

template <class Value, class Body>
void parallel_for(const blocked_range<Value>& range, const Body& body) {
  if (range.empty()) return;
  const std::size_t total = range.size();
  const int limit = std_thread_detail::concurrency();
  // Chunks of the grain size, at most four per thread (larger when there are
  // many), handed out in order.
  const std::size_t per_chunk =
      std::max(range.grainsize(), (total + 4 * static_cast<std::size_t>(limit) - 1) / (4 * static_cast<std::size_t>(limit)));
  const std::size_t chunks = (total + per_chunk - 1) / per_chunk;
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    for (;;) {
      const std::size_t c = next.fetch_add(1);
      if (c >= chunks) return;
      const Value lo = static_cast<Value>(range.begin() + static_cast<Value>(c * per_chunk));
      const Value hi = static_cast<Value>(range.begin() + static_cast<Value>(std::min(total, (c + 1) * per_chunk)));
      try {
        body(blocked_range<Value>(lo, hi, range.grainsize()));
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next.store(chunks);
      }
    }
  };
  const std::size_t helpers = std::min<std::size_t>(static_cast<std::size_t>(limit), chunks) - 1;
  std::vector<std::thread> threads;
  threads.reserve(helpers);
  for (std::size_t i = 0; i < helpers; ++i)
    threads.emplace_back([&work, limit] {
      std_thread_detail::ScopedLimit scope(limit);
      work();
    });
  work();
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

template <class Value, class Body, class Partitioner>
void parallel_for(const blocked_range<Value>& range, const Body& body, const Partitioner&) {
  parallel_for(range, body);
}

}  // namespace tbb
