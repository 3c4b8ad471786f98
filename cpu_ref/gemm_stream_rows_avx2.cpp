// Few-row streaming of B for the AVX2 kernel (gemm_stream_rows.h). Compiled
// with -mavx2 -mfma -mf16c; run only where cpu_features() reports AVX2+FMA.
#include <immintrin.h>

#include <cstdint>
#include <utility>

#include "cpu_ref/gemm_stream_rows.h"

namespace hal::cpu_ref {
namespace {

#ifndef HAL_ALWAYS_INLINE
#define HAL_ALWAYS_INLINE inline __attribute__((always_inline))
#endif

constexpr int kMr = kAvx2Mr;
constexpr int kNr = kAvx2Nr;
// The HAL_STREAM_* macros below are the kept constants; only
// bench/probes/decode_stream_variants.cpp sets them, compiling this file
// again per variant and timing the variants in turn (on the 2-core Zen 3 VM
// none beat these on every decode shape: bench/results/*-model-fused/).
// B rows per group: each accumulator is loaded and stored once per group.
#ifndef HAL_STREAM_ROW_GROUP
#define HAL_STREAM_ROW_GROUP 8
#endif
constexpr std::int64_t kRowGroup = HAL_STREAM_ROW_GROUP;
// Rows ahead that are prefetched, at the same columns (two groups): a
// tile's row segment is a few hundred bytes to a few KiB, too short for the
// hardware prefetcher to ramp up on each of the group's rows.
// (On the loaded 2-core VM, by CPU time per pass: 0, 4 and 8 groups ahead
// were slower than 2 on every decode shape on one thread; bench/probes/decode_gemm_stream.cpp.)
#ifndef HAL_STREAM_PREFETCH_GROUPS
#define HAL_STREAM_PREFETCH_GROUPS 2
#endif
#ifndef HAL_STREAM_PREFETCH_HINT
#define HAL_STREAM_PREFETCH_HINT _MM_HINT_T0
#endif
constexpr std::int64_t kPrefetchRows = HAL_STREAM_PREFETCH_GROUPS * kRowGroup;
// One row of A over B rows that lie back to back (the tile spans whole rows
// of B: a column-blocked weight, gemm_blocked.h) and are at most this many
// columns wide: B is read row by row, one sequential stream, the
// accumulators (at most 4 KiB) staying in L1, with the rows this far ahead
// prefetched. In groups of 8 the same rows were read 10-15% slower at 512
// and 768 columns; wider rows (2816, 4096 columns) stream faster in groups
// (2-core Zen 3 VM, bench/probes/decode_stream_blocked.cpp).
#ifndef HAL_STREAM_SEQUENTIAL_MAX_COLUMNS
#define HAL_STREAM_SEQUENTIAL_MAX_COLUMNS 1024
#endif
constexpr std::int64_t kSequentialMaxColumns = HAL_STREAM_SEQUENTIAL_MAX_COLUMNS;
constexpr std::int64_t kSequentialPrefetchRows = 16;

// One 16-column panel of a B row as two fp32 vectors. bf16: a 32-byte load
// widened exactly by unpacking with zero words (the bf16 bits become the high
// half), which leaves the columns in 128-bit-lane order: lo = {0..3, 8..11},
// hi = {4..7, 12..15}. f32: lo = 0..7, hi = 8..15.
template <DType T> HAL_ALWAYS_INLINE void load_panel(const char* p, __m256& lo, __m256& hi) {
  if constexpr (T == DType::f32) {
    lo = _mm256_loadu_ps(reinterpret_cast<const float*>(p));
    hi = _mm256_loadu_ps(reinterpret_cast<const float*>(p) + 8);
  } else {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i z = _mm256_setzero_si256();
    lo = _mm256_castsi256_ps(_mm256_unpacklo_epi16(z, v));
    hi = _mm256_castsi256_ps(_mm256_unpackhi_epi16(z, v));
  }
}

// The accumulators of one row of one panel (16 floats at c) in load_panel's column order.
template <DType T> HAL_ALWAYS_INLINE void load_acc(const float* c, __m256& lo, __m256& hi) {
  const __m256 m0 = _mm256_loadu_ps(c), m1 = _mm256_loadu_ps(c + 8);
  if constexpr (T == DType::f32) {
    lo = m0, hi = m1;
  } else {
    lo = _mm256_permute2f128_ps(m0, m1, 0x20);
    hi = _mm256_permute2f128_ps(m0, m1, 0x31);
  }
}

template <DType T> HAL_ALWAYS_INLINE void store_acc(float* c, __m256 lo, __m256 hi) {
  if constexpr (T == DType::f32) {
    _mm256_storeu_ps(c, lo), _mm256_storeu_ps(c + 8, hi);
  } else {
    _mm256_storeu_ps(c, _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(c + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
  }
}

// Rows [0, R) x P panels of acc (panel jp's row r at acc + jp * panel_floats
// + r * kNr) += the group's kn <= kRowGroup k steps: a at the group's first k
// (kMr floats per k), b at its first row and the chunk's first column.
// Accumulators stay in registers for the whole group: 2 * P * R of them, all
// independent chains, so the FMA latency is hidden for R = 1 too.
template <DType T, int R, int P, std::int64_t PrefetchRows = kPrefetchRows>
HAL_ALWAYS_INLINE void chunk(std::int64_t kn, const float* a, const char* b, std::int64_t ldb_bytes, float* acc,
                             std::int64_t panel_floats) {
  constexpr std::int64_t esize = T == DType::f32 ? 4 : 2;
  constexpr std::int64_t span = P * kNr * esize;  // bytes of one B row in the chunk
  __m256 lo[R][P], hi[R][P];
  [&]<int... I>(std::integer_sequence<int, I...>) {
    ((load_acc<T>(acc + (I % P) * panel_floats + (I / P) * kNr, lo[I / P][I % P], hi[I / P][I % P])), ...);
  }(std::make_integer_sequence<int, R * P>{});
  for (std::int64_t g = 0; g < kn; ++g) {
    const char* row = b + g * ldb_bytes;
    // Past B's last row near its end: formed as an integer (no out-of-bounds
    // pointer arithmetic), and a prefetch never faults.
    const auto ahead = reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(row) +
                                                     static_cast<std::uintptr_t>(PrefetchRows * ldb_bytes));
    for (std::int64_t off = 0; off < span; off += 64) _mm_prefetch(ahead + off, HAL_STREAM_PREFETCH_HINT);
    const float* ak = a + g * kMr;
    [&]<int... J>(std::integer_sequence<int, J...>) {
      auto panel = [&]<int p>(std::integral_constant<int, p>) {
        __m256 b_lo, b_hi;
        load_panel<T>(row + p * kNr * esize, b_lo, b_hi);
        [&]<int... Rr>(std::integer_sequence<int, Rr...>) {
          ((lo[Rr][p] = _mm256_fmadd_ps(_mm256_broadcast_ss(ak + Rr), b_lo, lo[Rr][p]),
            hi[Rr][p] = _mm256_fmadd_ps(_mm256_broadcast_ss(ak + Rr), b_hi, hi[Rr][p])),
           ...);
        }(std::make_integer_sequence<int, R>{});
      };
      (panel(std::integral_constant<int, J>{}), ...);
    }(std::make_integer_sequence<int, P>{});
  }
  [&]<int... I>(std::integer_sequence<int, I...>) {
    ((store_acc<T>(acc + (I % P) * panel_floats + (I / P) * kNr, lo[I / P][I % P], hi[I / P][I % P])), ...);
  }(std::make_integer_sequence<int, R * P>{});
}

// Panels per chunk for R rows: 2 * P * R accumulators, at most 12 (with two
// B vectors and a broadcast, 15 of the 16 ymm registers).
#ifndef HAL_STREAM_PANELS_ONE_ROW
#define HAL_STREAM_PANELS_ONE_ROW 4
#endif
template <int R> constexpr int kPanels = R == 1 ? HAL_STREAM_PANELS_ONE_ROW : R == 2 ? 2 : 1;
static_assert(2 * HAL_STREAM_PANELS_ONE_ROW <= 12, "one row's accumulators must leave 3 of the 16 ymm registers");

// B's rows [0, kc) in groups of G rows, each group chunk by chunk (every
// chunk's accumulators loaded and stored once per group).
template <DType T, int R, std::int64_t G, std::int64_t PrefetchRows>
void stream_rows_in_groups(std::int64_t kc, const float* a, const void* b, std::int64_t ldb, std::int64_t panels,
                           float* acc, std::int64_t acc_m_panels) {
  constexpr int P = kPanels<R>;
  constexpr std::int64_t esize = T == DType::f32 ? 4 : 2;
  const std::int64_t ldb_bytes = ldb * esize, panel_floats = acc_m_panels * kMr * kNr;
  const char* b0 = static_cast<const char*>(b);
  for (std::int64_t k0 = 0; k0 < kc; k0 += G) {
    const std::int64_t kn = k0 + G < kc ? G : kc - k0;
    const float* ak = a + k0 * kMr;
    const char* bk = b0 + k0 * ldb_bytes;
    std::int64_t jp = 0;
    for (; jp + P <= panels; jp += P)
      chunk<T, R, P, PrefetchRows>(kn, ak, bk + jp * kNr * esize, ldb_bytes, acc + jp * panel_floats, panel_floats);
    for (; jp < panels; ++jp)
      chunk<T, R, 1, PrefetchRows>(kn, ak, bk + jp * kNr * esize, ldb_bytes, acc + jp * panel_floats, panel_floats);
  }
}

template <DType T, int R>
void stream_rows(std::int64_t kc, const float* a, const void* b, std::int64_t ldb, std::int64_t panels, float* acc,
                 std::int64_t acc_m_panels) {
  // The order changes when each accumulator is loaded and stored, never its
  // chain (one fused multiply-add per k, ascending): the same bits.
  if (R == 1 && ldb == panels * kNr && ldb <= kSequentialMaxColumns)
    return stream_rows_in_groups<T, R, 1, kSequentialPrefetchRows>(kc, a, b, ldb, panels, acc, acc_m_panels);
  stream_rows_in_groups<T, R, kRowGroup, kPrefetchRows>(kc, a, b, ldb, panels, acc, acc_m_panels);
}

template <DType T>
void stream_rows_of(std::int64_t kc, const float* a, std::int64_t rows, const void* b, std::int64_t ldb,
                    std::int64_t panels, float* acc, std::int64_t acc_m_panels) {
  switch (rows) {
    case 1: return stream_rows<T, 1>(kc, a, b, ldb, panels, acc, acc_m_panels);
    case 2: return stream_rows<T, 2>(kc, a, b, ldb, panels, acc, acc_m_panels);
    case 3: return stream_rows<T, 3>(kc, a, b, ldb, panels, acc, acc_m_panels);
    case 4: return stream_rows<T, 4>(kc, a, b, ldb, panels, acc, acc_m_panels);
    case 5: return stream_rows<T, 5>(kc, a, b, ldb, panels, acc, acc_m_panels);
    default: return stream_rows<T, 6>(kc, a, b, ldb, panels, acc, acc_m_panels);
  }
}

}  // namespace

void stream_b_rows_avx2(std::int64_t kc, const float* a, std::int64_t rows, const void* b, DType b_dtype,
                        std::int64_t ldb, std::int64_t panels, float* acc, std::int64_t acc_m_panels) {
  if (b_dtype == DType::bf16) stream_rows_of<DType::bf16>(kc, a, rows, b, ldb, panels, acc, acc_m_panels);
  else stream_rows_of<DType::f32>(kc, a, rows, b, ldb, panels, acc, acc_m_panels);
}

}  // namespace hal::cpu_ref
