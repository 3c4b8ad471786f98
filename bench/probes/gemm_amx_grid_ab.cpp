// The AMX bf16 GEMM with and without its software-pipelined grid entry
// (GemmMicroKernel::run_grid), through gemm_fp32_blocked, samples interleaved
// call by call (a shared VM's speed drifts within minutes). bf16 A, B and C,
// random values in [0.5, 1). Each argument is WHICH:MC:NC:KC:MAXROWS, WHICH
// g (the kernel as selected: run_grid) or t (run_grid off: one run per tile).
// Usage: gemm_amx_grid_ab M N K THREADS g:144:1024:256:1024 t:144:1024:256:1024
// (REPS samples per variant, default 30; median and best printed).
// Build: g++ -O2 -std=c++20 -I<repo> gemm_amx_grid_ab.cpp <build>/libhal.a -ltbb -lfmt
#include <tbb/global_control.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cpu_ref/gemm_blocked.h"

using hal::DType;
using namespace hal::cpu_ref;

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: gemm_amx_grid_ab M N K THREADS WHICH:MC:NC:KC:MAXROWS ...\n");
    return 1;
  }
  const std::int64_t m = std::atoll(argv[1]), n = std::atoll(argv[2]), k = std::atoll(argv[3]);
  const int threads = std::atoi(argv[4]), reps = std::getenv("REPS") ? std::atoi(std::getenv("REPS")) : 30;
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism, threads);
  const GemmMicroKernel* amx = nullptr;
  for (const auto& kernel : gemm_microkernels_available())
    if (std::string(kernel.name) == "amx_32x32") amx = &kernel;
  if (!amx) {
    std::fprintf(stderr, "no AMX kernel on this CPU\n");
    return 1;
  }
  std::vector<std::uint16_t> a(m * k), b(k * n), c(m * n);
  std::mt19937 gen(1);
  for (auto& x : a) x = static_cast<std::uint16_t>(0x3f00u | (gen() & 0xffu));
  for (auto& x : b) x = static_cast<std::uint16_t>(0x3f00u | (gen() & 0xffu));
  GemmProblem p;
  p.m = m, p.n = n, p.k = k;
  p.a = {a.data(), DType::bf16, 0, 0, k, 1};
  p.b = {b.data(), DType::bf16, 0, 0, n, 1};
  p.c = {c.data(), DType::bf16, 0, 0, n, 1};
  std::vector<GemmBlocking> blockings;
  std::vector<GemmMicroKernel> kernels;
  for (int i = 5; i < argc; ++i) {
    GemmBlocking bl;
    char which = 0;
    long mc = 0, nc = 0, kc = 0, rows = 0;
    if (std::sscanf(argv[i], "%c:%ld:%ld:%ld:%ld", &which, &mc, &nc, &kc, &rows) != 5) return 1;
    bl.mc = mc, bl.nc = nc, bl.kc = kc, bl.max_rows_per_task = rows;
    GemmMicroKernel kernel = *amx;
    if (which == 't') kernel.run_grid = nullptr;
    blockings.push_back(bl);
    kernels.push_back(kernel);
  }
  std::vector<std::vector<double>> seconds(kernels.size());
  for (int r = 0; r < reps; ++r)
    for (std::size_t v = 0; v < kernels.size(); ++v) {
      const auto t0 = std::chrono::steady_clock::now();
      gemm_fp32_blocked(p, kernels[v], blockings[v]);
      seconds[v].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  const double flop = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  for (std::size_t v = 0; v < kernels.size(); ++v) {
    auto& s = seconds[v];
    std::sort(s.begin(), s.end());
    std::printf("%lldx%lldx%lld %-22s median %.0f  best %.0f GFLOP/s\n", static_cast<long long>(m),
                static_cast<long long>(n), static_cast<long long>(k), argv[5 + v], flop / s[s.size() / 2] / 1e9,
                flop / s[0] / 1e9);
  }
  return 0;
}
