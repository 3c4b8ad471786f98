// CPU partitions: a oneTBB task_arena of N threads each. The arena keeps one
// slot for the thread that calls execute() (the one issuing work on the
// partition's stream), so N - 1 workers join it; arenas do not share workers,
// which is what keeps a GEMM on one partition off the threads of another.
#include <memory>

#include "backends/cpu/cpu_device.h"
#include "backends/cpu/cpu_stream.h"

namespace hal::cpu {
namespace {

class CpuPartition final : public PartitionImpl {
 public:
  explicit CpuPartition(int threads) : threads_(threads), arena_(std::make_shared<tbb::task_arena>(threads)) {}
  int compute_units() const override { return threads_; }
  std::unique_ptr<StreamImpl> create_stream() override { return std::make_unique<CpuStream>(arena_); }

 private:
  int threads_;
  std::shared_ptr<tbb::task_arena> arena_;
};

}  // namespace

PartitionSupport CpuDevice::partition_support() const {
  PartitionSupport s;
  s.supported = true;
  s.unit = "threads";
  s.granularity = 1;
  s.max_units = info_.compute_units;
  s.reason = "oneTBB task arenas";
  return s;
}

std::unique_ptr<PartitionImpl> CpuDevice::create_partition(int compute_units) {
  return std::make_unique<CpuPartition>(compute_units);
}

}  // namespace hal::cpu
