#include "cpu_ref/cpu_features.h"

#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>
#include <utility>

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#endif

namespace hal::cpu_ref {

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

#if defined(__x86_64__)
// Whether this process may use AMX tile data: XCR0 must have the tile bits
// (17, 18) and, on Linux 5.16 and later, the process must ask for the state
// (it enlarges every signal frame, so the kernel grants it only on request).
bool amx_tile_state_granted() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !((c >> 27) & 1u)) return false;  // OSXSAVE
  unsigned xcr0_lo, xcr0_hi;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  if ((xcr0_lo & (3u << 17)) != (3u << 17)) return false;
#if defined(__linux__)
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;  // no known way to ask for the state: never run AMX there
#endif
}
#endif

std::uint64_t read_sysconf(int name) {
  const long v = sysconf(name);
  return v > 0 ? static_cast<std::uint64_t>(v) : 0;
}

std::string read_file(const char* path) {
  std::ifstream in(path);
  return in ? std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()) : std::string();
}

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// The value of a "key<tabs>: value" line, if the line has that key.
bool field(std::string_view line, std::string_view key, std::string_view& value) {
  const auto colon = line.find(':');
  if (colon == std::string_view::npos || trim(line.substr(0, colon)) != key) return false;
  value = trim(line.substr(colon + 1));
  return true;
}

CpuFeatures detect() {
  CpuFeatures f;
  f.brand = read_brand();
  f.hardware_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const CpuInfoText info = parse_cpuinfo(read_file("/proc/cpuinfo"));
  f.clock_mhz = info.clock_mhz;
  // A process may see fewer threads than the machine has (affinity): count
  // cores only when the file's cores fit in what this process sees.
  f.physical_cores = info.physical_cores > 0 ? std::min(info.physical_cores, f.hardware_threads) : f.hardware_threads;
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
  // CPUID.7.0:EDX bit 22 AMX-BF16, bit 24 AMX-TILE.
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && ((d >> 22) & 1u) && ((d >> 24) & 1u))
    f.amx_bf16 = f.has_avx512() && amx_tile_state_granted();
#endif
  return f;
}

}  // namespace

CpuInfoText parse_cpuinfo(std::string_view text) {
  CpuInfoText out;
  std::set<std::pair<std::string, std::string>> cores;
  std::string physical_id, core_id;
  bool has_core_id = false;
  auto end_processor = [&] {
    if (has_core_id) cores.emplace(physical_id, core_id);
    physical_id.clear();
    core_id.clear();
    has_core_id = false;
  };
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    std::string_view v;
    if (trim(line).empty()) {
      end_processor();
    } else if (field(line, "cpu MHz", v)) {
      double mhz = 0;
      const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), mhz);
      if (ec == std::errc() && out.clock_mhz == 0 && mhz > 0 && mhz < 1e6) out.clock_mhz = static_cast<int>(std::lround(mhz));
    } else if (field(line, "physical id", v)) {
      physical_id = std::string(v);
    } else if (field(line, "core id", v)) {
      core_id = std::string(v);
      has_core_id = true;
    }
  }
  end_processor();
  out.physical_cores = static_cast<int>(cores.size());
  return out;
}

namespace {

// Vector lanes per FMA pipe the kernels use, and whether they fuse.
double flops_per_cycle_per_core(const CpuFeatures& f) {
  constexpr double kPipes = 2;
  if (f.has_avx512()) return kPipes * 16 * 2;
  if (f.has_avx2_fma()) return kPipes * 8 * 2;
  return kPipes * 4;  // SSE: a 4-lane multiply pipe and a 4-lane add pipe
}

}  // namespace

double nominal_fp32_tflops(const CpuFeatures& f) {
  return f.physical_cores * (f.clock_mhz * 1e-6) * flops_per_cycle_per_core(f);
}

double nominal_bf16_tflops(const CpuFeatures& f) {
  if (f.amx_bf16) return f.physical_cores * (f.clock_mhz * 1e-6) * 1024;
  return nominal_fp32_tflops(f) * (f.has_avx512() && f.avx512bf16 ? 2 : 1);
}

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
  if (amx_bf16) out.push_back("amx_bf16");
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
  if (amx_bf16) s += "+amx_bf16";
  return s;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

}  // namespace hal::cpu_ref
