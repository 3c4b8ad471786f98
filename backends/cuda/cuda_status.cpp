#include "backends/cuda/cuda_status.h"

#include <fmt/format.h>

#include "backends/cuda/cuda_driver.h"
#include "hal/error.h"

namespace hal::cuda {

std::string describe(CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (const Driver* d = driver()) {
    if (d->cuGetErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
    if (d->cuGetErrorString(r, &text) != CUDA_SUCCESS) text = nullptr;
  }
  return fmt::format("{} ({})", name ? name : fmt::format("CUresult {}", static_cast<int>(r)),
                     text ? text : "no description");
}

void check(CUresult r, std::string_view where, std::string_view call) {
  if (r == CUDA_SUCCESS) return;
  const ErrorCode code = r == CUDA_ERROR_OUT_OF_MEMORY ? ErrorCode::out_of_memory : ErrorCode::device_error;
  throw Error(code, fmt::format("{}: {} failed: {}", where, call, describe(r)));
}

}  // namespace hal::cuda
