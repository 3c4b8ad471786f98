#pragma once
// The register-blocked inner kernel of the packed fp8 GEMM
// (cpu_ref/gemm_fp8_blocked.h), one per ISA: one 128-wide K block of an
// MR x NR output tile, promoted into the fp32 accumulator with its scales.
//
//   acc[r][c] += row_scale[r] * S[r][c],   S[r][c] = the block's sum of a*b,
//
// one rounded multiply and one rounded add (the project builds with
// -ffp-contract=off; kernels use separate multiply and add intrinsics).
// row_scale[r] is sa[row, kb] * sb[column block, kb], rounded once in fp32 by
// the driver: an NR-column panel never straddles two 128-column scale blocks.
//
// The block sum S has one order for every kernel, so the ISA never changes the
// bits: from +0, K pairs (k, k + 1) of the block in ascending order, and in
// each pair the odd k first: S += a[k+1]*b[k+1], then S += a[k]*b[k], each one
// rounding (fp8 products are exact in fp32, so a fused multiply-add and a
// multiply then add agree). This is vdpbf16ps's own order, so the AVX-512 BF16
// kernel runs the pairs directly; the fp32 kernels run plain ascending chains
// on panels packed with the two k of each pair swapped (gemm_fp8_pack.h).
// vdpbf16ps's flushing never acts here: every fp8 value is a normal bf16, and
// every partial sum is a multiple of the smallest product (>= 2^-34), far above
// fp32's subnormals.
//
// Packed panels (GemmPacking of gemm_microkernel.h):
//   fp32:       a is kc x MR floats, b is kc x NR floats, k-major, the pairs swapped;
//   bf16_pairs: a is ceil(kc/2) x MR, b ceil(kc/2) x NR 32-bit words, each the
//               bf16 bits of k (low half) and k + 1 (high half); zero past kc.
// No pointer needs any alignment.
#include <cstdint>
#include <span>

#include "cpu_ref/gemm_microkernel.h"

namespace hal::cpu_ref {

using Fp8BlockKernelFn = void (*)(std::int64_t kc, const void* a, const void* b, const float* row_scale, float* acc);

struct Fp8Lines;
struct Fp8Table;
// A vectorised pack_fp8_panels (cpu_ref/gemm_fp8_pack.h) for the kernel's
// packing, for unit k stride only; the same words.
using Fp8PackFn = void (*)(const Fp8Lines& lines, std::int64_t extent, std::int64_t kc, int width,
                           const Fp8Table& table, void* dst);

struct Fp8BlockKernel {
  const char* name;  // "portable_4x8", "avx2_6x16", "avx512bf16_12x32", "bf16_pairs_emulated_4x8"
  int mr;            // rows of the tile
  int nr;            // columns of the tile (divides 128)
  GemmPacking packing;
  Fp8BlockKernelFn run;
  Fp8PackFn pack = nullptr;  // null: pack_fp8_panels
};

Fp8BlockKernel fp8_block_kernel_portable();
Fp8BlockKernel fp8_block_kernel_pairs_emulated();  // the bf16_pairs packing in plain C++ (any CPU)
Fp8BlockKernel fp8_block_kernel_avx2();            // only where cpu_features().has_avx2_fma()
Fp8BlockKernel fp8_block_kernel_avx512bf16();      // only with AVX-512 and AVX-512 BF16

// The kernels this CPU can run (portable and pairs_emulated always).
std::span<const Fp8BlockKernel> fp8_block_kernels_available();

// What gemm_fp8 runs, chosen once per process: the packed path on the most
// capable kernel (AVX-512 BF16, else AVX2, else portable), or the earlier
// block-dot path (cpu_ref/gemm_fp8_dot.h). HAL_CPU_FP8_KERNEL=dots picks the
// block dots, =<kernel name prefix> a packed kernel; otherwise
// HAL_CPU_GEMM_KERNEL is followed as for the other GEMM (portable: the
// portable kernel and dots; bf16_pairs_emulated: the emulated pair kernel;
// avx2 or avx512: the AVX2 kernel, off the pairs).
struct Fp8GemmPath {
  const Fp8BlockKernel* kernel;  // null: the block dots
};
Fp8GemmPath selected_fp8_gemm_path();

}  // namespace hal::cpu_ref
