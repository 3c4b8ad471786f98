// Run-time choice of the fp8 GEMM path (cpu_ref/gemm_fp8_kernel.h), once per
// process so that every gemm_fp8 in it runs one kernel.
#include <cstdlib>
#include <string_view>
#include <vector>

#include "cpu_ref/cpu_features.h"
#include "cpu_ref/gemm_fp8_kernel.h"

namespace hal::cpu_ref {

std::span<const Fp8BlockKernel> fp8_block_kernels_available() {
  static const std::vector<Fp8BlockKernel> kernels = [] {
    std::vector<Fp8BlockKernel> k{fp8_block_kernel_portable(), fp8_block_kernel_pairs_emulated()};
    const auto& f = cpu_features();
    if (f.has_avx2_fma()) k.push_back(fp8_block_kernel_avx2());
    if (f.has_avx512() && f.avx512bf16) k.push_back(fp8_block_kernel_avx512bf16());
    return k;
  }();
  return kernels;
}

namespace {

const Fp8BlockKernel* find_kernel(std::string_view prefix) {
  for (const auto& k : fp8_block_kernels_available())
    if (std::string_view(k.name).starts_with(prefix)) return &k;
  return nullptr;
}

Fp8GemmPath choose() {
  if (const char* forced = std::getenv("HAL_CPU_FP8_KERNEL")) {
    const std::string_view want(forced);
    if (want == "dots") return {nullptr};
    if (const Fp8BlockKernel* k = find_kernel(want)) return {k};
    // An unknown or unsupported request falls back to the default choice.
  }
  if (const char* gemm = std::getenv("HAL_CPU_GEMM_KERNEL")) {
    const std::string_view want(gemm);
    if (want.starts_with("portable")) return {find_kernel("portable")};
    if (want.starts_with("bf16_pairs")) return {find_kernel("bf16_pairs_emulated")};
    if ((want.starts_with("avx2") || (want.starts_with("avx512") && !want.starts_with("avx512bf16"))) &&
        find_kernel("avx2"))
      return {find_kernel("avx2")};
  }
  for (std::string_view best : {"avx512bf16", "avx2"})
    if (const Fp8BlockKernel* k = find_kernel(best)) return {k};
  return {find_kernel("portable")};
}

}  // namespace

Fp8GemmPath selected_fp8_gemm_path() {
  static const Fp8GemmPath chosen = choose();
  return chosen;
}

}  // namespace hal::cpu_ref
