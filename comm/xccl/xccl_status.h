#pragma once
// The one place ncclResult_t (NCCL and RCCL) becomes hal::Error: invalid
// argument/usage are hal's invalid_argument, the rest device_error, each with
// the call, its context and ncclGetErrorString's text.
#include <string_view>

#include "comm/xccl/xccl_library.h"

namespace hal::comm::xccl {

void check(const Library& lib, ncclResult_t result, std::string_view call, std::string_view context);

}  // namespace hal::comm::xccl
