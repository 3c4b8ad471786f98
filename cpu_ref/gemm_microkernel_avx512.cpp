// AVX-512 micro-kernel, 12 x 32: 24 zmm accumulators, 2 zmm for a row of B and
// one broadcast of A (27 of the 32 zmm registers). Compiled with -mavx512f...
// only in this file; run only where cpu_features() reports AVX-512.
#include <immintrin.h>

#include "cpu_ref/gemm_microkernel.h"

namespace hal::cpu_ref {
namespace {

constexpr int kMr = 12;
constexpr int kNr = 32;

void microkernel_avx512(std::int64_t kc, const void* a_panel, const void* b_panel, float* acc) {
  const float* a = static_cast<const float*>(a_panel);
  const float* b = static_cast<const float*>(b_panel);
  // Named accumulators, not an array: GCC keeps an array of vectors in memory
  // and stores it back every iteration.
  __m512 c00 = _mm512_loadu_ps(acc + 0 * kNr), c01 = _mm512_loadu_ps(acc + 0 * kNr + 16);
  __m512 c10 = _mm512_loadu_ps(acc + 1 * kNr), c11 = _mm512_loadu_ps(acc + 1 * kNr + 16);
  __m512 c20 = _mm512_loadu_ps(acc + 2 * kNr), c21 = _mm512_loadu_ps(acc + 2 * kNr + 16);
  __m512 c30 = _mm512_loadu_ps(acc + 3 * kNr), c31 = _mm512_loadu_ps(acc + 3 * kNr + 16);
  __m512 c40 = _mm512_loadu_ps(acc + 4 * kNr), c41 = _mm512_loadu_ps(acc + 4 * kNr + 16);
  __m512 c50 = _mm512_loadu_ps(acc + 5 * kNr), c51 = _mm512_loadu_ps(acc + 5 * kNr + 16);
  __m512 c60 = _mm512_loadu_ps(acc + 6 * kNr), c61 = _mm512_loadu_ps(acc + 6 * kNr + 16);
  __m512 c70 = _mm512_loadu_ps(acc + 7 * kNr), c71 = _mm512_loadu_ps(acc + 7 * kNr + 16);
  __m512 c80 = _mm512_loadu_ps(acc + 8 * kNr), c81 = _mm512_loadu_ps(acc + 8 * kNr + 16);
  __m512 c90 = _mm512_loadu_ps(acc + 9 * kNr), c91 = _mm512_loadu_ps(acc + 9 * kNr + 16);
  __m512 c100 = _mm512_loadu_ps(acc + 10 * kNr), c101 = _mm512_loadu_ps(acc + 10 * kNr + 16);
  __m512 c110 = _mm512_loadu_ps(acc + 11 * kNr), c111 = _mm512_loadu_ps(acc + 11 * kNr + 16);
  for (std::int64_t k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_loadu_ps(b + k * kNr);
    const __m512 b1 = _mm512_loadu_ps(b + k * kNr + 16);
    const float* ak = a + k * kMr;
    { const __m512 ar = _mm512_set1_ps(ak[0]); c00 = _mm512_fmadd_ps(ar, b0, c00); c01 = _mm512_fmadd_ps(ar, b1, c01); }
    { const __m512 ar = _mm512_set1_ps(ak[1]); c10 = _mm512_fmadd_ps(ar, b0, c10); c11 = _mm512_fmadd_ps(ar, b1, c11); }
    { const __m512 ar = _mm512_set1_ps(ak[2]); c20 = _mm512_fmadd_ps(ar, b0, c20); c21 = _mm512_fmadd_ps(ar, b1, c21); }
    { const __m512 ar = _mm512_set1_ps(ak[3]); c30 = _mm512_fmadd_ps(ar, b0, c30); c31 = _mm512_fmadd_ps(ar, b1, c31); }
    { const __m512 ar = _mm512_set1_ps(ak[4]); c40 = _mm512_fmadd_ps(ar, b0, c40); c41 = _mm512_fmadd_ps(ar, b1, c41); }
    { const __m512 ar = _mm512_set1_ps(ak[5]); c50 = _mm512_fmadd_ps(ar, b0, c50); c51 = _mm512_fmadd_ps(ar, b1, c51); }
    { const __m512 ar = _mm512_set1_ps(ak[6]); c60 = _mm512_fmadd_ps(ar, b0, c60); c61 = _mm512_fmadd_ps(ar, b1, c61); }
    { const __m512 ar = _mm512_set1_ps(ak[7]); c70 = _mm512_fmadd_ps(ar, b0, c70); c71 = _mm512_fmadd_ps(ar, b1, c71); }
    { const __m512 ar = _mm512_set1_ps(ak[8]); c80 = _mm512_fmadd_ps(ar, b0, c80); c81 = _mm512_fmadd_ps(ar, b1, c81); }
    { const __m512 ar = _mm512_set1_ps(ak[9]); c90 = _mm512_fmadd_ps(ar, b0, c90); c91 = _mm512_fmadd_ps(ar, b1, c91); }
    { const __m512 ar = _mm512_set1_ps(ak[10]); c100 = _mm512_fmadd_ps(ar, b0, c100); c101 = _mm512_fmadd_ps(ar, b1, c101); }
    { const __m512 ar = _mm512_set1_ps(ak[11]); c110 = _mm512_fmadd_ps(ar, b0, c110); c111 = _mm512_fmadd_ps(ar, b1, c111); }
  }
  _mm512_storeu_ps(acc + 0 * kNr, c00);
  _mm512_storeu_ps(acc + 0 * kNr + 16, c01);
  _mm512_storeu_ps(acc + 1 * kNr, c10);
  _mm512_storeu_ps(acc + 1 * kNr + 16, c11);
  _mm512_storeu_ps(acc + 2 * kNr, c20);
  _mm512_storeu_ps(acc + 2 * kNr + 16, c21);
  _mm512_storeu_ps(acc + 3 * kNr, c30);
  _mm512_storeu_ps(acc + 3 * kNr + 16, c31);
  _mm512_storeu_ps(acc + 4 * kNr, c40);
  _mm512_storeu_ps(acc + 4 * kNr + 16, c41);
  _mm512_storeu_ps(acc + 5 * kNr, c50);
  _mm512_storeu_ps(acc + 5 * kNr + 16, c51);
  _mm512_storeu_ps(acc + 6 * kNr, c60);
  _mm512_storeu_ps(acc + 6 * kNr + 16, c61);
  _mm512_storeu_ps(acc + 7 * kNr, c70);
  _mm512_storeu_ps(acc + 7 * kNr + 16, c71);
  _mm512_storeu_ps(acc + 8 * kNr, c80);
  _mm512_storeu_ps(acc + 8 * kNr + 16, c81);
  _mm512_storeu_ps(acc + 9 * kNr, c90);
  _mm512_storeu_ps(acc + 9 * kNr + 16, c91);
  _mm512_storeu_ps(acc + 10 * kNr, c100);
  _mm512_storeu_ps(acc + 10 * kNr + 16, c101);
  _mm512_storeu_ps(acc + 11 * kNr, c110);
  _mm512_storeu_ps(acc + 11 * kNr + 16, c111);
}

}  // namespace

// No stream_b of its own: decode tiles go through the AVX2 kernel's (the same
// fused step, hence the same bits; decode_kernel_for).
GemmMicroKernel gemm_microkernel_avx512() {
  return {"avx512_12x32", kMr, kNr, &microkernel_avx512, GemmPacking::fp32, nullptr, /*fused=*/true};
}

}  // namespace hal::cpu_ref
