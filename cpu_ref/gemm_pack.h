#pragma once
// Packing of op(A) and op(B) blocks into the contiguous fp32 micro-panels the
// micro-kernels read (see gemm_microkernel.h). Packing is where every input
// layout (strides, transposes, batch broadcast) and dtype (f32, f16, bf16) is
// absorbed: the widening to fp32 is exact. Rows/columns past the matrix edge
// are zero-filled, so an edge tile runs the same full micro-kernel, in the same
// order, as an interior one.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "cpu_ref/gemm_microkernel.h"
#include "cpu_ref/gemm_operands.h"
#include "cpu_ref/half_convert.h"
#include "hal/dtype.h"

namespace hal::cpu_ref {

// Floats from one packed panel to the next: kc*width plus one cache line, so
// that the same k of consecutive panels (written together when packing a
// row-major B, read in turn by the kernel) does not fall in one L1 set: with
// kc*width*4 a multiple of 4 KiB they all would.
inline std::int64_t packed_panel_stride(std::int64_t kc, int width) { return kc * width + 16; }

// Unit-stride line packing walks `width` source lines in chunks of one cache
// line and prefetches each line a few cache lines ahead: the lines are
// separate streams whose segments (kc elements) are too short for the
// hardware prefetcher to ramp up on its own.
inline constexpr std::int64_t kPackChunk = 16;
inline constexpr std::int64_t kPrefetchAhead = 4 * kPackChunk;

template <DType T> inline const void* element_address(const void* data, std::int64_t index) {
  constexpr std::int64_t bytes = T == DType::f32 ? 4 : 2;
  return static_cast<const char*>(data) + index * bytes;
}

template <DType T> inline float load_as_f32(const void* data, std::int64_t index) {
  if constexpr (T == DType::f32) {
    return static_cast<const float*>(data)[index];
  } else if constexpr (T == DType::f16) {
    return f16_bits_to_float(static_cast<const std::uint16_t*>(data)[index]);
  } else {
    static_assert(T == DType::bf16, "gemm packs f32, f16 or bf16");
    return bf16_bits_to_float(static_cast<const std::uint16_t*>(data)[index]);
  }
}

#if defined(__SSE2__)
// Four consecutive elements as fp32 (exact: bf16 bits become the high half).
template <DType T> inline __m128 load4_as_f32(const void* data, std::int64_t index) {
  if constexpr (T == DType::f32) {
    return _mm_loadu_ps(static_cast<const float*>(data) + index);
  } else {
    static_assert(T == DType::bf16, "f16 is widened element by element");
    const auto* p = static_cast<const std::uint16_t*>(data) + index;
    return _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
}

// Lines [0, valid) x k [k, k + 4) of a k-contiguous source into the panel
// (d[k * width + w]): four lines at a time through a 4 x 4 transpose, a pair
// through one unpack, a last odd line element by element. Baseline SSE2
// (every x86-64), so no run-time dispatch; the same bits as the plain loop.
template <DType T>
inline void pack_four_k(const void* data, std::int64_t src, std::int64_t line_stride, std::int64_t k,
                        std::int64_t valid, int width, float* d) {
  float* d0 = d + k * width;
  std::int64_t w = 0;
  for (; w + 4 <= valid; w += 4) {
    __m128 r0 = load4_as_f32<T>(data, src + w * line_stride + k);
    __m128 r1 = load4_as_f32<T>(data, src + (w + 1) * line_stride + k);
    __m128 r2 = load4_as_f32<T>(data, src + (w + 2) * line_stride + k);
    __m128 r3 = load4_as_f32<T>(data, src + (w + 3) * line_stride + k);
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    _mm_storeu_ps(d0 + w, r0);
    _mm_storeu_ps(d0 + width + w, r1);
    _mm_storeu_ps(d0 + 2 * width + w, r2);
    _mm_storeu_ps(d0 + 3 * width + w, r3);
  }
  if (w + 2 <= valid) {
    const __m128 a = load4_as_f32<T>(data, src + w * line_stride + k);
    const __m128 b = load4_as_f32<T>(data, src + (w + 1) * line_stride + k);
    const __m128 lo = _mm_unpacklo_ps(a, b), hi = _mm_unpackhi_ps(a, b);  // a0 b0 a1 b1, a2 b2 a3 b3
    _mm_storel_pi(reinterpret_cast<__m64*>(d0 + w), lo);
    _mm_storeh_pi(reinterpret_cast<__m64*>(d0 + width + w), lo);
    _mm_storel_pi(reinterpret_cast<__m64*>(d0 + 2 * width + w), hi);
    _mm_storeh_pi(reinterpret_cast<__m64*>(d0 + 3 * width + w), hi);
    w += 2;
  }
  for (; w < valid; ++w)
    for (int i = 0; i < 4; ++i) d0[i * width + w] = load_as_f32<T>(data, src + w * line_stride + k + i);
}
#endif

// Packs `extent` (<= panels*width) lines of the matrix starting at `line0`
// along the panel axis, for reduction indices [k0, k0+kc), into panels of
// `width` lines: dst[panel][k][w]. For op(A) the lines are rows (line_stride =
// row_stride, k_stride = col_stride); for op(B) they are columns.
//
// The source is walked along its smaller stride: line by line when each line
// is contiguous along k, otherwise k by k across all lines. Walking one narrow
// panel at a time down a row-major matrix instead touches a new 4 KiB-apart
// cache line per k and thrashes the L1 sets (it cost half the run time).
template <DType T>
void pack_panels(const GemmMatrix& m, std::int64_t batch, std::int64_t line0, std::int64_t extent,
                 std::int64_t line_stride, std::int64_t k0, std::int64_t kc, std::int64_t k_stride,
                 int width, float* dst) {
  const std::int64_t base = m.offset + batch * m.batch_stride + line0 * line_stride + k0 * k_stride;
  const void* data = m.data;
  const std::int64_t panel_size = packed_panel_stride(kc, width);
  if (k_stride <= line_stride) {
    // One panel at a time, k outer and the panel's lines inner: the `width`
    // source lines are read as parallel sequential streams (one at a time, a
    // 1 KiB line segment is too short for the hardware prefetcher to ramp
    // up) and the panel is written contiguously.
    auto pack_lines = [&](auto unit_k_stride) {
      const std::int64_t ks = unit_k_stride ? 1 : k_stride;
      for (std::int64_t p0 = 0; p0 < extent; p0 += width) {
        float* d = dst + (p0 / width) * panel_size;
        const std::int64_t valid = extent - p0 < width ? extent - p0 : width;
        const std::int64_t src = base + p0 * line_stride;
        for (std::int64_t k0 = 0; k0 < kc; k0 += kPackChunk) {
          const std::int64_t k1 = k0 + kPackChunk < kc ? k0 + kPackChunk : kc;
          std::int64_t k = k0;
          if constexpr (unit_k_stride) {
            for (std::int64_t w = 0; w < valid; ++w)
              __builtin_prefetch(element_address<T>(data, src + w * line_stride + k1 + kPrefetchAhead));
#if defined(__SSE2__)
            // A transpose: element by element it cost about half of the
            // packing time (gemm's A, attention's K).
            if constexpr (T != DType::f16)
              for (; k + 4 <= k1; k += 4) pack_four_k<T>(data, src, line_stride, k, valid, width, d);
#endif
          }
          for (; k < k1; ++k)
            for (std::int64_t w = 0; w < valid; ++w)
              d[k * width + w] = load_as_f32<T>(data, src + w * line_stride + k * ks);
        }
      }
    };
    if (k_stride == 1) pack_lines(std::true_type{});
    else pack_lines(std::false_type{});
  } else {
    auto pack_k_rows = [&](auto unit_line_stride) {
      const std::int64_t ls = unit_line_stride ? 1 : line_stride;
      for (std::int64_t k = 0; k < kc; ++k) {
        const std::int64_t src = base + k * k_stride;
        for (std::int64_t p0 = 0; p0 < extent; p0 += width) {
          float* d = dst + (p0 / width) * panel_size + k * width;
          const std::int64_t valid = extent - p0 < width ? extent - p0 : width;
          for (std::int64_t w = 0; w < valid; ++w) d[w] = load_as_f32<T>(data, src + (p0 + w) * ls);
        }
      }
    };
    if (line_stride == 1) pack_k_rows(std::true_type{});
    else pack_k_rows(std::false_type{});
  }
  // Zero the lines past the edge of the last panel.
  if (const std::int64_t valid = extent % width; valid != 0) {
    float* last = dst + (extent / width) * panel_size;
    for (std::int64_t k = 0; k < kc; ++k)
      std::memset(last + k * width + valid, 0, sizeof(float) * static_cast<std::size_t>(width - valid));
  }
}

// 32-bit words from one bf16-pair panel to the next (one cache line of slack, as above).
inline std::int64_t packed_pair_panel_stride(std::int64_t kc, int width) { return (kc + 1) / 2 * width + 16; }

// The bf16_pairs packing of gemm_microkernel.h: `extent` lines from `line0`,
// k in [k0, k0 + kc), into panels of `width` lines: dst[panel][k/2][w] holds
// the bf16 bits of k (low half) and k + 1 (high half). Lines past the edge and
// the high half past an odd kc are zero. The source must be bf16: pairs carry
// the input bits unchanged.
inline void pack_pair_panels(const GemmMatrix& m, std::int64_t batch, std::int64_t line0, std::int64_t extent,
                             std::int64_t line_stride, std::int64_t k0, std::int64_t kc, std::int64_t k_stride,
                             int width, std::uint32_t* dst) {
  const std::int64_t base = m.offset + batch * m.batch_stride + line0 * line_stride + k0 * k_stride;
  const auto* src = static_cast<const std::uint16_t*>(m.data);
  const std::int64_t pairs = (kc + 1) / 2, panel_size = packed_pair_panel_stride(kc, width);
  for (std::int64_t p0 = 0; p0 < extent; p0 += width) {
    std::uint32_t* d = dst + (p0 / width) * panel_size;
    const std::int64_t valid = extent - p0 < width ? extent - p0 : width;
    for (std::int64_t pr = 0; pr < pairs; ++pr) {
      const bool has_high = 2 * pr + 1 < kc;
      for (std::int64_t w = 0; w < valid; ++w) {
        const std::int64_t s = base + (p0 + w) * line_stride + 2 * pr * k_stride;
        const std::uint32_t low = src[s], high = has_high ? src[s + k_stride] : 0u;
        d[pr * width + w] = low | high << 16;
      }
      for (std::int64_t w = valid; w < width; ++w) d[pr * width + w] = 0u;
    }
  }
}

// 32-bit words from one amx_bf16 panel to the next: ceil(kc/32) blocks of
// 16 x width words (A: width rows of 32 bf16; B: 16 pairs of width columns),
// plus a cache line as above.
inline std::int64_t packed_amx_panel_stride(std::int64_t kc, int width) {
  return amx_blocks(kc) * (kAmxBlockK / 2) * width + 16;
}

// The amx_bf16 packing of op(A) (gemm_microkernel.h): `extent` rows from
// `line0`, k in [k0, k0 + kc), per panel of `width` rows and per 32-k block,
// the rows' 32 bf16 one after the other (an AMX A tile per 16 rows). Zero past
// kc and past the last row. The source must be bf16 (its bits are copied).
inline void pack_amx_rows(const GemmMatrix& m, std::int64_t batch, std::int64_t line0, std::int64_t extent,
                          std::int64_t line_stride, std::int64_t k0, std::int64_t kc, std::int64_t k_stride, int width,
                          std::uint16_t* dst) {
  const std::int64_t base = m.offset + batch * m.batch_stride + line0 * line_stride + k0 * k_stride;
  const auto* src = static_cast<const std::uint16_t*>(m.data);
  const std::int64_t blocks = amx_blocks(kc), panel = 2 * packed_amx_panel_stride(kc, width);
  for (std::int64_t p0 = 0; p0 < extent; p0 += width) {
    std::uint16_t* d = dst + (p0 / width) * panel;
    for (std::int64_t kb = 0; kb < blocks; ++kb) {
      const std::int64_t valid_k = std::min<std::int64_t>(kAmxBlockK, kc - kb * kAmxBlockK);
      for (std::int64_t w = 0; w < width; ++w) {
        std::uint16_t* row = d + (kb * width + w) * kAmxBlockK;
        std::int64_t kk = 0;
        if (p0 + w < extent) {
          const std::uint16_t* s = src + base + (p0 + w) * line_stride + kb * kAmxBlockK * k_stride;
          if (k_stride == 1 && valid_k == kAmxBlockK) {
            // A constant size, which the compiler inlines: a libc call per
            // 64 bytes was most of the 17% memmove in a 1024^3 profile.
            std::memcpy(row, s, sizeof(std::uint16_t) * kAmxBlockK);
            kk = valid_k;
          } else if (k_stride == 1) {
            std::memcpy(row, s, sizeof(std::uint16_t) * static_cast<std::size_t>(valid_k));
            kk = valid_k;
          } else {
            for (; kk < valid_k; ++kk) row[kk] = s[kk * k_stride];
          }
        }
        for (; kk < kAmxBlockK; ++kk) row[kk] = 0;
      }
    }
  }
}

// pack_pair_panels compiled for the baseline ISA (in gemm_blocked.cpp): the
// ISA-specific packers fall back to it. Calling the inline one from an
// AVX-512 file would emit an AVX-512 copy of it as a weak symbol, which the
// linker may then pick for every caller (cpu_build.isa_objects_share_no_weak_symbols).
void pack_pair_panels_baseline(const GemmMatrix& m, std::int64_t batch, std::int64_t line0, std::int64_t extent,
                               std::int64_t line_stride, std::int64_t k0, std::int64_t kc, std::int64_t k_stride,
                               int width, std::uint32_t* dst);

// Words (4 bytes: a float or a bf16 pair) from one packed panel to the next,
// for a kernel's packing, so one scratch buffer serves both.
inline std::int64_t panel_stride(GemmPacking packing, std::int64_t kc, int width) {
  if (packing == GemmPacking::amx_bf16) return packed_amx_panel_stride(kc, width);
  return packing == GemmPacking::bf16_pairs ? packed_pair_panel_stride(kc, width) : packed_panel_stride(kc, width);
}

// op(B) columns in the amx_bf16 packing: each panel the bf16_pairs packing of
// its columns (`pairs`, when given, is the kernel's vectorised packer: the
// same words), then the pairs past ceil(kc/2) up to whole 16-pair blocks zeroed.
inline void pack_amx_columns(const GemmMatrix& m, std::int64_t batch, std::int64_t line0, std::int64_t extent,
                             std::int64_t line_stride, std::int64_t k0, std::int64_t kc, std::int64_t k_stride,
                             int width, std::uint32_t* dst, GemmPackPairsFn pairs) {
  const std::int64_t stride = packed_amx_panel_stride(kc, width), used = (kc + 1) / 2 * width;
  const std::int64_t padded = amx_blocks(kc) * (kAmxBlockK / 2) * width;
  auto pack = pairs ? pairs : &pack_pair_panels;
  // Whole blocks (every KC block but K's last): the two packings coincide, and
  // one call walks a row-major B's rows once across all panels.
  if (used == padded) return pack(m, batch, line0, extent, line_stride, k0, kc, k_stride, width, dst);
  for (std::int64_t p0 = 0; p0 < extent; p0 += width) {
    std::uint32_t* d = dst + (p0 / width) * stride;
    const std::int64_t lines = std::min<std::int64_t>(width, extent - p0);
    pack(m, batch, line0 + p0, lines, line_stride, k0, kc, k_stride, width, d);
    std::memset(d + used, 0, sizeof(std::uint32_t) * static_cast<std::size_t>(padded - used));
  }
}

// Lines of one operand into the panels a kernel of `packing` reads.
// `pairs`, when given, packs bf16_pairs in the kernel's ISA (the same words).
inline void pack_lines(GemmPacking packing, const GemmMatrix& m, std::int64_t batch, std::int64_t line0,
                       std::int64_t extent, std::int64_t line_stride, std::int64_t k0, std::int64_t kc,
                       std::int64_t k_stride, int width, float* dst, GemmPackPairsFn pairs = nullptr) {
  if (packing == GemmPacking::bf16_pairs)
    return (pairs ? pairs : &pack_pair_panels)(m, batch, line0, extent, line_stride, k0, kc, k_stride, width,
                            reinterpret_cast<std::uint32_t*>(dst));
  switch (m.dtype) {
    case DType::f16: return pack_panels<DType::f16>(m, batch, line0, extent, line_stride, k0, kc, k_stride, width, dst);
    case DType::bf16: return pack_panels<DType::bf16>(m, batch, line0, extent, line_stride, k0, kc, k_stride, width, dst);
    default: return pack_panels<DType::f32>(m, batch, line0, extent, line_stride, k0, kc, k_stride, width, dst);
  }
}

// op(A) rows [i0, i0+mc) x k [k0, k0+kc) -> ceil(mc/mr) panels, panel_stride(packing, kc, mr) apart.
inline void pack_a(GemmPacking packing, const GemmMatrix& a, std::int64_t batch, std::int64_t i0, std::int64_t mc,
                   std::int64_t k0, std::int64_t kc, int mr, float* dst, GemmPackPairsFn pairs = nullptr) {
  if (packing == GemmPacking::amx_bf16)
    return pack_amx_rows(a, batch, i0, mc, a.row_stride, k0, kc, a.col_stride, mr,
                         reinterpret_cast<std::uint16_t*>(dst));
  pack_lines(packing, a, batch, i0, mc, a.row_stride, k0, kc, a.col_stride, mr, dst, pairs);
}

// op(B) k [k0, k0+kc) x columns [j0, j0+nc) -> ceil(nc/nr) panels, panel_stride(packing, kc, nr) apart.
inline void pack_b(GemmPacking packing, const GemmMatrix& b, std::int64_t batch, std::int64_t j0, std::int64_t nc,
                   std::int64_t k0, std::int64_t kc, int nr, float* dst, GemmPackPairsFn pairs = nullptr) {
  if (packing == GemmPacking::amx_bf16)
    return pack_amx_columns(b, batch, j0, nc, b.col_stride, k0, kc, b.row_stride, nr,
                            reinterpret_cast<std::uint32_t*>(dst), pairs);
  pack_lines(packing, b, batch, j0, nc, b.col_stride, k0, kc, b.row_stride, nr, dst, pairs);
}

}  // namespace hal::cpu_ref
