// The backends compiled into this build, in the order hal::devices() lists them.
#include "backends/cpu/cpu_backend.h"
#include "hal/registry.h"

#if HAL_HAVE_CUDA
#include "backends/cuda/cuda_backend.h"
#endif
#if HAL_HAVE_HIP
#include "backends/hip/hip_backend.h"
#endif

namespace hal::detail {

std::vector<BackendProbe> probe_compiled_backends() {
  std::vector<BackendProbe> probes;
  probes.push_back(cpu::probe());
#if HAL_HAVE_CUDA
  probes.push_back(cuda::probe());
#endif
#if HAL_HAVE_HIP
  probes.push_back(hip::probe());
#endif
  return probes;
}

}  // namespace hal::detail
