#pragma once
// The NVIDIA backend: probes the CUDA driver (dlopen'ed at run time) and
// creates one CudaDevice per GPU. Never throws: without a driver or a GPU the
// backend is reported unavailable with the reason.
#include "hal/registry.h"

namespace hal::cuda {

BackendProbe probe();

}  // namespace hal::cuda
