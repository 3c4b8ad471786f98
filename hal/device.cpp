#include "hal/device.h"

#include "hal/error.h"

namespace hal {

std::string kernels_text(const std::vector<std::pair<std::string, std::string>>& kernels) {
  std::string text;
  for (const auto& [op, kernel] : kernels) text += (text.empty() ? "" : ", ") + op + ": " + kernel;
  return text;
}

Support Device::supports(const OpCall&) const { return {}; }

ExternalAllocation Device::register_external(const void* ptr, std::size_t bytes) {
  if (bytes == 0) return {};
  if (!ptr)
    throw_invalid_argument("Device::register_external", "ptr", "a non-null pointer to the memory",
                           "nullptr");
  return ExternalAllocation(*this, ptr, allocations_.add(ptr, bytes, AllocationKind::external));
}

PartitionSupport Device::partition_support() const {
  PartitionSupport s;
  s.reason = info().backend + ": partitions of the compute units are not implemented";
  return s;
}

std::unique_ptr<PartitionImpl> Device::create_partition(int) {
  throw_unsupported(info().backend, "partition", info().name);
}

}  // namespace hal
