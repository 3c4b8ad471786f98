#include "comm/xccl/xccl_status.h"

#include <fmt/format.h>

#include "hal/error.h"

namespace hal::comm::xccl {

void check(const Library& lib, ncclResult_t result, std::string_view call, std::string_view context) {
  if (result == ncclSuccess) return;
  const char* text = lib.api.GetErrorString ? lib.api.GetErrorString(result) : nullptr;
  const ErrorCode code = (result == ncclInvalidArgument || result == ncclInvalidUsage) ? ErrorCode::invalid_argument
                                                                                       : ErrorCode::device_error;
  const std::string_view engine = lib.version.rfind("RCCL", 0) == 0 ? "rccl" : "nccl";
  throw Error(code, fmt::format("{}: {} failed ({}): {} (ncclResult_t {})", engine, call, context,
                                text ? text : "no message", static_cast<int>(result)));
}

}  // namespace hal::comm::xccl
