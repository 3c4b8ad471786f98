// Module cache and kernel launch.
#include "backends/cuda/cuda_module.h"

#include <fmt/format.h>

#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/cuda_fatbins.h"
#include "backends/cuda/cuda_launch.h"
#include "backends/cuda/cuda_status.h"
#include "backends/cuda/cuda_stream.h"
#include "backends/gpu/embedded_kernels.h"
#include "hal/error.h"

namespace hal::cuda {

namespace {

// Debug builds, or HAL_CUDA_SYNC=1 (gpu::sync_after_launch_requested).
bool sync_after_launch() {
  static const bool on = gpu::sync_after_launch_requested("HAL_CUDA_SYNC");
  return on;
}

}  // namespace

CUmodule ModuleCache::module_for(std::size_t index) {
  const auto fatbins = embedded_fatbins();
  if (modules_.size() < fatbins.size()) modules_.resize(fatbins.size(), nullptr);
  if (modules_[index] == nullptr) {
    CUmodule m = nullptr;
    check(driver()->cuModuleLoadData(&m, fatbins[index].data), device_.name(),
          fmt::format("cuModuleLoadData({}.fatbin, {} bytes)", fatbins[index].file, fatbins[index].size));
    modules_[index] = m;
  }
  return modules_[index];
}

CUfunction ModuleCache::function(const char* name, unsigned shared_bytes) {
  std::lock_guard lock(mutex_);
  device_.make_current();
  auto it = functions_.find(std::string_view(name));
  if (it == functions_.end()) {
    const auto fatbins = embedded_fatbins();
    CUfunction fn = gpu::find_kernel(fatbins, name, [&](std::size_t i) {
      CUfunction f = nullptr;
      return driver()->cuModuleGetFunction(&f, module_for(i), name) == CUDA_SUCCESS ? f : nullptr;
    });
    if (fn == nullptr)
      throw Error(ErrorCode::device_error,
                  fmt::format("{}: kernel '{}' is not in any embedded fatbin", device_.name(), name));
    it = functions_.emplace(name, Entry{fn}).first;
  }
  Entry& e = it->second;
  if (shared_bytes > e.shared_enabled) {
    check(driver()->cuFuncSetAttribute(e.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                       static_cast<int>(shared_bytes)),
          device_.name(), fmt::format("cuFuncSetAttribute({}, MAX_DYNAMIC_SHARED_SIZE_BYTES={})", name, shared_bytes));
    e.shared_enabled = shared_bytes;
  }
  return e.fn;
}

void launch_kernel(CudaStream& stream, const char* kernel_name, const LaunchShape& shape, const void* params,
                   std::size_t params_size) {
  CudaDevice& dev = stream.device();
  if (shape.grid[0] == 0 || shape.grid[1] == 0 || shape.grid[2] == 0) return;  // nothing to do
  CUfunction fn = dev.modules().function(kernel_name, shape.shared_bytes);
  dev.make_current();
  // The kernel's single parameter is the struct; cuLaunchKernel copies the
  // bytes at *kernelParams[0] (params_size of them) before returning.
  void* args[] = {const_cast<void*>(params)};
  (void)params_size;
  const Driver& d = *driver();
  check(d.cuLaunchKernel(fn, shape.grid[0], shape.grid[1], shape.grid[2], shape.block[0], shape.block[1],
                         shape.block[2], shape.shared_bytes, stream.handle(), args, nullptr),
        dev.name(),
        fmt::format("cuLaunchKernel({}, grid [{}, {}, {}], block [{}, {}, {}], {} bytes shared)", kernel_name,
                    shape.grid[0], shape.grid[1], shape.grid[2], shape.block[0], shape.block[1], shape.block[2],
                    shape.shared_bytes));
  if (sync_after_launch())
    check(d.cuStreamSynchronize(stream.handle()), dev.name(), fmt::format("kernel {} (synchronised after launch)", kernel_name));
}

const CudaDeviceCaps& stream_caps(CudaStream& stream) { return stream.caps(); }

}  // namespace hal::cuda
