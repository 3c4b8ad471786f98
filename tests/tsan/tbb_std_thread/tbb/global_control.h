#pragma once
// ThreadSanitizer build only (HAL_TSAN): stands in for oneTBB's header; see
// parallel_for.h. max_allowed_parallelism caps the default concurrency
// while the object lives (process-wide, as in TBB).
#include <cstddef>

#include "tbb/task_arena.h"

namespace tbb {

class global_control {
 public:
  enum parameter { max_allowed_parallelism, thread_stack_size };
  global_control(parameter p, std::size_t value) : p_(p), saved_(std_thread_detail::global_limit().load()) {
    if (p_ == max_allowed_parallelism) std_thread_detail::global_limit().store(static_cast<int>(value));
  }
  ~global_control() {
    if (p_ == max_allowed_parallelism) std_thread_detail::global_limit().store(saved_);
  }
  global_control(const global_control&) = delete;
  global_control& operator=(const global_control&) = delete;

 private:
  parameter p_;
  int saved_;
};

}  // namespace tbb
