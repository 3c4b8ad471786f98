#pragma once
// ThreadSanitizer build only (HAL_TSAN): stands in for oneTBB's header; see
// parallel_for.h for why. An arena here is only a concurrency limit that
// parallel_for reads on the calling thread (and passes to its helpers).
#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>

namespace tbb {
namespace std_thread_detail {

// 0: no arena, the default concurrency.
inline thread_local int arena_limit = 0;

// At least 4 threads even on a 2-core machine, so that the parallel loops the
// tests run really are concurrent under the sanitizer.
inline int default_concurrency() {
  return static_cast<int>(std::max(4u, std::thread::hardware_concurrency()));
}
// global_control's max_allowed_parallelism; 0: none.
inline std::atomic<int>& global_limit() {
  static std::atomic<int> limit{0};
  return limit;
}
inline int concurrency() {
  const int local = arena_limit > 0 ? arena_limit : default_concurrency();
  const int global = global_limit().load();
  return global > 0 ? std::min(local, global) : local;
}

struct ScopedLimit {
  explicit ScopedLimit(int limit) : saved(arena_limit) { arena_limit = limit; }
  ~ScopedLimit() { arena_limit = saved; }
  ScopedLimit(const ScopedLimit&) = delete;
  ScopedLimit& operator=(const ScopedLimit&) = delete;
  int saved;
};

}  // namespace std_thread_detail

class task_arena {
 public:
  static constexpr int automatic = -1;
  explicit task_arena(int max_concurrency = automatic, unsigned = 1)
      : limit_(max_concurrency > 0 ? max_concurrency : std_thread_detail::default_concurrency()) {}
  int max_concurrency() const { return limit_; }
  template <class F>
  decltype(auto) execute(F&& f) {
    std_thread_detail::ScopedLimit scope(limit_);
    return std::forward<F>(f)();
  }

 private:
  int limit_;
};

namespace this_task_arena {
inline int max_concurrency() { return std_thread_detail::concurrency(); }
// TBB isolates a nested wait from unrelated tasks; plain threads never run
// another caller's task while waiting, so there is nothing to isolate.
template <class F>
decltype(auto) isolate(F&& f) {
  return std::forward<F>(f)();
}
}  // namespace this_task_arena

}  // namespace tbb
