#pragma once
// HipDevice: one AMD GPU, addressed by its HIP ordinal.
//
// HIP has no explicit contexts in this API: every entry point calls
// hipSetDevice(ordinal) on the calling thread first (cheap), because callers
// may use any thread.
#include <memory>
#include <string>
#include <string_view>

#include "backends/hip/hip_launch.h"
#include "backends/hip/hip_module.h"
#include "backends/hip/hip_partition.h"
#include "hal/device.h"

namespace hal::hip {

class HipDevice final : public Device {
 public:
  // Queries the device's attributes; throws device_error on a runtime failure.
  explicit HipDevice(int ordinal);

  const DeviceInfo& info() const override { return info_; }
  void* allocate(std::size_t bytes) override;
  void deallocate(void* ptr) noexcept override;
  std::unique_ptr<StreamImpl> create_stream() override;
  std::unique_ptr<EventImpl> create_event() override;
  Support supports(const OpCall& call) const override;
  void execute(StreamImpl& stream, const OpCall& call) override;
  // CU-masked streams (backends/hip/hip_partition.h).
  PartitionSupport partition_support() const override;
  std::unique_ptr<PartitionImpl> create_partition(int compute_units) override;

  void make_current() const;
  const HipDeviceCaps& caps() const noexcept { return caps_; }
  ModuleCache& modules() noexcept { return modules_; }

 private:
  int ordinal_;
  DeviceInfo info_;
  HipDeviceCaps caps_;
  std::string no_kernels_reason_;  // non-empty: no embedded code object fits this device
  ModuleCache modules_{*this};
  CuAllocator cu_allocator_;
};

// The full target ID ("gfx942:sramecc+:xnack-") in the raw bytes of a
// hipDeviceProp_t of unknown layout: the first NUL-terminated string starting
// with "gfx" (gcnArchName; the marketing name never starts with it). Empty
// when there is none.
std::string extract_target_id(std::string_view props_bytes);

// Why no embedded code object runs on a device of `device_target`, or empty
// when one does. `built_targets` is the comma-separated list the build used.
std::string missing_code_object_reason(std::string_view device_target, std::string_view built_targets);

}  // namespace hal::hip
