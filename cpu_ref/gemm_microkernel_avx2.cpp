// AVX2/FMA micro-kernel, 6 x 16: 12 ymm accumulators, 2 ymm for a row of B and
// one broadcast of A (15 of the 16 ymm registers). Compiled with -mavx2 -mfma -mf16c
// (like every *_avx2.cpp); run only where cpu_features() reports AVX2+FMA+F16C.
#include <immintrin.h>

#include <cstdint>

#include "cpu_ref/gemm_microkernel.h"
#include "cpu_ref/gemm_stream_b.h"
#include "cpu_ref/gemm_stream_rows.h"
#include "cpu_ref/vector_avx2.h"  // load8_of: B widened exactly (a packed panel is f32)

namespace hal::cpu_ref {
namespace {

using avx2::load8_of;

constexpr int kMr = kAvx2Mr;
constexpr int kNr = kAvx2Nr;

// Rows [0, R) of acc (6 x 16) += a (kc x 6) * b (kc rows of 16, ldb elements
// apart); the other rows are neither read nor written.
template <DType T, int R = kMr>
HAL_ALWAYS_INLINE void update_tile(std::int64_t kc, const float* a, const void* b, std::int64_t ldb, float* acc) {
  // Named accumulators, not an array: GCC keeps an array of vectors in memory
  // and stores it back every iteration.
  __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
#define HAL_ROW(r, lo, hi)                                                  \
  if constexpr (R > r) {                                                    \
    lo = _mm256_loadu_ps(acc + r * kNr), hi = _mm256_loadu_ps(acc + r * kNr + 8); \
  }
  HAL_ROW(0, c00, c01) HAL_ROW(1, c10, c11) HAL_ROW(2, c20, c21) HAL_ROW(3, c30, c31) HAL_ROW(4, c40, c41)
  HAL_ROW(5, c50, c51)
#undef HAL_ROW
  for (std::int64_t k = 0; k < kc; ++k) {
    const __m256 b0 = load8_of<T>(b, k * ldb);
    const __m256 b1 = load8_of<T>(b, k * ldb + 8);
    const float* ak = a + k * kMr;
#define HAL_ROW(r, lo, hi)                                                                       \
  if constexpr (R > r) {                                                                         \
    const __m256 ar = _mm256_set1_ps(ak[r]);                                                     \
    lo = _mm256_fmadd_ps(ar, b0, lo);                                                            \
    hi = _mm256_fmadd_ps(ar, b1, hi);                                                            \
  }
    HAL_ROW(0, c00, c01) HAL_ROW(1, c10, c11) HAL_ROW(2, c20, c21) HAL_ROW(3, c30, c31) HAL_ROW(4, c40, c41)
    HAL_ROW(5, c50, c51)
#undef HAL_ROW
  }
#define HAL_ROW(r, lo, hi)                                                 \
  if constexpr (R > r) {                                                   \
    _mm256_storeu_ps(acc + r * kNr, lo);                                   \
    _mm256_storeu_ps(acc + r * kNr + 8, hi);                               \
  }
  HAL_ROW(0, c00, c01) HAL_ROW(1, c10, c11) HAL_ROW(2, c20, c21) HAL_ROW(3, c30, c31) HAL_ROW(4, c40, c41)
  HAL_ROW(5, c50, c51)
#undef HAL_ROW
}

void microkernel_avx2(std::int64_t kc, const void* a_panel, const void* b_panel, float* acc) {
  update_tile<DType::f32>(kc, static_cast<const float*>(a_panel), b_panel, kNr, acc);
}

// GemmStreamBFn: the micro-kernel's tile update on B in place, in
// stream_b_tiles's order; the last A panel computes its real rows only (a
// decode step is one row, not six).
template <DType T>
void stream_b_avx2(std::int64_t kc, const float* a, std::int64_t a_stride, std::int64_t rows, const void* b,
                   std::int64_t ldb, std::int64_t panels, float* acc, std::int64_t acc_m_panels) {
  stream_b_tiles<kMr, kNr>(kc, a, a_stride, rows, b, T == DType::f32 ? 4 : 2, ldb, panels, acc, acc_m_panels,
                           [ldb](std::int64_t kn, const float* ap, const void* bk, float* c, std::int64_t tile_rows) {
                             switch (tile_rows) {
                               case 1: return update_tile<T, 1>(kn, ap, bk, ldb, c);
                               case 2: return update_tile<T, 2>(kn, ap, bk, ldb, c);
                               case 3: return update_tile<T, 3>(kn, ap, bk, ldb, c);
                               case 4: return update_tile<T, 4>(kn, ap, bk, ldb, c);
                               case 5: return update_tile<T, 5>(kn, ap, bk, ldb, c);
                               default: return update_tile<T>(kn, ap, bk, ldb, c);
                             }
                           });
}

void stream_b(std::int64_t kc, const float* a, std::int64_t a_stride, std::int64_t rows, const void* b, DType b_dtype,
              std::int64_t ldb, std::int64_t panels, float* acc, std::int64_t acc_m_panels) {
  // One A panel (decode): the few-row streaming, the same bits.
  if (rows <= kMr) return stream_b_rows_avx2(kc, a, rows, b, b_dtype, ldb, panels, acc, acc_m_panels);
  if (b_dtype == DType::bf16) stream_b_avx2<DType::bf16>(kc, a, a_stride, rows, b, ldb, panels, acc, acc_m_panels);
  else stream_b_avx2<DType::f32>(kc, a, a_stride, rows, b, ldb, panels, acc, acc_m_panels);
}

}  // namespace

GemmMicroKernel gemm_microkernel_avx2() {
  return {"avx2_6x16", kMr, kNr, &microkernel_avx2, GemmPacking::fp32, &stream_b, /*fused=*/true};
}

}  // namespace hal::cpu_ref
