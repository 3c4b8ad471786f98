// AVX-512 BF16 fp8 block kernel, 12 x 32 (cpu_ref/gemm_fp8_kernel.h): the
// GEMM's bf16-pair register tile (24 zmm block sums, two 16-lane rows of B
// pairs, one broadcast A pair per row into vdpbf16ps), then the promotion
// acc += row_scale * S. Every fp8 value is exactly a bf16 and vdpbf16ps adds
// the odd product, then the even one, each rounded: the contract's order.
// Compiled with -mavx512bf16 only in this file; run only where cpu_features()
// reports AVX-512 and AVX-512 BF16.
#include <immintrin.h>

#include <cstdint>

#include "cpu_ref/avx512_transpose16.h"
#include "cpu_ref/gemm_fp8_kernel.h"
#include "cpu_ref/gemm_fp8_pack.h"
#include "hal/op.h"  // kFp8BlockSize

namespace hal::cpu_ref {
namespace {

constexpr int kMr = 12;
constexpr int kNr = 32;

inline __attribute__((always_inline)) __m512 dot_pairs(__m512 acc, __m512i a, __m512i b) {
  return _mm512_dpbf16_ps(acc, reinterpret_cast<__m512bh>(a), reinterpret_cast<__m512bh>(b));
}

inline __attribute__((always_inline)) void promote_row(float* acc, float scale, __m512 lo, __m512 hi) {
  const __m512 s = _mm512_set1_ps(scale);
  _mm512_storeu_ps(acc, _mm512_add_ps(_mm512_loadu_ps(acc), _mm512_mul_ps(s, lo)));
  _mm512_storeu_ps(acc + 16, _mm512_add_ps(_mm512_loadu_ps(acc + 16), _mm512_mul_ps(s, hi)));
}

void block_avx512bf16(std::int64_t kc, const void* a_panel, const void* b_panel, const float* row_scale, float* acc) {
  const auto* a = static_cast<const std::int32_t*>(a_panel);
  const auto* b = static_cast<const std::int32_t*>(b_panel);
  const std::int64_t pairs = (kc + 1) / 2;
  // Named accumulators, not an array: GCC keeps an array of vectors in memory.
  __m512 c00 = _mm512_setzero_ps(), c01 = _mm512_setzero_ps(), c10 = _mm512_setzero_ps(), c11 = _mm512_setzero_ps();
  __m512 c20 = _mm512_setzero_ps(), c21 = _mm512_setzero_ps(), c30 = _mm512_setzero_ps(), c31 = _mm512_setzero_ps();
  __m512 c40 = _mm512_setzero_ps(), c41 = _mm512_setzero_ps(), c50 = _mm512_setzero_ps(), c51 = _mm512_setzero_ps();
  __m512 c60 = _mm512_setzero_ps(), c61 = _mm512_setzero_ps(), c70 = _mm512_setzero_ps(), c71 = _mm512_setzero_ps();
  __m512 c80 = _mm512_setzero_ps(), c81 = _mm512_setzero_ps(), c90 = _mm512_setzero_ps(), c91 = _mm512_setzero_ps();
  __m512 c100 = _mm512_setzero_ps(), c101 = _mm512_setzero_ps(), c110 = _mm512_setzero_ps(), c111 = _mm512_setzero_ps();
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
  promote_row(acc + 0 * kNr, row_scale[0], c00, c01);
  promote_row(acc + 1 * kNr, row_scale[1], c10, c11);
  promote_row(acc + 2 * kNr, row_scale[2], c20, c21);
  promote_row(acc + 3 * kNr, row_scale[3], c30, c31);
  promote_row(acc + 4 * kNr, row_scale[4], c40, c41);
  promote_row(acc + 5 * kNr, row_scale[5], c50, c51);
  promote_row(acc + 6 * kNr, row_scale[6], c60, c61);
  promote_row(acc + 7 * kNr, row_scale[7], c70, c71);
  promote_row(acc + 8 * kNr, row_scale[8], c80, c81);
  promote_row(acc + 9 * kNr, row_scale[9], c90, c91);
  promote_row(acc + 10 * kNr, row_scale[10], c100, c101);
  promote_row(acc + 11 * kNr, row_scale[11], c110, c111);
}

// The bf16-pair packing in vector registers, 16 lines at a time: each line's
// kc bytes (two zmm, zero past kc) go through the format's table as two byte
// lookups (vpermi2b, AVX-512 VBMI: the bf16's low and high bytes), are
// interleaved into pair words, and a 16 x 16 transpose of words turns 16
// lines' words for one pair into one (masked) store. The words are those of
// pack_fp8_panels; element by element that costs about a table load per byte
// and a scattered store per word, more than the kernel itself at M = 64.
#define HAL_VBMI __attribute__((target("avx512vbmi")))

struct ByteTable {
  __m512i t0, t1, t2, t3;  // entries 0-63, 64-127, 128-191, 192-255
};

HAL_VBMI inline __m512i lookup(const ByteTable& t, __m512i x) {
  const __m512i low = _mm512_permutex2var_epi8(t.t0, x, t.t1), high = _mm512_permutex2var_epi8(t.t2, x, t.t3);
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), low, high);
}

// GCC 12 reports the _mm512_undefined_* pass-through inside its unpack and
// shuffle intrinsics as maybe-uninitialized (a false positive: unmasked forms
// never read it).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

inline __mmask64 first_bytes(std::int64_t n) {
  return n >= 64 ? ~__mmask64{0} : n <= 0 ? __mmask64{0} : (__mmask64{1} << n) - 1;
}

HAL_VBMI void pack_pairs_avx512(const Fp8Lines& lines, std::int64_t extent, std::int64_t kc, int width,
                                const Fp8Table& table, void* dst) {
  const ByteTable low{_mm512_loadu_si512(table.bf16_low.data()), _mm512_loadu_si512(table.bf16_low.data() + 64),
                      _mm512_loadu_si512(table.bf16_low.data() + 128), _mm512_loadu_si512(table.bf16_low.data() + 192)};
  const ByteTable high{_mm512_loadu_si512(table.bf16_high.data()), _mm512_loadu_si512(table.bf16_high.data() + 64),
                       _mm512_loadu_si512(table.bf16_high.data() + 128), _mm512_loadu_si512(table.bf16_high.data() + 192)};
  const std::int64_t pairs = (kc + 1) / 2, panel = fp8_panel_words(GemmPacking::bf16_pairs, kc, width);
  const __mmask64 m0 = first_bytes(kc), m1 = first_bytes(kc - 64);
  for (std::int64_t p0 = 0; p0 < extent; p0 += width) {
    auto* d = static_cast<std::uint32_t*>(dst) + (p0 / width) * panel;
    const std::int64_t valid = extent - p0 < width ? extent - p0 : width;
    for (int g = 0; g < width; g += 16) {
      const int group = width - g < 16 ? width - g : 16;
      const auto store_mask = static_cast<__mmask16>((1u << group) - 1u);
      // words[q][l]: line l's pair words, zmm q of 4 (pairs in the order the
      // byte interleave leaves them; see pair_of below).
      __m512i words[4][16];
      for (int l = 0; l < 16; ++l) {
        if (g + l >= valid || l >= group) {
          for (auto& q : words) q[l] = _mm512_setzero_si512();
          continue;
        }
        const std::uint8_t* src = lines.base + (p0 + g + l) * lines.line_stride;
        // The line's next K block (the next pack of these lines): the lines
        // are separate streams too short for the hardware prefetcher.
        __builtin_prefetch(src + kFp8BlockSize), __builtin_prefetch(src + kFp8BlockSize + 64);
        const __m512i x0 = _mm512_maskz_loadu_epi8(m0, src), x1 = _mm512_maskz_loadu_epi8(m1, src + 64);
        const __m512i lo0 = lookup(low, x0), hi0 = lookup(high, x0), lo1 = lookup(low, x1), hi1 = lookup(high, x1);
        words[0][l] = _mm512_unpacklo_epi8(lo0, hi0);
        words[1][l] = _mm512_unpackhi_epi8(lo0, hi0);
        words[2][l] = _mm512_unpacklo_epi8(lo1, hi1);
        words[3][l] = _mm512_unpackhi_epi8(lo1, hi1);
      }
      for (int q = 0; q < 4; ++q) {
        transpose16(words[q]);
        // unpacklo/hi_epi8 work per 128-bit lane: word t of zmm q is pair
        // 32 (q / 2) + 8 (t / 4) + 4 (q % 2) + t % 4.
        for (int t = 0; t < 16; ++t) {
          const std::int64_t pair = 32 * (q / 2) + 8 * (t / 4) + 4 * (q % 2) + t % 4;
          if (pair < pairs) _mm512_mask_storeu_epi32(d + pair * width + g, store_mask, words[q][t]);
        }
      }
    }
  }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

bool has_vbmi() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vbmi");
}

}  // namespace

Fp8BlockKernel fp8_block_kernel_avx512bf16() {
  static const bool vbmi = has_vbmi();
  return {"avx512bf16_12x32", kMr, kNr, GemmPacking::bf16_pairs, &block_avx512bf16, vbmi ? &pack_pairs_avx512 : nullptr};
}

}  // namespace hal::cpu_ref
