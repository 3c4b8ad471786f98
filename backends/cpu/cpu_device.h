#pragma once
// The CPU device: host memory (256-byte aligned), streams that execute work
// before returning, events stamped with a steady clock.
#include "hal/device.h"

namespace hal::cpu {

class CpuDevice final : public Device {
 public:
  CpuDevice();
  const DeviceInfo& info() const override { return info_; }
  bool host_accessible() const override { return true; }
  void* allocate(std::size_t bytes) override;
  void deallocate(void* ptr) noexcept override;
  std::unique_ptr<StreamImpl> create_stream() override;
  std::unique_ptr<EventImpl> create_event() override;
  Support supports(const OpCall& call) const override;
  void execute(StreamImpl& stream, const OpCall& call) override;
  // Partitions are task arenas of whole threads (backends/cpu/cpu_partition.cpp).
  PartitionSupport partition_support() const override;
  std::unique_ptr<PartitionImpl> create_partition(int compute_units) override;

 private:
  DeviceInfo info_;
};

}  // namespace hal::cpu
