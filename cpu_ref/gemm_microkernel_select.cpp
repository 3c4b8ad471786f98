// Run-time choice of the gemm micro-kernel. Chosen once per process so that
// every gemm on this machine rounds the same way (see gemm_microkernel.h).
#include <cstdlib>
#include <string_view>
#include <vector>

#include "backends/cpu/cpu_features.h"
#include "cpu_ref/gemm_microkernel.h"

namespace hal::cpu_ref {

std::span<const GemmMicroKernel> gemm_microkernels_available() {
  static const std::vector<GemmMicroKernel> kernels = [] {
    std::vector<GemmMicroKernel> k{gemm_microkernel_portable()};
    const auto& f = hal::cpu::cpu_features();
    if (f.has_avx2_fma()) k.push_back(gemm_microkernel_avx2());
    if (f.has_avx512()) k.push_back(gemm_microkernel_avx512());
    return k;
  }();
  return kernels;
}

const GemmMicroKernel& selected_gemm_microkernel() {
  static const GemmMicroKernel& chosen = []() -> const GemmMicroKernel& {
    auto kernels = gemm_microkernels_available();
    if (const char* forced = std::getenv("HAL_CPU_GEMM_KERNEL")) {
      const std::string_view want(forced);
      for (const auto& k : kernels)
        if (std::string_view(k.name).starts_with(want)) return k;
      // An unknown or unsupported request falls back to the default choice.
    }
    return kernels.back();
  }();
  return chosen;
}

}  // namespace hal::cpu_ref
