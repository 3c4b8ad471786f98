// AVX-512 BF16 micro-kernel, 12 x 32, bf16_pairs packing (gemm_microkernel.h):
// per pair step, two 16-lane rows of B pairs and one broadcast A pair per row
// feed vdpbf16ps, which does acc += a_odd * b_odd + a_even * b_even in the
// order and with the flushing the bf16_pairs contract states. 24 zmm
// accumulators, as the fp32 AVX-512 kernel. Compiled with -mavx512bf16 only
// in this file; run only where cpu_features() reports AVX-512 and AVX-512 BF16.
//
// Run and measured on a 2-core AMD EPYC with AVX-512 BF16
// (bench/results/cpu-epyc-2core-2026-12-02-*-gemm-bf16/, -model-decode/); the
// pair packing and the driver are also tested on every CPU through the
// emulated kernel (gemm_microkernel_bf16_pairs_emulated.cpp), which follows
// the same contract. Decode tiles stream B in place (stream_b_pairs): packing
// B for one row cost a full extra pass over every weight.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "cpu_ref/avx512_stream_b.h"
#include "cpu_ref/gemm_microkernel.h"

namespace hal::cpu_ref {
namespace {

constexpr int kMr = 12;
constexpr int kNr = 32;

inline __m512 dot_pairs(__m512 acc, __m512i a, __m512i b) {
  return _mm512_dpbf16_ps(acc, reinterpret_cast<__m512bh>(a), reinterpret_cast<__m512bh>(b));
}

void microkernel_avx512bf16(std::int64_t kc, const void* a_panel, const void* b_panel, float* acc) {
  const auto* a = static_cast<const std::int32_t*>(a_panel);
  const auto* b = static_cast<const std::int32_t*>(b_panel);
  const std::int64_t pairs = (kc + 1) / 2;
  // Named accumulators, not an array: GCC keeps an array of vectors in memory.
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
  // The driver's next call updates the next tile of the accumulator
  // (contiguous: the next MR row panel). The tiles of a task (rows x NC
  // floats, 4 MiB at 4096^3) do not stay in L2, and a pair call is short
  // (half an fp32 one), so waiting for those 24 lines at the start of every
  // call cost about a fifth of the run (2048^3, one thread, 2-core EPYC):
  // asked for now, they arrive while this call runs. A prefetch past the
  // buffer's end is harmless.
  for (int line = 0; line < kMr * kNr / 16; ++line)
    _mm_prefetch(reinterpret_cast<const char*>(acc + kMr * kNr + 16 * line), _MM_HINT_T0);
  for (std::int64_t p = 0; p < pairs; ++p) {
    const __m512i b0 = _mm512_loadu_si512(b + p * kNr);
    const __m512i b1 = _mm512_loadu_si512(b + p * kNr + 16);
    const std::int32_t* ap = a + p * kMr;
    { const __m512i ar = _mm512_set1_epi32(ap[0]); c00 = dot_pairs(c00, ar, b0); c01 = dot_pairs(c01, ar, b1); }
    { const __m512i ar = _mm512_set1_epi32(ap[1]); c10 = dot_pairs(c10, ar, b0); c11 = dot_pairs(c11, ar, b1); }
    { const __m512i ar = _mm512_set1_epi32(ap[2]); c20 = dot_pairs(c20, ar, b0); c21 = dot_pairs(c21, ar, b1); }
    { const __m512i ar = _mm512_set1_epi32(ap[3]); c30 = dot_pairs(c30, ar, b0); c31 = dot_pairs(c31, ar, b1); }
    { const __m512i ar = _mm512_set1_epi32(ap[4]); c40 = dot_pairs(c40, ar, b0); c41 = dot_pairs(c41, ar, b1); }
    { const __m512i ar = _mm512_set1_epi32(ap[5]); c50 = dot_pairs(c50, ar, b0); c51 = dot_pairs(c51, ar, b1); }
    { const __m512i ar = _mm512_set1_epi32(ap[6]); c60 = dot_pairs(c60, ar, b0); c61 = dot_pairs(c61, ar, b1); }
    { const __m512i ar = _mm512_set1_epi32(ap[7]); c70 = dot_pairs(c70, ar, b0); c71 = dot_pairs(c71, ar, b1); }
    { const __m512i ar = _mm512_set1_epi32(ap[8]); c80 = dot_pairs(c80, ar, b0); c81 = dot_pairs(c81, ar, b1); }
    { const __m512i ar = _mm512_set1_epi32(ap[9]); c90 = dot_pairs(c90, ar, b0); c91 = dot_pairs(c91, ar, b1); }
    { const __m512i ar = _mm512_set1_epi32(ap[10]); c100 = dot_pairs(c100, ar, b0); c101 = dot_pairs(c101, ar, b1); }
    { const __m512i ar = _mm512_set1_epi32(ap[11]); c110 = dot_pairs(c110, ar, b0); c111 = dot_pairs(c111, ar, b1); }
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

// Rows [0, R) of one 12 x 32 accumulator tile += `pairs` pair steps of A's
// packed pair words `a` (kMr per pair) with B read in place: rows 2p and
// 2p + 1 (the second a zero pad when `odd_tail` and p is the last pair) of b,
// ldb elements apart, interleaved into pair words in registers. The same
// vdpbf16ps on the same words, in the same order, as microkernel_avx512bf16.
template <int R>
void stream_pairs_tile(std::int64_t pairs, bool odd_tail, const std::int32_t* a, const std::uint16_t* b,
                       std::int64_t ldb, float* acc) {
  const __m512i lo_idx = _mm512_load_si512(stream_b_avx512::kPairLo);
  const __m512i hi_idx = _mm512_load_si512(stream_b_avx512::kPairHi);
  __m512 c0[R], c1[R];
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) c0[r] = _mm512_loadu_ps(acc + r * kNr), c1[r] = _mm512_loadu_ps(acc + r * kNr + 16);
  for (std::int64_t p = 0; p < pairs; ++p) {
    stream_b_avx512::prefetch_rows_ahead(b + 2 * p * ldb, ldb);
    stream_b_avx512::prefetch_rows_ahead(b + (2 * p + 1) * ldb, ldb);
    const __m512i even = _mm512_loadu_si512(b + 2 * p * ldb);
    const __m512i odd = odd_tail && p + 1 == pairs ? _mm512_setzero_si512() : _mm512_loadu_si512(b + (2 * p + 1) * ldb);
    const __m512i b0 = _mm512_permutex2var_epi16(even, lo_idx, odd);
    const __m512i b1 = _mm512_permutex2var_epi16(even, hi_idx, odd);
    const std::int32_t* ap = a + p * kMr;
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      const __m512i ar = _mm512_set1_epi32(ap[r]);
      c0[r] = dot_pairs(c0[r], ar, b0);
      c1[r] = dot_pairs(c1[r], ar, b1);
    }
  }
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) _mm512_storeu_ps(acc + r * kNr, c0[r]), _mm512_storeu_ps(acc + r * kNr + 16, c1[r]);
}

template <int R = kMr>
void stream_pairs_rows(std::int64_t rows, std::int64_t pairs, bool odd_tail, const std::int32_t* a,
                       const std::uint16_t* b, std::int64_t ldb, float* acc) {
  if constexpr (R > 1)
    if (rows < R) return stream_pairs_rows<R - 1>(rows, pairs, odd_tail, a, b, ldb, acc);
  stream_pairs_tile<R>(pairs, odd_tail, a, b, ldb, acc);
}

// GemmStreamBFn for the bf16_pairs packing: `a` holds pack_a's pair words
// (a_stride words per A panel), B is bf16 [kc rows, ldb]. Walks B a group of
// kStreamPairsGroup pairs at a time across all column panels, like
// stream_b_tiles (gemm_stream_b.h), so each group's rows are read once from
// memory; the last A panel computes its real rows only.
constexpr std::int64_t kStreamPairsGroup = 8;  // 16 rows of B

void stream_b_pairs(std::int64_t kc, const float* a_words, std::int64_t a_stride, std::int64_t rows, const void* b,
                    DType b_dtype, std::int64_t ldb, std::int64_t panels, float* acc, std::int64_t acc_m_panels) {
  (void)b_dtype;  // bf16: the driver streams B for this packing only when A and B are both bf16
  const auto* a = reinterpret_cast<const std::int32_t*>(a_words);
  const auto* bb = static_cast<const std::uint16_t*>(b);
  const std::int64_t total_pairs = (kc + 1) / 2, a_panels = (rows + kMr - 1) / kMr;
  for (std::int64_t p0 = 0; p0 < total_pairs; p0 += kStreamPairsGroup) {
    const std::int64_t pn = std::min(kStreamPairsGroup, total_pairs - p0);
    const bool odd_tail = (kc % 2 == 1) && p0 + pn == total_pairs;
    for (std::int64_t jp = 0; jp < panels; ++jp) {
      const std::uint16_t* bk = bb + 2 * p0 * ldb + jp * kNr;
      for (std::int64_t ip = 0; ip < a_panels; ++ip)
        stream_pairs_rows(rows - ip * kMr, pn, odd_tail, a + ip * a_stride + p0 * kMr, bk, ldb,
                          acc + (jp * acc_m_panels + ip) * kMr * kNr);
    }
  }
}

}  // namespace

GemmMicroKernel gemm_microkernel_avx512bf16() {
  return {"avx512bf16_12x32", kMr, kNr, &microkernel_avx512bf16, GemmPacking::bf16_pairs, &stream_b_pairs, false,
          gemm_pack_pairs_avx512()};
}

}  // namespace hal::cpu_ref
