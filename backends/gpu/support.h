#pragma once
// Which op calls the GPU backends' kernels implement, shared by cuda and hip
// (their kernel sets cover the same dtype matrix). ops/ has already validated
// the call; this only answers "is there a kernel for these dtypes". f64 is
// never supported on a GPU; the reason names backend, op and dtype.
#include <string_view>

#include "hal/device.h"
#include "hal/op.h"

#include <type_traits>

namespace hal {

// The op calls no GPU kernel implements yet: the support matrix declines
// them by name, and the dispatch has no launcher to find for them. None
// today: every training op (embedding_backward and attention_backward
// included) has kernels that compiled but never ran on a GPU, which the
// matrix declines unless HAL_GPU_UNVERIFIED=1 (unverified.h).
template <class Call>
inline constexpr bool gpu_lacks_kernel_v = false;

Support gpu_supports_call(std::string_view backend, const OpCall& call);

}  // namespace hal
