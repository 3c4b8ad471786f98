#pragma once
// What the host CPU can do, read once at run time. Kernels pick their ISA
// from this; the build never assumes more than baseline x86-64.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hal::cpu_ref {

struct CpuFeatures {
  std::string brand;
  int hardware_threads = 1;
  int physical_cores = 1;  // hardware_threads without SMT siblings (peak rates count cores)
  int clock_mhz = 0;       // nominal clock as the OS reports it; 0 if unknown
  std::uint64_t memory_bytes = 0;
  std::uint64_t l2_bytes = 0;
  bool avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false, avx512bf16 = false;
  // AMX-TILE and AMX-BF16, and the OS has granted this process the tile data
  // state (Linux: arch_prctl ARCH_REQ_XCOMP_PERM, asked for once, process-wide).
  bool amx_bf16 = false;

  bool has_avx2_fma() const { return avx2 && fma && f16c; }
  bool has_avx512() const { return avx512f && avx512bw && avx512vl && avx512dq && fma && f16c; }
  std::string arch_string() const;          // "x86-64+avx512f+avx512bf16"
  std::vector<std::string> feature_list() const;
};

// What /proc/cpuinfo (Linux) says that cpuid does not: the clock ("cpu MHz"
// of the first processor) and the physical cores (distinct "physical id" /
// "core id" pairs). Zero for what the text does not give.
struct CpuInfoText {
  int clock_mhz = 0;
  int physical_cores = 0;
};
CpuInfoText parse_cpuinfo(std::string_view text);

// Nominal peak in TFLOP/s: cores x clock x FLOPs per cycle, with two vector
// FMA pipes per core (Zen 2-4, most Xeons; a one-FMA-pipe part gets half).
// The FMA is the widest the vector kernels use (AVX-512: 16 lanes, AVX2: 8),
// without FMA one multiply and one add pipe of 4 lanes. bf16 doubles the fp32
// rate with AVX-512 BF16 (vdpbf16ps: two products per fp32 lane), else it is
// the fp32 rate (bf16 is widened); with AMX it is one TDPBF16PS (16 x 16 x 32
// multiply-adds) per 16 cycles, 1024 FLOPs per cycle per core. A nominal figure: the clock is the one the
// OS reports (often the base clock; a VM's host TSC), which boost exceeds --
// on the 2-core VM the AVX2 kernel reaches about 95% of it on one core -- so
// the benchmarks measure their ceilings in the same run and prefer those.
double nominal_fp32_tflops(const CpuFeatures& f);
double nominal_bf16_tflops(const CpuFeatures& f);

const CpuFeatures& cpu_features();

}  // namespace hal::cpu_ref
