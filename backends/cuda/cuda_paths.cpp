#include "backends/cuda/cuda_paths.h"

#include <cstdlib>
#include <string>

namespace hal::cuda {

bool path_enabled(std::string_view path) {
  static const std::string disabled = [] {
    const char* v = std::getenv("HAL_CUDA_DISABLE");
    return std::string(",") + (v ? v : "") + ",";
  }();
  if (disabled.find(",all,") != std::string::npos) return false;
  std::string key = ",";  // appended, not `a + b + c`: GCC 12 warns falsely (-Wrestrict) on that
  key += path;
  key += ',';
  return disabled.find(key) == std::string::npos;
}

}  // namespace hal::cuda
