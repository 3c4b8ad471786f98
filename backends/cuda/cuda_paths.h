#pragma once
// Kernel paths that can be switched off at run time, for bisecting a wrong
// answer on a GPU without rebuilding: HAL_CUDA_DISABLE=wgmma,flash,sm80
// disables the named fast paths (the general fallback kernels then run).
#include <string_view>

namespace hal::cuda {

// True unless `path` is listed in $HAL_CUDA_DISABLE (read once per process,
// "all" disables every fast path).
bool path_enabled(std::string_view path);

}  // namespace hal::cuda
