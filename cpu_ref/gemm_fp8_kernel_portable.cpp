// Portable fp8 block kernels (cpu_ref/gemm_fp8_kernel.h), plain C++ the
// compiler may auto-vectorise for the baseline ISA: the fp32 one (what a CPU
// without AVX2 runs) and the bf16-pair one, the model the AVX-512 BF16 kernel
// is checked against and the way the pair packing is tested on any CPU.
#include <bit>
#include <cstdint>

#include "cpu_ref/gemm_fp8_kernel.h"

namespace hal::cpu_ref {
namespace {

constexpr int kMr = 4;
constexpr int kNr = 8;

// acc += row_scale * s, one rounded multiply and one rounded add per element.
void promote(const float (&s)[kMr][kNr], const float* row_scale, float* acc) {
  for (int r = 0; r < kMr; ++r)
    for (int c = 0; c < kNr; ++c) acc[r * kNr + c] += row_scale[r] * s[r][c];
}

// Panels packed with each pair's two k swapped: a plain ascending chain is the
// contract's odd-first order.
void block_fp32(std::int64_t kc, const void* a_panel, const void* b_panel, const float* row_scale, float* acc) {
  const auto* a = static_cast<const float*>(a_panel);
  const auto* b = static_cast<const float*>(b_panel);
  float s[kMr][kNr] = {};
  for (std::int64_t k = 0; k < kc; ++k)
    for (int r = 0; r < kMr; ++r)
      for (int c = 0; c < kNr; ++c) s[r][c] += a[k * kMr + r] * b[k * kNr + c];
  promote(s, row_scale, acc);
}

float high_half(std::uint32_t word) { return std::bit_cast<float>(word & 0xFFFF0000u); }
float low_half(std::uint32_t word) { return std::bit_cast<float>(word << 16); }

// vdpbf16ps per lane: the odd (high) product, then the even (low) one. Its
// input and output flushing is left out: it never acts on fp8 operands
// (gemm_fp8_kernel.h), and the hardware kernel is tested against this one.
void block_pairs(std::int64_t kc, const void* a_panel, const void* b_panel, const float* row_scale, float* acc) {
  const auto* a = static_cast<const std::uint32_t*>(a_panel);
  const auto* b = static_cast<const std::uint32_t*>(b_panel);
  float s[kMr][kNr] = {};
  for (std::int64_t p = 0; p < (kc + 1) / 2; ++p)
    for (int r = 0; r < kMr; ++r)
      for (int c = 0; c < kNr; ++c) {
        const std::uint32_t aw = a[p * kMr + r], bw = b[p * kNr + c];
        s[r][c] += high_half(aw) * high_half(bw);
        s[r][c] += low_half(aw) * low_half(bw);
      }
  promote(s, row_scale, acc);
}

}  // namespace

Fp8BlockKernel fp8_block_kernel_portable() { return {"portable_4x8", kMr, kNr, GemmPacking::fp32, &block_fp32}; }

Fp8BlockKernel fp8_block_kernel_pairs_emulated() {
  return {"bf16_pairs_emulated_4x8", kMr, kNr, GemmPacking::bf16_pairs, &block_pairs};
}

}  // namespace hal::cpu_ref
