#pragma once
// Partitions of a CUDA device's SMs: green contexts (driver 12.4+).
//
// A green context is made from an SM group split off the device's SM
// resource with cuDevSmResourceSplitByCount; its streams
// (cuGreenCtxStreamCreate, non-blocking as green contexts require) run only
// on those SMs, and launchers on them size grids from the group's SM count
// (CudaStream::caps()). Partitions alive at the same time get disjoint
// groups: the device splits each new one off what the live ones left
// (SmSplitter); when none is alive the next split starts from all SMs.
//
// Compiled, never run on a GPU: partition_support() declines unless
// HAL_GPU_UNVERIFIED=1 (backends/gpu/unverified.h).
#include <cuda.h>

#include <memory>
#include <mutex>

#include "hal/device.h"

namespace hal::cuda {

class CudaDevice;

// The SMs not yet given to a live partition of one device.
class SmSplitter {
 public:
  // Splits `sm_count` SMs off the remaining ones; the group in *group.
  void split(CudaDevice& device, CUdevice dev, int sm_count, CUdevResource* group);
  void partition_released();

 private:
  std::mutex mutex_;
  int live_ = 0;
  CUdevResource remaining_{};
};

PartitionSupport green_context_partition_support(CUdevice dev, int cc_major, int sm_count);
std::unique_ptr<PartitionImpl> create_green_context_partition(CudaDevice& device, CUdevice dev, SmSplitter& splitter,
                                                              int sm_count);

}  // namespace hal::cuda
