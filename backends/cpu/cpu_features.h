#pragma once
// What the host CPU can do, read once at run time. Kernels pick their ISA
// from this; the build never assumes more than baseline x86-64.
#include <cstdint>
#include <string>
#include <vector>

namespace hal::cpu {

struct CpuFeatures {
  std::string brand;
  int hardware_threads = 1;
  std::uint64_t memory_bytes = 0;
  std::uint64_t l2_bytes = 0;
  bool avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false, avx512bf16 = false;

  bool has_avx2_fma() const { return avx2 && fma && f16c; }
  bool has_avx512() const { return avx512f && avx512bw && avx512vl && avx512dq && fma && f16c; }
  std::string arch_string() const;          // "x86-64+avx512f+avx512bf16"
  std::vector<std::string> feature_list() const;
};

const CpuFeatures& cpu_features();

}  // namespace hal::cpu
