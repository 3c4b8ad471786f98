#include "backends/cuda/cuda_partition.h"

#include <fmt/format.h>

#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/cuda_status.h"
#include "backends/cuda/cuda_stream.h"
#include "backends/gpu/partition_plan.h"
#include "hal/error.h"

namespace hal::cuda {
namespace {

gpu::EntryPoints green_entry_points(const Driver& d) {
  return {{"cuDeviceGetDevResource", reinterpret_cast<const void*>(d.cuDeviceGetDevResource)},
          {"cuDevSmResourceSplitByCount", reinterpret_cast<const void*>(d.cuDevSmResourceSplitByCount)},
          {"cuDevResourceGenerateDesc", reinterpret_cast<const void*>(d.cuDevResourceGenerateDesc)},
          {"cuGreenCtxCreate", reinterpret_cast<const void*>(d.cuGreenCtxCreate)},
          {"cuGreenCtxStreamCreate", reinterpret_cast<const void*>(d.cuGreenCtxStreamCreate)},
          {"cuGreenCtxDestroy", reinterpret_cast<const void*>(d.cuGreenCtxDestroy)}};
}

// A green context, destroyed when the partition and its last stream are gone.
struct GreenContext {
  CUgreenCtx ctx = nullptr;
  SmSplitter* splitter = nullptr;
  ~GreenContext() {
    const Driver* d = driver();
    if (ctx && d && d->cuGreenCtxDestroy) d->cuGreenCtxDestroy(ctx);
    if (splitter) splitter->partition_released();
  }
};

class GreenContextPartition final : public PartitionImpl {
 public:
  GreenContextPartition(CudaDevice& device, std::shared_ptr<GreenContext> green, int sm_count)
      : device_(device), green_(std::move(green)), sm_count_(sm_count) {}
  int compute_units() const override { return sm_count_; }
  std::unique_ptr<StreamImpl> create_stream() override {
    device_.make_current();
    CUstream stream = nullptr;
    // Streams of a green context must be non-blocking.
    check(driver()->cuGreenCtxStreamCreate(&stream, green_->ctx, CU_STREAM_NON_BLOCKING, 0), device_.name(),
          "cuGreenCtxStreamCreate");
    return std::make_unique<CudaStream>(device_, stream, sm_count_, green_);
  }

 private:
  CudaDevice& device_;
  std::shared_ptr<GreenContext> green_;
  int sm_count_;
};

}  // namespace

void SmSplitter::split(CudaDevice& device, CUdevice dev, int sm_count, CUdevResource* group) {
  const Driver& d = *driver();
  std::lock_guard<std::mutex> lock(mutex_);
  if (live_ == 0)
    check(d.cuDeviceGetDevResource(dev, &remaining_, CU_DEV_RESOURCE_TYPE_SM), device.name(),
          "cuDeviceGetDevResource(SM)");
  unsigned groups = 1;
  CUdevResource rest{};
  check(d.cuDevSmResourceSplitByCount(group, &groups, &remaining_, &rest, 0, static_cast<unsigned>(sm_count)),
        device.name(), fmt::format("cuDevSmResourceSplitByCount({} SMs of {} left)", sm_count, remaining_.sm.smCount));
  if (groups != 1 || static_cast<int>(group->sm.smCount) != sm_count)
    throw Error(ErrorCode::device_error,
                fmt::format("{}: partition: asked the driver for one group of {} SMs, got {} group(s) of {}",
                            device.name(), sm_count, groups, group->sm.smCount));
  remaining_ = rest;
  ++live_;
}

void SmSplitter::partition_released() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (live_ > 0) --live_;
}

PartitionSupport green_context_partition_support(CUdevice dev, int cc_major, int sm_count) {
  const Driver& d = *driver();
  int version = 0;
  d.cuDriverGetVersion(&version);
  PartitionSupport s = gpu::green_context_support(green_entry_points(d), version, cc_major, sm_count);
  if (!s.supported) return s;
  // The device's own figures, where the driver fills them (CUDA 13 headers;
  // older drivers leave them 0 and the architecture's granularity stands).
  CUdevResource all{};
  if (d.cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM) == CUDA_SUCCESS) {
    const int align = static_cast<int>(all.sm.smCoscheduledAlignment);
    const int min_size = static_cast<int>(all.sm.minSmPartitionSize);
    if (align > 0 && min_size <= align) s.granularity = align;
    else if (min_size > 0 && min_size % s.granularity == 0) s.granularity = min_size;
    if (all.sm.smCount > 0) s.max_units = static_cast<int>(all.sm.smCount);
  }
  return gpu::unless_unverified_enabled(s);
}

std::unique_ptr<PartitionImpl> create_green_context_partition(CudaDevice& device, CUdevice dev, SmSplitter& splitter,
                                                              int sm_count) {
  const Driver& d = *driver();
  device.make_current();
  CUdevResource group{};
  splitter.split(device, dev, sm_count, &group);
  auto green = std::make_shared<GreenContext>();
  green->splitter = &splitter;  // from here on, the split is returned when `green` goes
  CUdevResourceDesc desc = nullptr;
  check(d.cuDevResourceGenerateDesc(&desc, &group, 1), device.name(), "cuDevResourceGenerateDesc");
  check(d.cuGreenCtxCreate(&green->ctx, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM), device.name(),
        fmt::format("cuGreenCtxCreate({} SMs)", sm_count));
  return std::make_unique<GreenContextPartition>(device, std::move(green), sm_count);
}

}  // namespace hal::cuda
