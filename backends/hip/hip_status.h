#pragma once
// The one place where a hipError_t becomes a hal::Error. Messages name the
// device, the runtime call and its context:
//   "hip:0: hipMalloc(1073741824 bytes) failed: hipErrorOutOfMemory (out of memory)"
// hipErrorOutOfMemory maps to ErrorCode::out_of_memory; a code object that
// does not fit the device (no code object for its target ID) to
// ErrorCode::unsupported with both target lists; everything else to
// ErrorCode::device_error.
#include <hip/hip_runtime_api.h>

#include <string>
#include <string_view>

#include "hal/error.h"

namespace hal::hip {

// "hipErrorX (description)", safe to call without a loaded runtime.
std::string describe(hipError_t r);

// The ErrorCode a failed call maps to.
ErrorCode error_code_for(hipError_t r);

// Throws unless r == hipSuccess. `where` is the device name ("hip:0") or
// "hip"; `call` the runtime call with its arguments.
void check(hipError_t r, std::string_view where, std::string_view call);

// Throws for a code-object bundle that failed to load (r != hipSuccess):
// names the device's full target ID and the targets the bundle holds.
void check_module_load(hipError_t r, std::string_view where, std::string_view file, std::string_view device_target,
                       std::string_view bundle_targets);

// Whether a code object built for `code_target` ("gfx940", "gfx90a:xnack-")
// runs on a device whose target ID is `device_target`
// ("gfx942:sramecc+:xnack-"): same processor, and every feature the code
// object pins (sramecc, xnack) set the same way on the device; a feature the
// code object leaves unspecified matches either setting.
bool target_compatible(std::string_view device_target, std::string_view code_target);

}  // namespace hal::hip
