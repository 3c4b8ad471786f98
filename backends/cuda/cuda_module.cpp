// Module cache and kernel launch.
#include "backends/cuda/cuda_module.h"

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/cuda_fatbins.h"
#include "backends/cuda/cuda_launch.h"
#include "backends/cuda/cuda_status.h"
#include "backends/cuda/cuda_stream.h"
#include "hal/error.h"

namespace hal::cuda {

namespace {

bool declares(const EmbeddedFatbin& f, std::string_view name) {
  for (const char* const* k = f.kernels; k && *k; ++k)
    if (name == *k) return true;
  return false;
}

// Debug builds, or HAL_CUDA_SYNC=1: synchronise after every launch so an
// asynchronous fault is blamed on the kernel that caused it.
bool sync_after_launch() {
#ifndef NDEBUG
  return true;
#else
  static const bool on = [] {
    const char* v = std::getenv("HAL_CUDA_SYNC");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return on;
#endif
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
    CUfunction fn = nullptr;
    // The file whose source declares the kernel first; then every other file
    // (the declaration scan is a hint, a macro-made name would escape it).
    for (int pass = 0; pass < 2 && fn == nullptr; ++pass) {
      for (std::size_t i = 0; i < fatbins.size() && fn == nullptr; ++i) {
        if (declares(fatbins[i], name) != (pass == 0)) continue;
        CUfunction f = nullptr;
        if (driver()->cuModuleGetFunction(&f, module_for(i), name) == CUDA_SUCCESS) fn = f;
      }
    }
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

const CudaDeviceCaps& stream_caps(CudaStream& stream) { return stream.device().caps(); }

}  // namespace hal::cuda
