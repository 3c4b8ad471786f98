#pragma once
// GPU kernels that are compiled for every target and pass the build-report and
// ISA checks, but have never run on a GPU (no GPU was lent while they were
// written). They stay off by default, so that a GPU run gives either a result
// the conformance suite has verified or a clear "unsupported"; HAL_GPU_UNVERIFIED=1
// turns them on, which is what the next GPU session does to verify them
// (`HAL_GPU_UNVERIFIED=1 hal conformance --device cuda:0`). A kernel leaves
// this list once a committed GPU run (bench/results/) shows it passing.
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "hal/device.h"
#include "hal/op.h"

namespace hal::gpu {

inline constexpr const char* kUnverifiedKernelsEnv = "HAL_GPU_UNVERIFIED";

// Read on every call (cheap; tests flip it with setenv).
inline bool unverified_kernels_enabled() {
  const char* v = std::getenv(kUnverifiedKernelsEnv);
  return v != nullptr && std::strcmp(v, "1") == 0;
}

// The reason a backend gives while the switch is off.
inline Support unverified_kernel_declined(std::string_view backend, const OpCall& call) {
  return Support{false, fmt::format("{}: the {} kernel was compiled but has never run on a GPU; set {}=1 to use it "
                                    "(docs/performance.md, 'Unverified GPU kernels')",
                                    backend, op_name(call), kUnverifiedKernelsEnv)};
}

}  // namespace hal::gpu
