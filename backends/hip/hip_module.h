#pragma once
// Per-device cache of loaded code-object bundles and function handles.
//
// The first lookup of a kernel name loads (hipModuleLoadData) the embedded
// bundle whose source declares it, once per device; the handle is cached for
// the life of the process. Modules are never unloaded (devices live until
// exit). Thread-safe: one mutex guards the cache.
#include <hip/hip_runtime_api.h>

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace hal::hip {

class HipDevice;

class ModuleCache {
 public:
  explicit ModuleCache(HipDevice& device) : device_(device) {}
  // The function `name`. Throws naming the kernel when no embedded bundle
  // provides it, or naming both target lists when a bundle does not load.
  hipFunction_t function(const char* name);

 private:
  hipModule_t module_for(std::size_t index);  // loads on first use; mutex held

  HipDevice& device_;
  std::mutex mutex_;
  std::vector<hipModule_t> modules_;  // by embedded_code_objects() index; nullptr = not loaded
  std::map<std::string, hipFunction_t, std::less<>> functions_;
};

}  // namespace hal::hip
