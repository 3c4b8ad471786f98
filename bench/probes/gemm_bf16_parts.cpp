// Where the bf16 GEMM's time goes on an AVX-512 BF16 CPU: one thread, the
// parts of one (KC x NC B block, MC x KC A block) step of gemm_blocked.cpp
// timed on their own, each best of several calls, as ns per 2*MC*NC*KC flop
// of the step they serve (so the parts add up to a step's cost):
//   micro-kernels (panels in L1/L2): the fp32 AVX-512 one and the bf16-pair one,
//   packing of B (row-major, KC x NC) and of A (row-major, MC x KC): the
//   fp32 widening (what bf16 costs on the fp32 kernel), the plain pair packing
//   and the kernel's vectorised one (GemmMicroKernel::pack_pairs).
// Build: g++ -O2 -std=c++20 -I<repo> gemm_bf16_parts.cpp <build>/libhal.a -ltbb -lfmt
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "cpu_ref/gemm_microkernel.h"
#include "cpu_ref/gemm_pack.h"

using namespace hal::cpu_ref;
using hal::DType;

template <class F> double best_ns(int reps, F f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

int main(int argc, char** argv) {
  const std::int64_t mc = 144, nc = 1024, kc = argc > 1 ? std::atoll(argv[1]) : 256, big = 4096;
  std::vector<std::uint16_t> a(static_cast<std::size_t>(big * big)), b(static_cast<std::size_t>(big * big));
  std::mt19937 gen(1);
  for (auto& v : a) v = static_cast<std::uint16_t>(0x3f00 | (gen() & 0xff));
  for (auto& v : b) v = static_cast<std::uint16_t>(0x3f00 | (gen() & 0xff));
  GemmMatrix am{a.data(), DType::bf16, 0, 0, big, 1}, bm{b.data(), DType::bf16, 0, 0, big, 1};
  const double step_flops = 2.0 * mc * nc * kc;
  std::vector<float> apan(100000), bpan(nc / 32 * (kc * 32 + 16) + 64), acc(12 * 32);
  auto kernels = gemm_microkernels_available();
  for (const auto& k : kernels) {
    if (k.mr != 12) continue;
    const GemmPacking pk = k.packing;
    pack_a(pk, am, 0, 0, 12, 0, kc, 12, apan.data());
    pack_b(pk, bm, 0, 0, 32, 0, kc, 32, bpan.data());
    const double ns = best_ns(2000, [&] { k.run(kc, apan.data(), bpan.data(), acc.data()); });
    std::printf("kernel %-20s %8.1f ns per 12x32x%lld call, %.3f GFLOP/s, step share %.3f ns/MFLOP\n", k.name, ns,
                static_cast<long long>(kc), 2.0 * 12 * 32 * kc / ns, ns / (2.0 * 12 * 32 * kc) * 1e6);
  }
  GemmPackPairsFn vectorised = nullptr;
  for (const auto& k : kernels)
    if (k.pack_pairs) vectorised = k.pack_pairs;
  for (int variant = 0; variant < 3; ++variant) {
    const GemmPacking pk = variant == 0 ? GemmPacking::fp32 : GemmPacking::bf16_pairs;
    const GemmPackPairsFn fast = variant == 2 ? vectorised : nullptr;
    if (variant == 2 && !fast) break;
    const char* name = variant == 0 ? "fp32 widening" : variant == 1 ? "bf16 pairs" : "pairs vectorised";
    // B block at a varying k0 so that it comes from memory/L3, as in the GEMM.
    std::int64_t k0 = 0;
    const double nb = best_ns(20, [&] { pack_b(pk, bm, 0, 0, nc, k0, kc, 32, bpan.data(), fast); k0 = (k0 + kc) % big; });
    const double na = best_ns(200, [&] { pack_a(pk, am, 0, 0, mc, k0, kc, 12, apan.data(), fast); k0 = (k0 + kc) % big; });
    std::printf("pack %-14s B %6.0f us (%.3f ns/MFLOP of a step, reused by rows/MC steps)  A %6.1f us (%.3f ns/MFLOP)\n",
                name, nb / 1e3, nb / step_flops * 1e6, na / 1e3, na / step_flops * 1e6);
  }
}
