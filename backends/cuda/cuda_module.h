#pragma once
// Per-device cache of loaded kernel modules and function handles.
//
// The first lookup of a kernel name loads (cuModuleLoadData) the embedded
// fatbin whose source declares it, once per device; the handle is cached for
// the life of the process. Modules are never unloaded (devices live until
// exit). Thread-safe: one mutex guards the cache.
#include <cuda.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace hal::cuda {

class CudaDevice;

class ModuleCache {
 public:
  explicit ModuleCache(CudaDevice& device) : device_(device) {}
  // The function `name`, with its dynamic shared memory limit raised to
  // `shared_bytes` when that exceeds the 48 KiB default. Throws
  // device_error naming the kernel when no embedded fatbin provides it.
  CUfunction function(const char* name, unsigned shared_bytes);

 private:
  CUmodule module_for(std::size_t fatbin_index);  // loads on first use; mutex held

  struct Entry {
    CUfunction fn = nullptr;
    unsigned shared_enabled = 48 * 1024;
  };
  CudaDevice& device_;
  std::mutex mutex_;
  std::vector<CUmodule> modules_;  // by embedded_fatbins() index; nullptr = not loaded
  std::map<std::string, Entry, std::less<>> functions_;
};

}  // namespace hal::cuda
