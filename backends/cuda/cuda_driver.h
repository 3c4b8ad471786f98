#pragma once
// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1") so one
// binary starts on machines without NVIDIA's driver. <cuda.h> is used for its
// types and enums only; no symbol of libcuda is linked.
//
// driver() loads once (thread-safe) and returns nullptr when the library or a
// required entry point is missing; load_error() then says why.
#include <cuda.h>

#include <string>

namespace hal::cuda {

struct Driver {
  // Entry points, by their exported (versioned) names.
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceTotalMem_v2)(size_t*, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, CUdevice_attribute, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuMemAlloc_v2)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree_v2)(CUdeviceptr);
  CUresult (*cuMemcpyHtoDAsync_v2)(CUdeviceptr, const void*, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync_v2)(void*, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyDtoDAsync_v2)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuFuncSetAttribute)(CUfunction, CUfunction_attribute, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void**, void**);
  CUresult (*cuStreamCreate)(CUstream*, unsigned);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*cuStreamDestroy_v2)(CUstream);
  CUresult (*cuEventCreate)(CUevent*, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*cuEventDestroy_v2)(CUevent);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
  // Optional (nullptr when the driver lacks it): TMA descriptors, CUDA 12+.
  CUresult (*cuTensorMapEncodeTiled)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                     const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                     CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  // Optional: green contexts (driver 12.4+), for partitions of the SMs
  // (backends/cuda/cuda_partition.cpp). Prototypes and CUdevResource as in
  // CUDA 13's cuda.h (the resource struct is the driver's versioned ABI).
  CUresult (*cuDeviceGetDevResource)(CUdevice, CUdevResource*, CUdevResourceType);
  CUresult (*cuDevSmResourceSplitByCount)(CUdevResource* result, unsigned* nb_groups, const CUdevResource* input,
                                          CUdevResource* remaining, unsigned use_flags, unsigned min_count);
  CUresult (*cuDevResourceGenerateDesc)(CUdevResourceDesc*, CUdevResource*, unsigned nb_resources);
  CUresult (*cuGreenCtxCreate)(CUgreenCtx*, CUdevResourceDesc, CUdevice, unsigned flags);
  CUresult (*cuGreenCtxDestroy)(CUgreenCtx);
  CUresult (*cuGreenCtxStreamCreate)(CUstream*, CUgreenCtx, unsigned flags, int priority);
};

const Driver* driver() noexcept;
const std::string& load_error() noexcept;

}  // namespace hal::cuda
