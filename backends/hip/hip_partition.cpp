#include "backends/hip/hip_partition.h"

#include <fmt/format.h>

#include "backends/gpu/partition_plan.h"
#include "backends/hip/hip_device.h"
#include "backends/hip/hip_driver.h"
#include "backends/hip/hip_status.h"
#include "backends/hip/hip_stream.h"
#include "hal/error.h"

namespace hal::hip {
namespace {

// The partition's share of the CUs, returned when it and its streams are gone.
struct CuShare {
  CuAllocator* allocator = nullptr;
  ~CuShare() {
    if (allocator) allocator->release();
  }
};

class CuMaskPartition final : public PartitionImpl {
 public:
  CuMaskPartition(HipDevice& device, std::vector<std::uint32_t> mask, int compute_units, std::shared_ptr<CuShare> share)
      : device_(device), mask_(std::move(mask)), compute_units_(compute_units), share_(std::move(share)) {}
  int compute_units() const override { return compute_units_; }
  std::unique_ptr<StreamImpl> create_stream() override {
    device_.make_current();
    hipStream_t stream = nullptr;
    check(driver()->hipExtStreamCreateWithCUMask(&stream, static_cast<uint32_t>(mask_.size()), mask_.data()),
          device_.name(), fmt::format("hipExtStreamCreateWithCUMask({} CUs)", compute_units_));
    return std::make_unique<HipStream>(device_, stream, compute_units_, share_);
  }

 private:
  HipDevice& device_;
  std::vector<std::uint32_t> mask_;
  int compute_units_;
  std::shared_ptr<CuShare> share_;
};

}  // namespace

int CuAllocator::take(const std::string& device, int count, int total) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (live_ == 0) next_ = 0;
  if (next_ + count > total)
    throw_invalid_argument("partition", "units",
                           fmt::format("at most {} CUs beside the live partitions of {}", total - next_, device),
                           std::to_string(count));
  const int first = next_;
  next_ += count;
  ++live_;
  return first;
}

void CuAllocator::release() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (live_ > 0) --live_;
}

PartitionSupport cu_mask_partition_support(const std::string& arch, int compute_units) {
  const Driver& d = *driver();
  PartitionSupport s = gpu::cu_mask_support(
      {{"hipExtStreamCreateWithCUMask", reinterpret_cast<const void*>(d.hipExtStreamCreateWithCUMask)}}, arch,
      compute_units);
  return gpu::unless_unverified_enabled(s);
}

std::unique_ptr<PartitionImpl> create_cu_mask_partition(HipDevice& device, CuAllocator& allocator, int compute_units) {
  const int total = device.caps().compute_units;
  const int xcds = gpu::xcd_count(device.info().arch, total);
  const int first = allocator.take(device.name(), compute_units, total);
  auto share = std::make_shared<CuShare>();
  share->allocator = &allocator;
  // A run at `first`: build_cu_masks lays out [first, count) and we keep the
  // second mask (the first is the padding before it).
  std::vector<std::vector<std::uint32_t>> masks =
      first == 0 ? gpu::build_cu_masks({compute_units}, total, xcds)
                 : gpu::build_cu_masks({first, compute_units}, total, xcds);
  return std::make_unique<CuMaskPartition>(device, std::move(masks.back()), compute_units, std::move(share));
}

}  // namespace hal::hip
