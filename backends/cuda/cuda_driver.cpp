// dlopen/dlsym of libcuda.so.1. Names are the exported, versioned symbols
// (cuda.h maps e.g. cuMemAlloc to cuMemAlloc_v2 with macros; dlsym needs the
// real name). The handle is never closed: devices live until process exit.
#include "backends/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <mutex>

namespace hal::cuda {

namespace {

struct Loaded {
  Driver api{};
  bool ok = false;
  std::string error;
};

template <class Fn>
bool resolve(void* lib, const char* name, Fn& fn, std::string& error) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (fn == nullptr && error.empty()) error = std::string("libcuda.so.1 lacks ") + name;
  return fn != nullptr;
}

Loaded load() {
  Loaded l;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    l.error = std::string("libcuda.so.1 not found (dlopen: ") + (why ? why : "unknown error") + ")";
    return l;
  }
  Driver& d = l.api;
  std::string& e = l.error;
#define HAL_CUDA_RESOLVE(name) resolve(lib, #name, d.name, e)
  HAL_CUDA_RESOLVE(cuInit);
  HAL_CUDA_RESOLVE(cuDriverGetVersion);
  HAL_CUDA_RESOLVE(cuDeviceGetCount);
  HAL_CUDA_RESOLVE(cuDeviceGet);
  HAL_CUDA_RESOLVE(cuDeviceGetName);
  HAL_CUDA_RESOLVE(cuDeviceTotalMem_v2);
  HAL_CUDA_RESOLVE(cuDeviceGetAttribute);
  HAL_CUDA_RESOLVE(cuDevicePrimaryCtxRetain);
  HAL_CUDA_RESOLVE(cuCtxSetCurrent);
  HAL_CUDA_RESOLVE(cuCtxSynchronize);
  HAL_CUDA_RESOLVE(cuMemAlloc_v2);
  HAL_CUDA_RESOLVE(cuMemFree_v2);
  HAL_CUDA_RESOLVE(cuMemcpyHtoDAsync_v2);
  HAL_CUDA_RESOLVE(cuMemcpyDtoHAsync_v2);
  HAL_CUDA_RESOLVE(cuMemcpyDtoDAsync_v2);
  HAL_CUDA_RESOLVE(cuMemsetD8Async);
  HAL_CUDA_RESOLVE(cuModuleLoadData);
  HAL_CUDA_RESOLVE(cuModuleGetFunction);
  HAL_CUDA_RESOLVE(cuFuncSetAttribute);
  HAL_CUDA_RESOLVE(cuLaunchKernel);
  HAL_CUDA_RESOLVE(cuStreamCreate);
  HAL_CUDA_RESOLVE(cuStreamSynchronize);
  HAL_CUDA_RESOLVE(cuStreamWaitEvent);
  HAL_CUDA_RESOLVE(cuStreamDestroy_v2);
  HAL_CUDA_RESOLVE(cuEventCreate);
  HAL_CUDA_RESOLVE(cuEventRecord);
  HAL_CUDA_RESOLVE(cuEventSynchronize);
  HAL_CUDA_RESOLVE(cuEventElapsedTime);
  HAL_CUDA_RESOLVE(cuEventDestroy_v2);
  HAL_CUDA_RESOLVE(cuGetErrorName);
  HAL_CUDA_RESOLVE(cuGetErrorString);
#undef HAL_CUDA_RESOLVE
  l.ok = e.empty();
  std::string ignored;
  resolve(lib, "cuTensorMapEncodeTiled", d.cuTensorMapEncodeTiled, ignored);  // optional
  // Optional: green contexts; absent before driver 12.4 (partition_support says so).
  resolve(lib, "cuDeviceGetDevResource", d.cuDeviceGetDevResource, ignored);
  resolve(lib, "cuDevSmResourceSplitByCount", d.cuDevSmResourceSplitByCount, ignored);
  resolve(lib, "cuDevResourceGenerateDesc", d.cuDevResourceGenerateDesc, ignored);
  resolve(lib, "cuGreenCtxCreate", d.cuGreenCtxCreate, ignored);
  resolve(lib, "cuGreenCtxDestroy", d.cuGreenCtxDestroy, ignored);
  resolve(lib, "cuGreenCtxStreamCreate", d.cuGreenCtxStreamCreate, ignored);
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();  // thread-safe initialisation
  return l;
}

}  // namespace

const Driver* driver() noexcept {
  const Loaded& l = loaded();
  return l.ok ? &l.api : nullptr;
}

const std::string& load_error() noexcept { return loaded().error; }

}  // namespace hal::cuda
