#pragma once
// The HIP runtime API, loaded at run time with dlopen (libamdhip64.so, .so.6,
// .so.5) so one binary starts on machines without ROCm. <hip_runtime_api.h>
// is used for its types and enums only; no symbol of libamdhip64 is linked.
//
// hipGetDeviceProperties is deliberately not part of the table: the
// hipDeviceProp_t layout changed between ROCm 5 and 6, so attributes come
// from hipDeviceGetAttribute / hipDeviceGetName / hipDeviceTotalMem, and the
// full target ID (gcnArchName) from target_id() in hip_device.cpp, which
// reads it without assuming the struct layout.
//
// driver() loads once (thread-safe) and returns nullptr when the library or a
// required entry point is missing; load_error() then says why.
#include <hip/hip_runtime_api.h>

#include <string>
#include <vector>

namespace hal::hip {

struct Driver {
  hipError_t (*hipInit)(unsigned);
  hipError_t (*hipRuntimeGetVersion)(int*);
  hipError_t (*hipGetDeviceCount)(int*);
  hipError_t (*hipDeviceGetName)(char*, int, int);
  hipError_t (*hipDeviceTotalMem)(size_t*, int);
  hipError_t (*hipDeviceGetAttribute)(int*, hipDeviceAttribute_t, int);
  hipError_t (*hipSetDevice)(int);
  hipError_t (*hipMalloc)(void**, size_t);
  hipError_t (*hipFree)(void*);
  hipError_t (*hipMemcpyAsync)(void*, const void*, size_t, hipMemcpyKind, hipStream_t);
  hipError_t (*hipMemsetAsync)(void*, int, size_t, hipStream_t);
  hipError_t (*hipStreamCreateWithFlags)(hipStream_t*, unsigned);
  hipError_t (*hipStreamSynchronize)(hipStream_t);
  hipError_t (*hipStreamWaitEvent)(hipStream_t, hipEvent_t, unsigned);
  hipError_t (*hipStreamDestroy)(hipStream_t);
  hipError_t (*hipEventCreate)(hipEvent_t*);
  hipError_t (*hipEventRecord)(hipEvent_t, hipStream_t);
  hipError_t (*hipEventSynchronize)(hipEvent_t);
  hipError_t (*hipEventElapsedTime)(float*, hipEvent_t, hipEvent_t);
  hipError_t (*hipEventDestroy)(hipEvent_t);
  hipError_t (*hipModuleLoadData)(hipModule_t*, const void*);
  hipError_t (*hipModuleGetFunction)(hipFunction_t*, hipModule_t, const char*);
  hipError_t (*hipModuleLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                      unsigned, hipStream_t, void**, void**);
  const char* (*hipGetErrorName)(hipError_t);
  const char* (*hipGetErrorString)(hipError_t);
  // Optional (nullptr when absent): the properties query used only to read
  // gcnArchName (ROCm 6 exports the R0600 name, ROCm 5 the plain one).
  hipError_t (*hipGetDevicePropertiesAny)(void*, int);
  // Optional: CU-masked streams, for partitions (backends/hip/hip_partition.cpp).
  hipError_t (*hipExtStreamCreateWithCUMask)(hipStream_t*, uint32_t mask_words, const uint32_t* mask);
  void* handle;  // the dlopen handle (never closed)
  std::string library;  // which name loaded
};

const Driver* driver() noexcept;
const std::string& load_error() noexcept;

// Loads the runtime from the first of `names` that dlopen accepts; on failure
// returns false with `error` naming every library tried (what probe() reports).
// Exposed for tests; driver() calls it with kRuntimeLibraries.
bool load_driver(const std::vector<std::string>& names, Driver& out, std::string& error);
extern const std::vector<std::string> kRuntimeLibraries;

}  // namespace hal::hip
