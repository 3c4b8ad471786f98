#pragma once
// Which op calls the GPU backends' kernels implement, shared by cuda and hip
// (their kernel sets cover the same dtype matrix). ops/ has already validated
// the call; this only answers "is there a kernel for these dtypes". f64 is
// never supported on a GPU; the reason names backend, op and dtype.
#include <string_view>

#include "hal/device.h"
#include "hal/op.h"

namespace hal {

Support gpu_supports_call(std::string_view backend, const OpCall& call);

}  // namespace hal
