#pragma once
// CudaDevice: one NVIDIA GPU, driven through its primary context.
//
// The primary context is retained once at construction and never released
// (devices live until exit); every entry point makes it current on the
// calling thread first (cuCtxSetCurrent is cheap), because callers may use
// any thread. Device pointers are CUdeviceptr values carried in void*.
#include <cuda.h>

#include <memory>

#include "backends/cuda/cuda_launch.h"
#include "backends/cuda/cuda_module.h"
#include "backends/cuda/cuda_partition.h"
#include "hal/device.h"

namespace hal::cuda {

class CudaDevice final : public Device {
 public:
  // Queries the device's attributes; throws device_error on a driver failure.
  CudaDevice(int ordinal, CUdevice device);

  const DeviceInfo& info() const override { return info_; }
  void* allocate(std::size_t bytes) override;
  void deallocate(void* ptr) noexcept override;
  std::unique_ptr<StreamImpl> create_stream() override;
  std::unique_ptr<EventImpl> create_event() override;
  Support supports(const OpCall& call) const override;
  void execute(StreamImpl& stream, const OpCall& call) override;
  // Green contexts (backends/cuda/cuda_partition.h).
  PartitionSupport partition_support() const override;
  std::unique_ptr<PartitionImpl> create_partition(int compute_units) override;

  // Makes this device's primary context current on the calling thread.
  void make_current() const;
  const CudaDeviceCaps& caps() const noexcept { return caps_; }
  ModuleCache& modules() noexcept { return modules_; }
  const std::string& name_str() const noexcept { return info_.name; }

 private:
  int ordinal_;
  CUdevice device_;
  CUcontext context_ = nullptr;
  DeviceInfo info_;
  CudaDeviceCaps caps_;
  ModuleCache modules_{*this};
  SmSplitter sm_splitter_;
};

}  // namespace hal::cuda
