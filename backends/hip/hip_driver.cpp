// dlopen/dlsym of the HIP runtime. The handle is never closed: devices live
// until process exit.
#include "backends/hip/hip_driver.h"

#include <dlfcn.h>

namespace hal::hip {

const std::vector<std::string> kRuntimeLibraries = {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"};

namespace {

template <class Fn>
void resolve(void* lib, const char* library, const char* name, Fn& fn, std::string& error) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (fn == nullptr && error.empty()) error = std::string(library) + " lacks " + name;
}

struct Loaded {
  Driver api{};
  bool ok = false;
  std::string error;
};

const Loaded& loaded() {
  static const Loaded l = [] {
    Loaded r;
    r.ok = load_driver(kRuntimeLibraries, r.api, r.error);
    return r;
  }();
  return l;
}

}  // namespace

bool load_driver(const std::vector<std::string>& names, Driver& d, std::string& error) {
  d = Driver{};
  error.clear();
  void* lib = nullptr;
  std::string tried;
  for (const std::string& name : names) {
    lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) {
      d.library = name;
      break;
    }
    const char* why = dlerror();
    tried += (tried.empty() ? "" : "; ") + name + ": " + (why ? why : "unknown error");
  }
  if (lib == nullptr) {
    error = "HIP runtime not found (dlopen: " + tried + ")";
    return false;
  }
  d.handle = lib;
  const char* lname = d.library.c_str();
#define HAL_HIP_RESOLVE(name) resolve(lib, lname, #name, d.name, error)
  HAL_HIP_RESOLVE(hipInit);
  HAL_HIP_RESOLVE(hipRuntimeGetVersion);
  HAL_HIP_RESOLVE(hipGetDeviceCount);
  HAL_HIP_RESOLVE(hipDeviceGetName);
  HAL_HIP_RESOLVE(hipDeviceTotalMem);
  HAL_HIP_RESOLVE(hipDeviceGetAttribute);
  HAL_HIP_RESOLVE(hipSetDevice);
  HAL_HIP_RESOLVE(hipMalloc);
  HAL_HIP_RESOLVE(hipFree);
  HAL_HIP_RESOLVE(hipMemcpyAsync);
  HAL_HIP_RESOLVE(hipMemsetAsync);
  HAL_HIP_RESOLVE(hipStreamCreateWithFlags);
  HAL_HIP_RESOLVE(hipStreamSynchronize);
  HAL_HIP_RESOLVE(hipStreamWaitEvent);
  HAL_HIP_RESOLVE(hipStreamDestroy);
  HAL_HIP_RESOLVE(hipEventCreate);
  HAL_HIP_RESOLVE(hipEventRecord);
  HAL_HIP_RESOLVE(hipEventSynchronize);
  HAL_HIP_RESOLVE(hipEventElapsedTime);
  HAL_HIP_RESOLVE(hipEventDestroy);
  HAL_HIP_RESOLVE(hipModuleLoadData);
  HAL_HIP_RESOLVE(hipModuleGetFunction);
  HAL_HIP_RESOLVE(hipModuleLaunchKernel);
  HAL_HIP_RESOLVE(hipGetErrorName);
  HAL_HIP_RESOLVE(hipGetErrorString);
#undef HAL_HIP_RESOLVE
  std::string ignored;
  resolve(lib, lname, "hipGetDevicePropertiesR0600", d.hipGetDevicePropertiesAny, ignored);
  if (d.hipGetDevicePropertiesAny == nullptr)
    resolve(lib, lname, "hipGetDeviceProperties", d.hipGetDevicePropertiesAny, ignored);
  resolve(lib, lname, "hipExtStreamCreateWithCUMask", d.hipExtStreamCreateWithCUMask, ignored);  // optional
  return error.empty();
}

const Driver* driver() noexcept {
  const Loaded& l = loaded();
  return l.ok ? &l.api : nullptr;
}

const std::string& load_error() noexcept { return loaded().error; }

}  // namespace hal::hip
