// Run-time choice of the gemm micro-kernel. Chosen once per process so that
// every gemm on this machine rounds the same way (see gemm_microkernel.h).
#include <cstdlib>
#include <string_view>
#include <vector>

#include "cpu_ref/cpu_features.h"
#include "cpu_ref/gemm_microkernel.h"

namespace hal::cpu_ref {
namespace {

const char* forced_kernel() { return std::getenv("HAL_CPU_GEMM_KERNEL"); }

bool has_avx512bf16() {
  const auto& f = hal::cpu_ref::cpu_features();
  return f.has_avx512() && f.avx512bf16;
}

}  // namespace

std::span<const GemmMicroKernel> gemm_microkernels_available() {
  static const std::vector<GemmMicroKernel> kernels = [] {
    std::vector<GemmMicroKernel> k{gemm_microkernel_portable()};
    const auto& f = hal::cpu_ref::cpu_features();
    if (f.has_avx2_fma()) k.push_back(gemm_microkernel_avx2());
    if (f.has_avx512()) k.push_back(gemm_microkernel_avx512());
    k.push_back(gemm_microkernel_bf16_pairs_emulated());
    if (has_avx512bf16()) k.push_back(gemm_microkernel_avx512bf16());
    k.push_back(gemm_microkernel_amx_emulated());
    if (f.amx_bf16) k.push_back(gemm_microkernel_amx());
    return k;
  }();
  return kernels;
}

const GemmMicroKernel& selected_gemm_microkernel() {
  static const GemmMicroKernel& chosen = []() -> const GemmMicroKernel& {
    auto kernels = gemm_microkernels_available();
    const GemmMicroKernel* best = &kernels.front();
    for (const auto& k : kernels)
      if (k.packing == GemmPacking::fp32) best = &k;
    if (const char* forced = forced_kernel()) {
      const std::string_view want(forced);
      for (const auto& k : kernels)
        if (k.packing == GemmPacking::fp32 && std::string_view(k.name).starts_with(want)) return k;
      // An unknown or unsupported request falls back to the default choice.
    }
    return *best;
  }();
  return chosen;
}

const GemmMicroKernel* decode_kernel_for(const GemmMicroKernel& k, std::span<const GemmMicroKernel> available) {
  if (k.stream_b) return &k;
  if (k.packing != GemmPacking::fp32) return nullptr;
  for (const auto& other : available)
    if (other.packing == GemmPacking::fp32 && other.fused == k.fused && other.stream_b) return &other;
  return nullptr;
}

const GemmMicroKernel& gemm_microkernel_for(DType a, DType b) {
  // HAL_CPU_GEMM_KERNEL names a bf16-only kernel (pairs or AMX) to force it
  // (the emulated ones run those paths on any CPU), an fp32 one to keep bf16
  // on the fp32 kernels.
  static const GemmMicroKernel* bf16_kernel = []() -> const GemmMicroKernel* {
    auto kernels = gemm_microkernels_available();
    // An emulated kernel only when asked for by name ("amx" is the hardware one).
    auto find = [&](std::string_view name) -> const GemmMicroKernel* {
      const bool emulated = name.find("emulated") != std::string_view::npos;
      for (const auto& k : kernels) {
        const std::string_view kn(k.name);
        if (k.bf16_only() && kn.starts_with(name) && (kn.find("emulated") != std::string_view::npos) == emulated)
          return &k;
      }
      return nullptr;
    };
    if (const char* forced = forced_kernel()) {
      const std::string_view want(forced);
      const bool names_bf16 = want.starts_with("avx512bf16") || want.starts_with("bf16_pairs") || want.starts_with("amx");
      return names_bf16 ? find(want) : nullptr;
    }
    if (hal::cpu_ref::cpu_features().amx_bf16) return find("amx");
    return has_avx512bf16() ? find("avx512bf16") : nullptr;
  }();
  if (a == DType::bf16 && b == DType::bf16 && bf16_kernel) return *bf16_kernel;
  return selected_gemm_microkernel();
}

}  // namespace hal::cpu_ref
