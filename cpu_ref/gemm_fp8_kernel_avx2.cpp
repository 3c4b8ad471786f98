// AVX2/FMA fp8 block kernel, 6 x 16 (cpu_ref/gemm_fp8_kernel.h): the GEMM's
// AVX2 register tile (12 ymm block sums, 2 ymm for a row of B, one broadcast
// of A) on fp32 panels packed with each pair's k swapped, then the promotion
// acc += row_scale * S. Compiled with -mavx2 -mfma -mf16c (like every
// *_avx2.cpp); run only where cpu_features() reports AVX2+FMA+F16C.
#include <immintrin.h>

#include <cstdint>

#include "cpu_ref/gemm_fp8_kernel.h"

namespace hal::cpu_ref {
namespace {

constexpr int kMr = 6;
constexpr int kNr = 16;

inline __attribute__((always_inline)) void promote_row(float* acc, float scale, __m256 lo, __m256 hi) {
  const __m256 s = _mm256_set1_ps(scale);
  _mm256_storeu_ps(acc, _mm256_add_ps(_mm256_loadu_ps(acc), _mm256_mul_ps(s, lo)));
  _mm256_storeu_ps(acc + 8, _mm256_add_ps(_mm256_loadu_ps(acc + 8), _mm256_mul_ps(s, hi)));
}

void block_avx2(std::int64_t kc, const void* a_panel, const void* b_panel, const float* row_scale, float* acc) {
  const auto* a = static_cast<const float*>(a_panel);
  const auto* b = static_cast<const float*>(b_panel);
  // Named accumulators, not an array: GCC keeps an array of vectors in memory.
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps(), c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps(), c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
  __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps(), c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
  for (std::int64_t k = 0; k < kc; ++k) {
    const __m256 b0 = _mm256_loadu_ps(b + k * kNr), b1 = _mm256_loadu_ps(b + k * kNr + 8);
    const float* ak = a + k * kMr;
    __m256 ar = _mm256_set1_ps(ak[0]);
    c00 = _mm256_fmadd_ps(ar, b0, c00), c01 = _mm256_fmadd_ps(ar, b1, c01);
    ar = _mm256_set1_ps(ak[1]);
    c10 = _mm256_fmadd_ps(ar, b0, c10), c11 = _mm256_fmadd_ps(ar, b1, c11);
    ar = _mm256_set1_ps(ak[2]);
    c20 = _mm256_fmadd_ps(ar, b0, c20), c21 = _mm256_fmadd_ps(ar, b1, c21);
    ar = _mm256_set1_ps(ak[3]);
    c30 = _mm256_fmadd_ps(ar, b0, c30), c31 = _mm256_fmadd_ps(ar, b1, c31);
    ar = _mm256_set1_ps(ak[4]);
    c40 = _mm256_fmadd_ps(ar, b0, c40), c41 = _mm256_fmadd_ps(ar, b1, c41);
    ar = _mm256_set1_ps(ak[5]);
    c50 = _mm256_fmadd_ps(ar, b0, c50), c51 = _mm256_fmadd_ps(ar, b1, c51);
  }
  promote_row(acc + 0 * kNr, row_scale[0], c00, c01);
  promote_row(acc + 1 * kNr, row_scale[1], c10, c11);
  promote_row(acc + 2 * kNr, row_scale[2], c20, c21);
  promote_row(acc + 3 * kNr, row_scale[3], c30, c31);
  promote_row(acc + 4 * kNr, row_scale[4], c40, c41);
  promote_row(acc + 5 * kNr, row_scale[5], c50, c51);
}

}  // namespace

Fp8BlockKernel fp8_block_kernel_avx2() { return {"avx2_6x16", kMr, kNr, GemmPacking::fp32, &block_avx2}; }

}  // namespace hal::cpu_ref
