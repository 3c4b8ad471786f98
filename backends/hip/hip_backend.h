#pragma once
// The AMD backend: probes the HIP runtime (libamdhip64, dlopen'ed at run
// time) and creates one HipDevice per GPU. Never throws: without the runtime
// or a GPU the backend is reported unavailable with the reason.
#include "hal/registry.h"

namespace hal::hip {

BackendProbe probe();

}  // namespace hal::hip
