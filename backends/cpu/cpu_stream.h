#pragma once
// CPU streams run each command to completion before returning, which keeps
// them in order; events record the steady clock.
#include <chrono>
#include <memory>

#include <tbb/task_arena.h>

#include "hal/device.h"

namespace hal::cpu {

class CpuEvent final : public EventImpl {
 public:
  void synchronize() override {}
  double elapsed_ms(const EventImpl& start) const override;
  void stamp() { time_ = std::chrono::steady_clock::now(); recorded_ = true; }

 private:
  std::chrono::steady_clock::time_point time_{};
  bool recorded_ = false;
};

// A stream of a partition (backends/cpu/cpu_partition.h) runs its ops inside
// the partition's task arena; a plain stream in the caller's arena.
class CpuStream final : public StreamImpl {
 public:
  explicit CpuStream(std::shared_ptr<tbb::task_arena> arena = nullptr) : arena_(std::move(arena)) {}
  tbb::task_arena* arena() const noexcept { return arena_.get(); }
  void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) override;
  void memset(void* dst, int value, std::size_t bytes) override;
  void synchronize() override {}
  void record(EventImpl& event) override;
  void wait(EventImpl&) override {}

 private:
  std::shared_ptr<tbb::task_arena> arena_;
};

}  // namespace hal::cpu
