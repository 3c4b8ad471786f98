#include "backends/cpu/cpu_features.h"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace hal::cpu {

namespace {

std::string read_brand() {
#if defined(__x86_64__)
  unsigned regs[12] = {};
  unsigned max_ext = __get_cpuid_max(0x80000000u, nullptr);
  if (max_ext >= 0x80000004u) {
    for (unsigned i = 0; i < 3; ++i) __get_cpuid(0x80000002u + i, &regs[i * 4], &regs[i * 4 + 1], &regs[i * 4 + 2], &regs[i * 4 + 3]);
    std::string s(reinterpret_cast<const char*>(regs), sizeof(regs));
    s = s.c_str();
    const auto b = s.find_first_not_of(' ');
    return b == std::string::npos ? std::string("x86-64") : s.substr(b);
  }
#endif
  return "unknown CPU";
}

std::uint64_t read_sysconf(int name) {
  const long v = sysconf(name);
  return v > 0 ? static_cast<std::uint64_t>(v) : 0;
}

CpuFeatures detect() {
  CpuFeatures f;
  f.brand = read_brand();
  f.hardware_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  f.memory_bytes = read_sysconf(_SC_PHYS_PAGES) * read_sysconf(_SC_PAGESIZE);
#ifdef _SC_LEVEL2_CACHE_SIZE
  f.l2_bytes = read_sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
#if defined(__x86_64__)
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512dq = __builtin_cpu_supports("avx512dq");
  unsigned a, b, c, d;
  if (__get_cpuid(1, &a, &b, &c, &d)) f.f16c = (c >> 29) & 1u;
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) f.avx512bf16 = (a >> 5) & 1u;
#endif
  return f;
}

}  // namespace

std::vector<std::string> CpuFeatures::feature_list() const {
  std::vector<std::string> out;
  if (avx2) out.push_back("avx2");
  if (fma) out.push_back("fma");
  if (f16c) out.push_back("f16c");
  if (avx512f) out.push_back("avx512f");
  if (avx512bw) out.push_back("avx512bw");
  if (avx512vl) out.push_back("avx512vl");
  if (avx512dq) out.push_back("avx512dq");
  if (avx512bf16) out.push_back("avx512bf16");
  return out;
}

std::string CpuFeatures::arch_string() const {
#if defined(__x86_64__)
  std::string s = "x86-64";
#else
  std::string s = "generic";
#endif
  if (has_avx512()) s += "+avx512";
  else if (has_avx2_fma()) s += "+avx2";
  if (avx512bf16) s += "+avx512bf16";
  return s;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

}  // namespace hal::cpu
