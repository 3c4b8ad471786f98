// Module cache and kernel launch.
#include "backends/hip/hip_module.h"

#include <fmt/format.h>

#include "backends/gpu/embedded_kernels.h"
#include "backends/hip/hip_code_objects.h"
#include "backends/hip/hip_device.h"
#include "backends/hip/hip_driver.h"
#include "backends/hip/hip_launch.h"
#include "backends/hip/hip_status.h"
#include "backends/hip/hip_stream.h"
#include "hal/error.h"

namespace hal::hip {

namespace {

// Debug builds, or HAL_HIP_SYNC=1 (gpu::sync_after_launch_requested).
bool sync_after_launch() {
  static const bool on = gpu::sync_after_launch_requested("HAL_HIP_SYNC");
  return on;
}

}  // namespace

hipModule_t ModuleCache::module_for(std::size_t index) {
  const auto objects = embedded_code_objects();
  if (modules_.size() < objects.size()) modules_.resize(objects.size(), nullptr);
  if (modules_[index] == nullptr) {
    hipModule_t m = nullptr;
    check_module_load(driver()->hipModuleLoadData(&m, objects[index].data), device_.name(), objects[index].file,
                      device_.info().arch, objects[index].targets);
    modules_[index] = m;
  }
  return modules_[index];
}

hipFunction_t ModuleCache::function(const char* name) {
  std::lock_guard lock(mutex_);
  device_.make_current();
  auto it = functions_.find(std::string_view(name));
  if (it != functions_.end()) return it->second;
  const auto objects = embedded_code_objects();
  hipFunction_t fn = gpu::find_kernel(objects, name, [&](std::size_t i) {
    hipFunction_t f = nullptr;
    return driver()->hipModuleGetFunction(&f, module_for(i), name) == hipSuccess ? f : nullptr;
  });
  if (fn == nullptr)
    throw Error(ErrorCode::device_error,
                fmt::format("{}: kernel '{}' is not in any embedded code object", device_.name(), name));
  functions_.emplace(name, fn);
  return fn;
}

void launch_kernel(HipStream& stream, const char* kernel_name, const LaunchShape& shape, const void* params,
                   std::size_t params_size) {
  HipDevice& dev = stream.device();
  if (shape.grid[0] == 0 || shape.grid[1] == 0 || shape.grid[2] == 0) return;  // nothing to do
  hipFunction_t fn = dev.modules().function(kernel_name);
  dev.make_current();
  // The kernel's single by-value struct parameter is the whole kernarg
  // segment: pass its bytes as the argument buffer.
  std::size_t size = params_size;
  void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, const_cast<void*>(params), HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   HIP_LAUNCH_PARAM_END};
  const Driver& d = *driver();
  check(d.hipModuleLaunchKernel(fn, shape.grid[0], shape.grid[1], shape.grid[2], shape.block[0], shape.block[1],
                                shape.block[2], shape.shared_bytes, stream.handle(), nullptr, extra),
        dev.name(),
        fmt::format("hipModuleLaunchKernel({}, grid [{}, {}, {}], block [{}, {}, {}], {} bytes LDS)", kernel_name,
                    shape.grid[0], shape.grid[1], shape.grid[2], shape.block[0], shape.block[1], shape.block[2],
                    shape.shared_bytes));
  if (sync_after_launch())
    check(d.hipStreamSynchronize(stream.handle()), dev.name(),
          fmt::format("kernel {} (synchronised after launch)", kernel_name));
}

const HipDeviceCaps& stream_caps(HipStream& stream) { return stream.caps(); }

}  // namespace hal::hip
