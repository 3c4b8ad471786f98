// AVX2/FMA fp8 block kernel, 6 x 16 (cpu_ref/gemm_fp8_kernel.h): the GEMM's
// AVX2 register tile (12 ymm block sums, 2 ymm for a row of B, one broadcast
// of A) on fp32 panels packed with each pair's k swapped, then the promotion
// acc += row_scale * S. Compiled with -mavx2 -mfma -mf16c (like every
// *_avx2.cpp); run only where cpu_features() reports AVX2+FMA+F16C.
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "cpu_ref/gemm_fp8_kernel.h"
#include "cpu_ref/gemm_fp8_pack.h"
#include "hal/op.h"  // kFp8BlockSize

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

// The fp32 packing (pairs swapped) in vector registers: 16 lines x 16 k of
// bytes at a time go through a 16 x 16 byte transpose, so each k's 16 lines
// are one xmm, widened to fp32 through fp16 (F16C) or by integer arithmetic
// on the format's fields (from the table by a gather where the xmm holds a
// NaN or infinity byte);
// one or two stores write the panel row. The words are pack_fp8_panels's.
// Element by element, packing cost more than the kernel at M = 64; table
// gathers for every xmm were little faster.
//
// 16 x 16 bytes, rows in r; afterwards r[bit_reverse4(c)] is column c.
inline void transpose16_bytes(__m128i (&r)[16]) {
  __m128i b[16], c[16], d[16];
  for (int i = 0; i < 8; ++i) {
    b[i] = _mm_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
    b[i + 8] = _mm_unpackhi_epi8(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 8; ++i) {
    c[i] = _mm_unpacklo_epi16(b[2 * i], b[2 * i + 1]);
    c[i + 8] = _mm_unpackhi_epi16(b[2 * i], b[2 * i + 1]);
  }
  for (int i = 0; i < 8; ++i) {
    d[i] = _mm_unpacklo_epi32(c[2 * i], c[2 * i + 1]);
    d[i + 8] = _mm_unpackhi_epi32(c[2 * i], c[2 * i + 1]);
  }
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm_unpacklo_epi64(d[2 * i], d[2 * i + 1]);
    r[i + 8] = _mm_unpackhi_epi64(d[2 * i], d[2 * i + 1]);
  }
}

constexpr int bit_reverse4(int v) { return (v & 1) << 3 | (v & 2) << 1 | (v & 4) >> 1 | (v & 8) >> 3; }

// The fields of Fp8Table in registers.
struct Widen {
  __m256i magnitude_mask, sign_mask, rebias, subnormal_limit;
  __m256 subnormal_scale, half_scale;
  __m256i byte_low7, byte_sign;
  __m128i low7, special_below, special_byte;
  int normal_shift, half_shift;
  bool through_half;  // e4m3, e4m3fnuz, e5m2: every finite byte, moved into fp16's fields, is an fp16
  const float* lut;

  explicit Widen(const Fp8Table& t)
      : magnitude_mask(_mm256_set1_epi32(0x7f)),
        sign_mask(_mm256_set1_epi32(0x80)),
        rebias(_mm256_set1_epi32((127 - t.bias) << 23)),
        subnormal_limit(_mm256_set1_epi32(1 << t.mantissa_bits)),
        subnormal_scale(_mm256_set1_ps(std::ldexp(1.0f, 1 - t.bias - t.mantissa_bits))),
        half_scale(_mm256_set1_ps(std::ldexp(1.0f, 15 - t.bias))),
        byte_low7(_mm256_set1_epi16(0x7f)),
        byte_sign(_mm256_set1_epi16(0x80)),
        low7(_mm_set1_epi8(0x7f)),
        special_below(_mm_set1_epi8(static_cast<char>(t.special_magnitude - 1))),
        special_byte(_mm_set1_epi8(static_cast<char>(t.special_byte))),
        normal_shift(23 - t.mantissa_bits),
        half_shift(10 - t.mantissa_bits),
        // fp16 has 5 exponent bits and bias 15: a 4-bit exponent fits, and a
        // 5-bit one with bias 15 is fp16 itself; e5m2fnuz's exponent 31 is not.
        through_half(t.mantissa_bits == 3 || t.bias == 15),
        lut(t.f32.data()) {}

  // Whether any of the 16 bytes is a NaN or infinity of the format.
  bool any_special(__m128i bytes) const {
    const __m128i magnitude = _mm_and_si128(bytes, low7);  // 0..127: a signed compare is right
    const __m128i special = _mm_or_si128(_mm_cmpgt_epi8(magnitude, special_below), _mm_cmpeq_epi8(bytes, special_byte));
    return _mm_movemask_epi8(special) != 0;
  }

  // Eight finite bytes (zero-extended) as fp32 from their fields, exactly.
  __m256 finite(__m256i x) const {
    const __m256i magnitude = _mm256_and_si256(x, magnitude_mask);
    const __m256i sign = _mm256_slli_epi32(_mm256_and_si256(x, sign_mask), 24);
    const __m256 normal = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_sll_epi32(magnitude, _mm_cvtsi32_si128(normal_shift)), rebias));
    const __m256 subnormal = _mm256_mul_ps(_mm256_cvtepi32_ps(magnitude), subnormal_scale);  // exact: m * 2^-n
    const __m256 is_subnormal = _mm256_castsi256_ps(_mm256_cmpgt_epi32(subnormal_limit, magnitude));
    return _mm256_or_ps(_mm256_blendv_ps(normal, subnormal, is_subnormal), _mm256_castsi256_ps(sign));
  }

  // Sixteen finite bytes through fp16: sign to bit 15, exponent and mantissa
  // to fp16's (subnormals included), widened by F16C, then the bias
  // difference as an exact power-of-two multiply.
  void finite_through_half(__m128i bytes, __m256& f0, __m256& f1) const {
    const __m256i x = _mm256_cvtepu8_epi16(bytes);
    const __m256i h = _mm256_or_si256(_mm256_slli_epi16(_mm256_and_si256(x, byte_sign), 8),
                                      _mm256_sll_epi16(_mm256_and_si256(x, byte_low7), _mm_cvtsi32_si128(half_shift)));
    f0 = _mm256_mul_ps(_mm256_cvtph_ps(_mm256_castsi256_si128(h)), half_scale);
    f1 = _mm256_mul_ps(_mm256_cvtph_ps(_mm256_extracti128_si256(h, 1)), half_scale);
  }

  void sixteen(__m128i bytes, __m256& f0, __m256& f1) const {
    if (any_special(bytes)) {
      f0 = _mm256_i32gather_ps(lut, _mm256_cvtepu8_epi32(bytes), 4);
      f1 = _mm256_i32gather_ps(lut, _mm256_cvtepu8_epi32(_mm_srli_si128(bytes, 8)), 4);
    } else if (through_half) {
      finite_through_half(bytes, f0, f1);
    } else {
      f0 = finite(_mm256_cvtepu8_epi32(bytes));
      f1 = finite(_mm256_cvtepu8_epi32(_mm_srli_si128(bytes, 8)));
    }
  }
};

void pack_fp32_avx2(const Fp8Lines& lines, std::int64_t extent, std::int64_t kc, int width, const Fp8Table& table,
                    void* dst) {
  const std::int64_t depth = fp8_packed_k(kc), panel = fp8_panel_words(GemmPacking::fp32, kc, width);
  const Widen widen(table);
  for (std::int64_t p0 = 0; p0 < extent; p0 += width) {
    float* d = static_cast<float*>(dst) + (p0 / width) * panel;
    const std::int64_t valid = extent - p0 < width ? extent - p0 : width;
    for (int g = 0; g < width; g += 16) {
      const int group = width - g < 16 ? width - g : 16;
      // Lanes [0, group) of each 8-float half are stored.
      const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
      const __m256i mask0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(group), lane);
      const __m256i mask1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(group - 8), lane);
      for (std::int64_t k0 = 0; k0 < depth; k0 += 16) {
        __m128i rows[16];
        for (int l = 0; l < 16; ++l) {
          if (l >= group || g + l >= valid) {
            rows[l] = _mm_setzero_si128();
            continue;
          }
          const std::uint8_t* src = lines.base + (p0 + g + l) * lines.line_stride + k0;
          // The line's next K block (the next pack of these lines): the
          // lines are separate streams too short for the hardware prefetcher.
          if (k0 == 0) __builtin_prefetch(src + kFp8BlockSize), __builtin_prefetch(src + kFp8BlockSize + 64);
          if (k0 + 16 <= kc) {
            rows[l] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
          } else {
            alignas(16) std::uint8_t tail[16] = {};  // zero past kc: +0 in every format
            std::memcpy(tail, src, static_cast<std::size_t>(kc - k0));
            rows[l] = _mm_load_si128(reinterpret_cast<const __m128i*>(tail));
          }
        }
        transpose16_bytes(rows);
        for (int c = 0; c < 16; ++c) {
          const std::int64_t packed = (k0 + c) ^ 1;  // source k k0 + c goes to its pair partner's slot
          if (packed >= depth) continue;
          __m256 f0, f1;
          widen.sixteen(rows[bit_reverse4(c)], f0, f1);
          float* o = d + packed * width + g;
          if (group == 16) {
            _mm256_storeu_ps(o, f0);
            _mm256_storeu_ps(o + 8, f1);
          } else {
            _mm256_maskstore_ps(o, mask0, f0);
            if (group > 8) _mm256_maskstore_ps(o + 8, mask1, f1);
          }
        }
      }
    }
  }
}

}  // namespace

Fp8BlockKernel fp8_block_kernel_avx2() {
  return {"avx2_6x16", kMr, kNr, GemmPacking::fp32, &block_avx2, &pack_fp32_avx2};
}

}  // namespace hal::cpu_ref
