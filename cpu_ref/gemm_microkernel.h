#pragma once
// The register-blocked inner kernel of the fp32 gemm, one per ISA.
//
// A micro-kernel updates one MR x NR accumulator tile from packed panels:
//   acc[r][c] += sum over k = 0 .. kc-1, in ascending order, of a[k*MR + r] * b[k*NR + c]
// a: kc x MR (one packed micro-panel of op(A), k-major); b: kc x NR (of op(B)).
// acc: MR x NR fp32, row-major, contiguous. No pointer needs any alignment.
//
// Determinism contract: every element's value is one chain of multiply-adds in
// ascending k, the same whatever the tile position or the kc split (acc is
// stored and reloaded exactly between calls). Whether that chain uses fused
// multiply-add depends on the ISA kernel, so results may differ between
// machines, but one process always uses one kernel (selected_gemm_microkernel).
#include <cstdint>
#include <span>

namespace hal::cpu_ref {

using GemmMicroKernelFn = void (*)(std::int64_t kc, const float* a, const float* b, float* acc);

struct GemmMicroKernel {
  const char* name;   // "portable", "avx2_6x16", "avx512_12x32"
  int mr;             // rows of the accumulator tile
  int nr;             // columns of the accumulator tile
  GemmMicroKernelFn run;
};

// Each ISA's kernel (the avx2/avx512 ones must only be run on a CPU that has
// the ISA; see gemm_microkernels_available()).
GemmMicroKernel gemm_microkernel_portable();
GemmMicroKernel gemm_microkernel_avx2();
GemmMicroKernel gemm_microkernel_avx512();

// The kernels this CPU can run, most capable last.
std::span<const GemmMicroKernel> gemm_microkernels_available();
// The kernel every gemm in this process uses: the most capable available one,
// chosen once. HAL_CPU_GEMM_KERNEL=portable|avx2|avx512 forces a (supported)
// choice, for comparing kernels.
const GemmMicroKernel& selected_gemm_microkernel();

}  // namespace hal::cpu_ref
