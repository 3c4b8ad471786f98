#pragma once
// The fp32-accumulating gemm (A/B f32, f16 or bf16; C f32, f16 or bf16),
// cache-blocked in the BLIS manner:
//
//   parallel over output tiles (batch, a few MC blocks of rows, NC columns) [tbb]
//     fp32 accumulator tile, zeroed
//     for each KC block of K, in ascending order:
//       pack op(B)[KC x NC] into panels                          (L2/L3)
//       for each MC block of the tile's rows:
//         pack op(A)[MC x KC] into panels                        (L2)
//         for each NR column panel, for each MR row panel: micro-kernel
//     epilogue once per element: act(alpha*acc + beta*C + bias), one rounding
//
// A tile of at most 24 rows (decode shapes) with a row-major f32/bf16 op(B)
// skips the B packing: the kernel's stream_b reads B in place (packing it
// cost more than the arithmetic), with the same per-element chain.
//
// Panels are fp32, or bf16 pairs for a bf16_pairs kernel (gemm_microkernel.h;
// KC blocks then start at even k so a pair never straddles two blocks),
// packed by the kernel's own vectorised packer where it has one (pack_pairs:
// the same words as the plain packing).
// K is never split across threads and the accumulator persists across KC
// blocks, so each output element is the same ascending-k chain of
// multiply-adds whatever the thread count, tile or position in the tile:
// results are bitwise reproducible, and a sub-block computed on its own equals
// the same rows/columns of the full product.
//
// Scratch: per task, the packed panels and the accumulator tile
// (O(MC*KC + KC*NC + max_rows_per_task*NC) floats), reused per thread; no full-size temporary.
//
// beta == 0 follows the BLAS convention: C is not read, so NaN or Inf already
// in C does not reach the result.
#include "cpu_ref/gemm_microkernel.h"
#include "cpu_ref/gemm_operands.h"

namespace hal::cpu_ref {

// Cache blocking. MC and NC are rounded up to multiples of the kernel's MR/NR.
struct GemmBlocking {
  std::int64_t mc = 144;  // rows of op(A) per tile: packed A block MC x KC stays in L2
  std::int64_t nc = 1024;  // columns per tile: packed B block KC x NC (L3); A is repacked N/NC times
  std::int64_t kc = 256;  // depth of one packed block
  // Most rows one task covers (its fp32 accumulator is rows x NC): bounds the
  // per-thread scratch while letting one packed B block serve many MC blocks.
  std::int64_t max_rows_per_task = 1024;
};

void gemm_fp32_blocked(const GemmProblem& p, const GemmMicroKernel& kernel, const GemmBlocking& blocking = {});

}  // namespace hal::cpu_ref
