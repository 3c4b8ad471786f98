#pragma once
// Partitions of a HIP device's CUs: CU-masked streams
// (hipExtStreamCreateWithCUMask). The masks are built by
// gpu::build_cu_masks (backends/gpu/partition_plan.h): each partition a run of
// consecutive mask bits whose length is a multiple of the XCD count, so that
// on MI300X (bit i on XCD i % 8) every partition has the same CUs on every
// XCD. Partitions alive at the same time get disjoint runs (CuAllocator);
// when none is alive the next starts again at bit 0. Launchers on a masked
// stream size grids from its CU count (HipStream::caps()).
//
// Compiled, never run on a GPU: partition_support() declines unless
// HAL_GPU_UNVERIFIED=1 (backends/gpu/unverified.h).
#include <memory>
#include <mutex>
#include <string>

#include "hal/device.h"

namespace hal::hip {

class HipDevice;

// The first mask bit not held by a live partition of one device.
class CuAllocator {
 public:
  // The first bit of a run of `count` CUs; throws when the live partitions
  // leave fewer than `count` of `total`.
  int take(const std::string& device, int count, int total);
  void release();

 private:
  std::mutex mutex_;
  int live_ = 0;
  int next_ = 0;
};

PartitionSupport cu_mask_partition_support(const std::string& arch, int compute_units);
std::unique_ptr<PartitionImpl> create_cu_mask_partition(HipDevice& device, CuAllocator& allocator, int compute_units);

}  // namespace hal::hip
