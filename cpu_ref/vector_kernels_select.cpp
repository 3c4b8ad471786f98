// Run-time choice of the vector-kernel table (vector_kernels.h). Chosen once
// per process, like the gemm micro-kernel, so every call on this machine rounds
// the same way.
#include <cstdlib>
#include <string_view>
#include <vector>

#include "cpu_ref/cpu_features.h"
#include "cpu_ref/vector_kernels.h"

namespace hal::cpu_ref {

std::span<const VectorKernels* const> vector_kernels_available() {
  static const std::vector<const VectorKernels*> tables = [] {
    std::vector<const VectorKernels*> t{&vector_kernels_portable()};
    if (hal::cpu_ref::cpu_features().has_avx2_fma())
      if (const VectorKernels* avx2 = vector_kernels_avx2()) t.push_back(avx2);
    return t;
  }();
  return tables;
}

const VectorKernels& vector_kernels() {
  static const VectorKernels& chosen = []() -> const VectorKernels& {
    const auto tables = vector_kernels_available();
    if (const char* forced = std::getenv("HAL_CPU_VECTOR_KERNELS")) {
      const std::string_view want(forced);
      for (const VectorKernels* t : tables)
        if (std::string_view(t->name).starts_with(want)) return *t;
      // An unknown or unsupported request falls back to the default choice.
    }
    return *tables.back();
  }();
  return chosen;
}

}  // namespace hal::cpu_ref
