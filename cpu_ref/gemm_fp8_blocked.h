#pragma once
// The packed fp8 GEMM (gemm_fp8, gemm_fp8_grouped; formula in
// cpu_ref/gemm_fp8.cpp), cache-blocked as the bf16 GEMM (cpu_ref/gemm_blocked.h):
//
//   parallel over output tiles (problem, a range of rows, NC columns)  [tbb]
//     fp32 accumulator tile, zeroed
//     for each 128-wide K block kb, in ascending order:
//       pack b's rows [NC x 128] into panels (fp8 -> fp32 or bf16, exact)
//       for each MC block of the tile's rows:
//         pack a's rows [MC x 128] into panels
//         for each NR column panel, for each MR row panel: the block kernel,
//           acc += (sa[i, kb] * sb[j / 128, kb]) * S_kb   (gemm_fp8_kernel.h)
//     epilogue once per element: act(alpha * acc + beta * c + bias), one rounding
//
// Every element is the same chain whatever the tile, the thread count or the
// kernel (one block-sum order for all, blocks promoted in K order), so the
// bits depend on neither the thread count nor the machine.
#include <cstdint>
#include <optional>
#include <span>

#include "cpu_ref/gemm_fp8_kernel.h"
#include "hal/op.h"  // GemmFp8Call and its epilogue (hal/op_fp8.h)

namespace hal::cpu_ref {

// One fp8 GEMM problem over rows [row0, row1) of a and c: 2-D views (b and
// b_scales of one group for the grouped GEMM) and the epilogue.
struct Fp8GemmProblem {
  Tensor a, a_scales, b, b_scales, c;
  std::optional<Tensor> bias;  // rank 1 [N]
  const Fp8Epilogue* epilogue;
  std::int64_t row0, row1;
};

// All problems share K, N and the fp8 formats (the grouped GEMM's groups).
// a and b must be fp8 (the f64 oracle form goes elsewhere).
void gemm_fp8_blocked(std::span<const Fp8GemmProblem> problems, const Fp8BlockKernel& kernel);

}  // namespace hal::cpu_ref
