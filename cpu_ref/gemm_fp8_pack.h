#pragma once
// Packing of fp8 operand blocks into the panels the fp8 block kernels read
// (cpu_ref/gemm_fp8_kernel.h). Each fp8 byte is widened through a 256-entry
// table of its format (exact: every fp8 value is an fp32 and a bf16 value).
// Lines are rows of A or of B ([N, K]: both K-contiguous in the usual
// layout); lines past the edge and k past the block are zero, so an edge
// tile runs the full kernel in the same order.
#include <array>
#include <cstdint>
#include <cstring>

#include "cpu_ref/gemm_microkernel.h"
#include "hal/dtype.h"

namespace hal::cpu_ref {

// One fp8 format's 256 values, as fp32 and as bf16 bits (the fp32's high
// half), the latter also split into its low and high bytes (for byte-table
// lookups in vector registers).
struct Fp8Table {
  std::array<float, 256> f32{};
  std::array<std::uint16_t, 256> bf16{};
  std::array<std::uint8_t, 256> bf16_low{}, bf16_high{};
  // The format's fields, for arithmetic widening: a byte whose magnitude
  // (low 7 bits) is at least special_magnitude, or equal to special_byte, is
  // NaN or infinity (take it from the table); any other is
  // sign * 2^(e - bias) * 1.m (e > 0), or sign * m * 2^(1 - bias - mantissa_bits).
  int mantissa_bits = 3, bias = 7;
  std::uint8_t special_magnitude = 0x7f, special_byte = 0xff;
};

inline Fp8Table fp8_table(DType t) {
  Fp8Table table;
  // OCP formats: NaN (and e5m2's infinities) at the top magnitudes; FNUZ: one NaN, 0x80.
  if (t == DType::f8e5m2) table.mantissa_bits = 2, table.bias = 15, table.special_magnitude = 0x7c;
  if (t == DType::f8e4m3fnuz) table.bias = 8, table.special_magnitude = 0x80, table.special_byte = 0x80;
  if (t == DType::f8e5m2fnuz)
    table.mantissa_bits = 2, table.bias = 16, table.special_magnitude = 0x80, table.special_byte = 0x80;
  for (int b = 0; b < 256; ++b) {
    const auto byte = static_cast<std::uint8_t>(b);
    const float v = load_element_f32(&byte, t, 0);
    std::uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    table.f32[static_cast<std::size_t>(b)] = v;
    table.bf16[static_cast<std::size_t>(b)] = static_cast<std::uint16_t>(bits >> 16);
    table.bf16_low[static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(bits >> 16);
    table.bf16_high[static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(bits >> 24);
  }
  return table;
}

// Element (line, k) of a block lies at base[line * line_stride + k * k_stride].
struct Fp8Lines {
  const std::uint8_t* base;
  std::int64_t line_stride, k_stride;
};

// K entries of a block in the packing: kc rounded up to a whole pair.
inline std::int64_t fp8_packed_k(std::int64_t kc) { return (kc + 1) / 2 * 2; }

// 32-bit words from one panel to the next, with a cache line of slack (as
// gemm_pack.h, so the same k of consecutive panels do not share an L1 set).
inline std::int64_t fp8_panel_words(GemmPacking packing, std::int64_t kc, int width) {
  const std::int64_t k = fp8_packed_k(kc);
  return (packing == GemmPacking::bf16_pairs ? k / 2 : k) * width + 16;
}

namespace fp8_pack_detail {

// Line w of a panel: fp32 with each pair (k, k + 1) stored as (k + 1, k).
template <bool UnitK>
inline void fp32_line(const std::uint8_t* src, std::int64_t ks, std::int64_t kc, const float* lut, int width, float* d) {
  const std::int64_t even = kc / 2 * 2;
  for (std::int64_t k = 0; k < even; k += 2) {
    d[k * width] = lut[src[(k + 1) * (UnitK ? 1 : ks)]];
    d[(k + 1) * width] = lut[src[k * (UnitK ? 1 : ks)]];
  }
  if (even < kc) {
    d[even * width] = 0.0f;
    d[(even + 1) * width] = lut[src[even * (UnitK ? 1 : ks)]];
  }
}

// Line w of a panel: bf16 pair words, k in the low half.
template <bool UnitK>
inline void pair_line(const std::uint8_t* src, std::int64_t ks, std::int64_t kc, const std::uint16_t* lut, int width,
                      std::uint32_t* d) {
  const std::int64_t pairs = kc / 2;
  for (std::int64_t p = 0; p < pairs; ++p) {
    const std::uint32_t lo = lut[src[2 * p * (UnitK ? 1 : ks)]], hi = lut[src[(2 * p + 1) * (UnitK ? 1 : ks)]];
    d[p * width] = lo | hi << 16;
  }
  if (kc % 2 != 0) d[pairs * width] = lut[src[(kc - 1) * (UnitK ? 1 : ks)]];
}

}  // namespace fp8_pack_detail

// Lines [0, extent) x k [0, kc) of `lines` into panels of `width` lines,
// fp8_panel_words(packing, kc, width) words apart, at dst.
inline void pack_fp8_panels(GemmPacking packing, const Fp8Lines& lines, std::int64_t extent, std::int64_t kc,
                            int width, const Fp8Table& table, void* dst) {
  using namespace fp8_pack_detail;
  const std::int64_t panel = fp8_panel_words(packing, kc, width), depth = fp8_packed_k(kc);
  const std::int64_t words = packing == GemmPacking::bf16_pairs ? depth / 2 : depth;
  const bool unit = lines.k_stride == 1;
  for (std::int64_t p0 = 0; p0 < extent; p0 += width) {
    auto* d = static_cast<std::uint32_t*>(dst) + (p0 / width) * panel;
    const std::int64_t valid = extent - p0 < width ? extent - p0 : width;
    for (std::int64_t w = 0; w < valid; ++w) {
      const std::uint8_t* src = lines.base + (p0 + w) * lines.line_stride;
      if (packing == GemmPacking::bf16_pairs) {
        if (unit) pair_line<true>(src, 1, kc, table.bf16.data(), width, d + w);
        else pair_line<false>(src, lines.k_stride, kc, table.bf16.data(), width, d + w);
      } else {
        float* f = reinterpret_cast<float*>(d) + w;
        if (unit) fp32_line<true>(src, 1, kc, table.f32.data(), width, f);
        else fp32_line<false>(src, lines.k_stride, kc, table.f32.data(), width, f);
      }
    }
    if (valid < width)
      for (std::int64_t k = 0; k < words; ++k)
        std::memset(d + k * width + valid, 0, sizeof(std::uint32_t) * static_cast<std::size_t>(width - valid));
  }
}

}  // namespace hal::cpu_ref
