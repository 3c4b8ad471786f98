// AVX2/FMA block dots of the fp8 GEMM (cpu_ref/gemm_fp8_dot.h gives the order):
// two rows of a against four rows of b at a time (then one row), an 8-lane
// ymm accumulator per output (lane l of the register is lane l of the order). Compiled with -mavx2
// -mfma (like every *_avx2.cpp); only internal-linkage helpers, so no weak
// symbol is shared with baseline code.
#include <immintrin.h>

#include "cpu_ref/gemm_fp8_dot.h"

namespace hal::cpu_ref {

namespace {

// (l, l + 4), then (l, l + 2), then (l, l + 1): the portable reduction's order.
inline __attribute__((always_inline)) float reduce8(__m256 v) {
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  const __m128 s1 = _mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1));
  return _mm_cvtss_f32(s1);
}

}  // namespace

void fp8_block_dots_avx2(const float* a, const float* b, std::int64_t ld, std::int64_t rows, std::int64_t cols,
                         std::int64_t len, float* out, std::int64_t out_stride) {
  std::int64_t r = 0;
  // Two rows of a against four rows of b: 8 accumulators, 6 loads per 8 FMAs.
  for (; r + 2 <= rows && cols >= 4; r += 2) {
    const float* a0 = a + r * ld;
    const float* a1 = a0 + ld;
    float* o0 = out + r * out_stride;
    float* o1 = o0 + out_stride;
    std::int64_t t = 0;
    for (; t + 4 <= cols; t += 4) {
      const float* b0 = b + t * ld;
      const float* b1 = b0 + ld;
      const float* b2 = b1 + ld;
      const float* b3 = b2 + ld;
      __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps(), c02 = _mm256_setzero_ps(), c03 = _mm256_setzero_ps();
      __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps(), c12 = _mm256_setzero_ps(), c13 = _mm256_setzero_ps();
      for (std::int64_t q = 0; q < len; q += 8) {
        const __m256 x0 = _mm256_loadu_ps(a0 + q), x1 = _mm256_loadu_ps(a1 + q);
        const __m256 y0 = _mm256_loadu_ps(b0 + q), y1 = _mm256_loadu_ps(b1 + q);
        const __m256 y2 = _mm256_loadu_ps(b2 + q), y3 = _mm256_loadu_ps(b3 + q);
        c00 = _mm256_fmadd_ps(x0, y0, c00);
        c01 = _mm256_fmadd_ps(x0, y1, c01);
        c02 = _mm256_fmadd_ps(x0, y2, c02);
        c03 = _mm256_fmadd_ps(x0, y3, c03);
        c10 = _mm256_fmadd_ps(x1, y0, c10);
        c11 = _mm256_fmadd_ps(x1, y1, c11);
        c12 = _mm256_fmadd_ps(x1, y2, c12);
        c13 = _mm256_fmadd_ps(x1, y3, c13);
      }
      o0[t] = reduce8(c00), o0[t + 1] = reduce8(c01), o0[t + 2] = reduce8(c02), o0[t + 3] = reduce8(c03);
      o1[t] = reduce8(c10), o1[t + 1] = reduce8(c11), o1[t + 2] = reduce8(c12), o1[t + 3] = reduce8(c13);
    }
    for (; t < cols; ++t) {
      const float* bt = b + t * ld;
      __m256 c0 = _mm256_setzero_ps(), c1 = _mm256_setzero_ps();
      for (std::int64_t q = 0; q < len; q += 8) {
        const __m256 y = _mm256_loadu_ps(bt + q);
        c0 = _mm256_fmadd_ps(_mm256_loadu_ps(a0 + q), y, c0);
        c1 = _mm256_fmadd_ps(_mm256_loadu_ps(a1 + q), y, c1);
      }
      o0[t] = reduce8(c0);
      o1[t] = reduce8(c1);
    }
  }
  for (; r < rows; ++r) {
    const float* ar = a + r * ld;
    float* o = out + r * out_stride;
    std::int64_t t = 0;
    for (; t + 4 <= cols; t += 4) {
      const float* b0 = b + t * ld;
      const float* b1 = b0 + ld;
      const float* b2 = b1 + ld;
      const float* b3 = b2 + ld;
      __m256 c0 = _mm256_setzero_ps(), c1 = _mm256_setzero_ps(), c2 = _mm256_setzero_ps(), c3 = _mm256_setzero_ps();
      for (std::int64_t q = 0; q < len; q += 8) {
        const __m256 av = _mm256_loadu_ps(ar + q);
        c0 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b0 + q), c0);
        c1 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b1 + q), c1);
        c2 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b2 + q), c2);
        c3 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b3 + q), c3);
      }
      o[t] = reduce8(c0);
      o[t + 1] = reduce8(c1);
      o[t + 2] = reduce8(c2);
      o[t + 3] = reduce8(c3);
    }
    for (; t < cols; ++t) {
      const float* bt = b + t * ld;
      __m256 c = _mm256_setzero_ps();
      for (std::int64_t q = 0; q < len; q += 8) c = _mm256_fmadd_ps(_mm256_loadu_ps(ar + q), _mm256_loadu_ps(bt + q), c);
      o[t] = reduce8(c);
    }
  }
}

}  // namespace hal::cpu_ref
