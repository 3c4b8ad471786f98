#include "backends/hip/hip_status.h"

#include <fmt/format.h>

#include <vector>

#include "backends/hip/hip_driver.h"

namespace hal::hip {

namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

}  // namespace

std::string describe(hipError_t r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (const Driver* d = driver()) {
    name = d->hipGetErrorName(r);
    text = d->hipGetErrorString(r);
  }
  return fmt::format("{} ({})", name ? std::string(name) : fmt::format("hipError_t {}", static_cast<int>(r)),
                     text ? text : "no description");
}

ErrorCode error_code_for(hipError_t r) {
  switch (r) {
    case hipErrorOutOfMemory: return ErrorCode::out_of_memory;
    case hipErrorNoBinaryForGpu:
    case hipErrorInvalidImage:
    case hipErrorInvalidKernelFile: return ErrorCode::unsupported;
    default: return ErrorCode::device_error;
  }
}

void check(hipError_t r, std::string_view where, std::string_view call) {
  if (r == hipSuccess) return;
  throw Error(error_code_for(r), fmt::format("{}: {} failed: {}", where, call, describe(r)));
}

void check_module_load(hipError_t r, std::string_view where, std::string_view file, std::string_view device_target,
                       std::string_view bundle_targets) {
  if (r == hipSuccess) return;
  throw Error(error_code_for(r) == ErrorCode::device_error ? ErrorCode::device_error : ErrorCode::unsupported,
              fmt::format("{}: hipModuleLoadData({}.hipfb) failed: {}; the device's target ID is {}, the bundle "
                          "holds code objects for [{}] (rebuild with CMAKE_HIP_ARCHITECTURES including the device's "
                          "processor)",
                          where, file, describe(r), device_target, bundle_targets));
}

bool target_compatible(std::string_view device_target, std::string_view code_target) {
  const auto dev = split(device_target, ':');
  const auto code = split(code_target, ':');
  if (dev.empty() || code.empty() || dev[0] != code[0]) return false;
  for (std::size_t i = 1; i < code.size(); ++i) {
    const std::string_view feature = code[i];  // "xnack-", "sramecc+"
    if (feature.size() < 2) return false;
    const std::string_view base = feature.substr(0, feature.size() - 1);
    for (std::size_t j = 1; j < dev.size(); ++j) {
      if (dev[j].size() == feature.size() && dev[j].substr(0, base.size()) == base && dev[j] != feature) return false;
    }
  }
  return true;
}

}  // namespace hal::hip
