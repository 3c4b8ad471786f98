#pragma once
// The block dot products of the CPU fp8 GEMM (cpu_ref/gemm_fp8.cpp): for
// r < rows, t < cols, out[r * out_stride + t] = sum_q a[r * ld + q] * b[t * ld + q]
// over q < len (len a multiple of 8; the caller zero-pads a ragged block).
//
// One order for every implementation, so the ISA does not change the bits:
// lane l (0..7) sums q = l, l + 8, l + 16, ... in order, each step
// lane + a*b (the fp8 products are exact in fp32, so a fused multiply-add and
// a multiply then add round alike), then lanes are added (l, l + 4), (l, l + 2),
// (l, l + 1).
#include <cstdint>

namespace hal::cpu_ref {

using Fp8BlockDots = void (*)(const float* a, const float* b, std::int64_t ld, std::int64_t rows, std::int64_t cols,
                              std::int64_t len, float* out, std::int64_t out_stride);

void fp8_block_dots_portable(const float* a, const float* b, std::int64_t ld, std::int64_t rows, std::int64_t cols,
                             std::int64_t len, float* out, std::int64_t out_stride);
// AVX2 + FMA; call only where cpu_features().has_avx2_fma().
void fp8_block_dots_avx2(const float* a, const float* b, std::int64_t ld, std::int64_t rows, std::int64_t cols,
                         std::int64_t len, float* out, std::int64_t out_stride);

// The implementation for this machine, chosen once (HAL_CPU_GEMM_KERNEL=portable
// forces the portable one, as for the other GEMM).
Fp8BlockDots fp8_block_dots();

}  // namespace hal::cpu_ref
