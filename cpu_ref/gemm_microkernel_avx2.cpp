// AVX2/FMA micro-kernel, 6 x 16: 12 ymm accumulators, 2 ymm for a row of B and
// one broadcast of A (15 of the 16 ymm registers). Compiled with -mavx2 -mfma
// only in this file; run only where cpu_features() reports AVX2+FMA.
#include <immintrin.h>

#include "cpu_ref/gemm_microkernel.h"

namespace hal::cpu_ref {
namespace {

constexpr int kMr = 6;
constexpr int kNr = 16;

void microkernel_avx2(std::int64_t kc, const void* a_panel, const void* b_panel, float* acc) {
  const float* a = static_cast<const float*>(a_panel);
  const float* b = static_cast<const float*>(b_panel);
  // Named accumulators, not an array: GCC keeps an array of vectors in memory
  // and stores it back every iteration.
  __m256 c00 = _mm256_loadu_ps(acc + 0 * kNr), c01 = _mm256_loadu_ps(acc + 0 * kNr + 8);
  __m256 c10 = _mm256_loadu_ps(acc + 1 * kNr), c11 = _mm256_loadu_ps(acc + 1 * kNr + 8);
  __m256 c20 = _mm256_loadu_ps(acc + 2 * kNr), c21 = _mm256_loadu_ps(acc + 2 * kNr + 8);
  __m256 c30 = _mm256_loadu_ps(acc + 3 * kNr), c31 = _mm256_loadu_ps(acc + 3 * kNr + 8);
  __m256 c40 = _mm256_loadu_ps(acc + 4 * kNr), c41 = _mm256_loadu_ps(acc + 4 * kNr + 8);
  __m256 c50 = _mm256_loadu_ps(acc + 5 * kNr), c51 = _mm256_loadu_ps(acc + 5 * kNr + 8);
  for (std::int64_t k = 0; k < kc; ++k) {
    const __m256 b0 = _mm256_loadu_ps(b + k * kNr);
    const __m256 b1 = _mm256_loadu_ps(b + k * kNr + 8);
    const float* ak = a + k * kMr;
    { const __m256 ar = _mm256_set1_ps(ak[0]); c00 = _mm256_fmadd_ps(ar, b0, c00); c01 = _mm256_fmadd_ps(ar, b1, c01); }
    { const __m256 ar = _mm256_set1_ps(ak[1]); c10 = _mm256_fmadd_ps(ar, b0, c10); c11 = _mm256_fmadd_ps(ar, b1, c11); }
    { const __m256 ar = _mm256_set1_ps(ak[2]); c20 = _mm256_fmadd_ps(ar, b0, c20); c21 = _mm256_fmadd_ps(ar, b1, c21); }
    { const __m256 ar = _mm256_set1_ps(ak[3]); c30 = _mm256_fmadd_ps(ar, b0, c30); c31 = _mm256_fmadd_ps(ar, b1, c31); }
    { const __m256 ar = _mm256_set1_ps(ak[4]); c40 = _mm256_fmadd_ps(ar, b0, c40); c41 = _mm256_fmadd_ps(ar, b1, c41); }
    { const __m256 ar = _mm256_set1_ps(ak[5]); c50 = _mm256_fmadd_ps(ar, b0, c50); c51 = _mm256_fmadd_ps(ar, b1, c51); }
  }
  _mm256_storeu_ps(acc + 0 * kNr, c00);
  _mm256_storeu_ps(acc + 0 * kNr + 8, c01);
  _mm256_storeu_ps(acc + 1 * kNr, c10);
  _mm256_storeu_ps(acc + 1 * kNr + 8, c11);
  _mm256_storeu_ps(acc + 2 * kNr, c20);
  _mm256_storeu_ps(acc + 2 * kNr + 8, c21);
  _mm256_storeu_ps(acc + 3 * kNr, c30);
  _mm256_storeu_ps(acc + 3 * kNr + 8, c31);
  _mm256_storeu_ps(acc + 4 * kNr, c40);
  _mm256_storeu_ps(acc + 4 * kNr + 8, c41);
  _mm256_storeu_ps(acc + 5 * kNr, c50);
  _mm256_storeu_ps(acc + 5 * kNr + 8, c51);
}

}  // namespace

GemmMicroKernel gemm_microkernel_avx2() { return {"avx2_6x16", kMr, kNr, &microkernel_avx2}; }

}  // namespace hal::cpu_ref
