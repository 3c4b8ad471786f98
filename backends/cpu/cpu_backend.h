#pragma once
// The CPU backend: host memory, synchronous streams, oneTBB kernels from cpu_ref/.
#include "hal/registry.h"

namespace hal::cpu {

BackendProbe probe();

}  // namespace hal::cpu
