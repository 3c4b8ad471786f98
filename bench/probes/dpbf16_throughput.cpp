// Instruction throughput of the bf16-pair GEMM's inner instruction against the
// f32 GEMM's: 12 independent accumulators of vdpbf16ps zmm (64 flop each) and of
// vfmadd231ps zmm (32 flop each), one thread, registers only (inline asm so the
// compiler cannot spill the chains), operands normal numbers (no assists).
// If vdpbf16ps issues at half the rate of vfmadd231ps, the pair path has no
// flop advantage over f32 on that CPU, whatever the packing does.
// Build: g++ -O2 bench/probes/dpbf16_throughput.cpp -o dpbf16_throughput
// (needs an AVX-512 BF16 CPU to run; no flags, the asm names the instructions).
#include <immintrin.h>
#include <chrono>
#include <cstdio>
int main() {
  const long n = 100000000;  // iterations of 12 instructions
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    asm volatile(
        "vxorps %%zmm0,%%zmm0,%%zmm0\n mov %0,%%rcx\n"
        "1:\n"
        "vfmadd231ps %%zmm14,%%zmm15,%%zmm0\n vfmadd231ps %%zmm14,%%zmm15,%%zmm1\n vfmadd231ps %%zmm14,%%zmm15,%%zmm2\n"
        "vfmadd231ps %%zmm14,%%zmm15,%%zmm3\n vfmadd231ps %%zmm14,%%zmm15,%%zmm4\n vfmadd231ps %%zmm14,%%zmm15,%%zmm5\n"
        "vfmadd231ps %%zmm14,%%zmm15,%%zmm6\n vfmadd231ps %%zmm14,%%zmm15,%%zmm7\n vfmadd231ps %%zmm14,%%zmm15,%%zmm8\n"
        "vfmadd231ps %%zmm14,%%zmm15,%%zmm9\n vfmadd231ps %%zmm14,%%zmm15,%%zmm10\n vfmadd231ps %%zmm14,%%zmm15,%%zmm11\n"
        "dec %%rcx\n jnz 1b\n" ::"r"(n) : "rcx", "memory");
    auto t1 = std::chrono::steady_clock::now();
    asm volatile(
        "mov %0,%%rcx\n"
        "1:\n"
        "vdpbf16ps %%zmm14,%%zmm15,%%zmm0\n vdpbf16ps %%zmm14,%%zmm15,%%zmm1\n vdpbf16ps %%zmm14,%%zmm15,%%zmm2\n"
        "vdpbf16ps %%zmm14,%%zmm15,%%zmm3\n vdpbf16ps %%zmm14,%%zmm15,%%zmm4\n vdpbf16ps %%zmm14,%%zmm15,%%zmm5\n"
        "vdpbf16ps %%zmm14,%%zmm15,%%zmm6\n vdpbf16ps %%zmm14,%%zmm15,%%zmm7\n vdpbf16ps %%zmm14,%%zmm15,%%zmm8\n"
        "vdpbf16ps %%zmm14,%%zmm15,%%zmm9\n vdpbf16ps %%zmm14,%%zmm15,%%zmm10\n vdpbf16ps %%zmm14,%%zmm15,%%zmm11\n"
        "dec %%rcx\n jnz 1b\n" ::"r"(n) : "rcx", "memory");
    auto t2 = std::chrono::steady_clock::now();
    double tf = std::chrono::duration<double>(t1 - t0).count(), tb = std::chrono::duration<double>(t2 - t1).count();
    std::printf("vfmadd231ps zmm %.2f G/s = %.1f GFLOP/s; vdpbf16ps zmm %.2f G/s = %.1f GFLOP/s; bf16/f32 flop ratio %.2f\n",
                12 * n / tf / 1e9, 12 * n / tf * 32 / 1e9, 12 * n / tb / 1e9, 12 * n / tb * 64 / 1e9, (tf / tb) * 2);
  }
}
