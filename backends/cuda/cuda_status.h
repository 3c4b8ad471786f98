#pragma once
// The one place where a CUresult becomes a hal::Error. Messages name the
// device, the driver call and its context:
//   "cuda:0: cuMemAlloc_v2(1073741824 bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"
// CUDA_ERROR_OUT_OF_MEMORY maps to ErrorCode::out_of_memory, everything else
// to ErrorCode::device_error.
#include <cuda.h>

#include <string>
#include <string_view>

namespace hal::cuda {

// "CUDA_ERROR_X (description)", safe to call without a loaded driver.
std::string describe(CUresult r);

// Throws unless r == CUDA_SUCCESS. `where` is the device name ("cuda:0") or
// "cuda"; `call` the driver call with its arguments, e.g. "cuMemAlloc_v2(64 bytes)".
void check(CUresult r, std::string_view where, std::string_view call);

}  // namespace hal::cuda
