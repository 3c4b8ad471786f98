#pragma once
// Partitions: a device's compute units split into shares, each with its own
// streams, so that work queued on one share (communication) runs beside work
// on another (compute) without competing for units. DeepSeek-V3 set 20 of an
// H800's 132 SMs aside for communication this way.
//
//   auto parts = hal::partition(dev, {dev.info().compute_units - 20, 20});
//   hal::Stream compute = parts[0].stream(), comm = parts[1].stream();
//
// What a unit is depends on the backend (Device::partition_support()):
//   cpu:  threads; each partition is a oneTBB task_arena of that many threads
//         (the calling thread is one of them), so kernels that ask
//         tbb::this_task_arena::max_concurrency() (the blocked GEMM) size
//         themselves to the partition.
//   cuda: SMs in green contexts (driver 12.4+; backends/cuda/cuda_partition.h),
//         multiples of 8 on sm_90;
//   hip:  CUs of CU-masked streams (backends/hip/hip_partition.h), multiples
//         of the XCD count (8 on MI300X), each spread evenly over the XCDs.
//   Both GPU paths compiled but never ran: declined unless HAL_GPU_UNVERIFIED=1.
//   A partition's streams size launch grids from its own unit count.
// A partition (and each stream made from it) keeps its share alive; the
// device outlives them all (devices live until exit).
#include <memory>
#include <vector>

#include "hal/device.h"
#include "hal/stream.h"

namespace hal {

class Partition {
 public:
  Partition(Device& device, std::shared_ptr<PartitionImpl> impl) : device_(&device), impl_(std::move(impl)) {}
  Device& device() const noexcept { return *device_; }
  int compute_units() const { return impl_->compute_units(); }
  // A new stream whose work runs on this partition's units only.
  Stream stream() const { return Stream(*device_, impl_->create_stream()); }

 private:
  Device* device_;
  std::shared_ptr<PartitionImpl> impl_;
};

// Splits `device` into partitions of units[i] compute units each. Throws
// unsupported (with the backend's reason) when the device has none, and
// invalid_argument naming "units" when a count is not positive, not a multiple
// of the granularity, or the counts sum past max_units.
std::vector<Partition> partition(Device& device, const std::vector<int>& units);

}  // namespace hal
