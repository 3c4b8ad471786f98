// The bf16_pairs packing (pack_pair_panels in gemm_pack.h) in AVX-512
// registers, for the AVX-512 BF16 GEMM kernel: the same words, faster. Element
// by element it cost about a sixth of the bf16 GEMM at 2048^3 (a 16-bit load,
// a shift and a 32-bit store per pair, and a branch for the odd-k edge).
//
//   lines contiguous along k (row-major A, a transposed B): a line's pair
//     words are its own 32-bit words (little endian: k in the low half), so
//     packing is a transpose of words: 16 lines x 16 pairs per 16 x 16
//     transpose, loads masked at the kc edge (zero past kc, nothing read
//     beyond it);
//   lines adjacent (row-major B: columns): rows k and k + 1 of a panel are
//     two short vectors whose 16-bit lanes interleave into the pair words
//     (one vpermt2w per 16 words); walked a pair of rows at a time across
//     every panel, so each source row is read once, in order.
//
// Other strides, and panels wider than 32, take the plain packing. Compiled
// with the AVX-512 BF16 kernel's flags (this file uses AVX-512F/BW only); run
// only where that kernel is.
#include <immintrin.h>

#include <cstdint>

#include "cpu_ref/avx512_transpose16.h"
#include "cpu_ref/gemm_pack.h"

namespace hal::cpu_ref {
namespace {

inline __mmask32 first_halves(std::int64_t n) {
  return n >= 32 ? ~__mmask32{0} : n <= 0 ? __mmask32{0} : (__mmask32{1} << n) - 1;
}
inline __mmask16 first_words(std::int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xffff) : n <= 0 ? __mmask16{0} : static_cast<__mmask16>((1u << n) - 1u);
}

// Lines contiguous along k: src + line * line_stride is line's k = 0.
void pack_k_contiguous(const std::uint16_t* src, std::int64_t extent, std::int64_t line_stride, std::int64_t kc,
                       int width, std::uint32_t* dst) {
  const std::int64_t pairs = (kc + 1) / 2, panel_size = packed_pair_panel_stride(kc, width);
  for (std::int64_t p0 = 0; p0 < extent; p0 += width) {
    std::uint32_t* d = dst + (p0 / width) * panel_size;
    const std::int64_t valid = extent - p0 < width ? extent - p0 : width;
    for (int g = 0; g < width; g += 16) {
      const int group = width - g < 16 ? width - g : 16;
      const __mmask16 store = first_words(group);
      for (std::int64_t c = 0; c < pairs; c += 16) {
        // 32 k (16 pairs) of each line; zero past kc and for lines past the edge.
        const __mmask32 load = first_halves(kc - 2 * c);
        __m512i r[16];
        for (int l = 0; l < 16; ++l)
          r[l] = g + l < valid && l < group
                     ? _mm512_maskz_loadu_epi16(load, src + (p0 + g + l) * line_stride + 2 * c)
                     : _mm512_setzero_si512();
        transpose16(r);
        const std::int64_t count = pairs - c < 16 ? pairs - c : 16;
        for (std::int64_t t = 0; t < count; ++t) _mm512_mask_storeu_epi32(d + (c + t) * width + g, store, r[t]);
      }
    }
  }
}

// Lines adjacent (unit line stride): src + k * k_stride is row k's line 0.
// The rows a few pairs ahead are prefetched: each row's segment (NC columns)
// is too short a stream for the hardware prefetcher to ramp up on.
constexpr std::int64_t kPrefetchPairs = 4;
void pack_lines_adjacent(const std::uint16_t* src, std::int64_t extent, std::int64_t k_stride, std::int64_t kc,
                         int width, std::uint32_t* dst) {
  const std::int64_t pairs = (kc + 1) / 2, panel_size = packed_pair_panel_stride(kc, width);
  // Word w of the pair (k, k + 1) is (row k's half w, row k + 1's half w).
  alignas(64) std::uint16_t low_index[32], high_index[32];
  for (int i = 0; i < 16; ++i) {
    low_index[2 * i] = static_cast<std::uint16_t>(i), low_index[2 * i + 1] = static_cast<std::uint16_t>(32 + i);
    high_index[2 * i] = static_cast<std::uint16_t>(16 + i), high_index[2 * i + 1] = static_cast<std::uint16_t>(48 + i);
  }
  const __m512i lo_idx = _mm512_load_si512(low_index), hi_idx = _mm512_load_si512(high_index);
  const __mmask16 store0 = first_words(width), store1 = first_words(width - 16);
  for (std::int64_t pr = 0; pr < pairs; ++pr) {
    const std::uint16_t* even = src + 2 * pr * k_stride;
    const bool has_odd = 2 * pr + 1 < kc;
    const std::uint16_t* ahead = even + 2 * kPrefetchPairs * k_stride;
    for (std::int64_t p0 = 0; p0 < extent; p0 += width) {
      if (pr + kPrefetchPairs < pairs) {
        _mm_prefetch(reinterpret_cast<const char*>(ahead + p0), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(ahead + k_stride + p0), _MM_HINT_T0);
      }
      const std::int64_t valid = extent - p0 < width ? extent - p0 : width;
      const __mmask32 load = first_halves(valid);
      const __m512i e = _mm512_maskz_loadu_epi16(load, even + p0);
      const __m512i o = has_odd ? _mm512_maskz_loadu_epi16(load, even + k_stride + p0) : _mm512_setzero_si512();
      std::uint32_t* d = dst + (p0 / width) * panel_size + pr * width;
      _mm512_mask_storeu_epi32(d, store0, _mm512_permutex2var_epi16(e, lo_idx, o));
      if (width > 16) _mm512_mask_storeu_epi32(d + 16, store1, _mm512_permutex2var_epi16(e, hi_idx, o));
    }
  }
}

void pack_pairs_avx512(const GemmMatrix& m, std::int64_t batch, std::int64_t line0, std::int64_t extent,
                       std::int64_t line_stride, std::int64_t k0, std::int64_t kc, std::int64_t k_stride, int width,
                       std::uint32_t* dst) {
  const auto* src = static_cast<const std::uint16_t*>(m.data) + m.offset + batch * m.batch_stride +
                    line0 * line_stride + k0 * k_stride;
  if (width <= 32 && k_stride == 1) return pack_k_contiguous(src, extent, line_stride, kc, width, dst);
  if (width <= 32 && line_stride == 1) return pack_lines_adjacent(src, extent, k_stride, kc, width, dst);
  pack_pair_panels_baseline(m, batch, line0, extent, line_stride, k0, kc, k_stride, width, dst);
}

}  // namespace

GemmPackPairsFn gemm_pack_pairs_avx512() { return &pack_pairs_avx512; }

}  // namespace hal::cpu_ref
