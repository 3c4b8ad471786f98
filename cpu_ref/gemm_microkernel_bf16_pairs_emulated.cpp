// The bf16_pairs contract of gemm_microkernel.h in plain C++ (4 x 8 tile):
// what vdpbf16ps does per lane, step by step. The bf16 x bf16 products are
// exact in fp32 (8 + 8 significant bits), so "acc + a * b" has one rounding,
// as the instruction's fused multiply-add has; the project builds without
// FMA contraction, and an exact product makes it irrelevant anyway.
#include <bit>
#include <cmath>
#include <cstdint>

#include "cpu_ref/gemm_microkernel.h"

namespace hal::cpu_ref {
namespace {

constexpr int kMr = 4;
constexpr int kNr = 8;

// A bf16 half of a pair word, widened; subnormal inputs read as (signed) zero.
float widen_daz(std::uint32_t word, int half) {
  std::uint32_t bits = (half == 0 ? word << 16 : word & 0xFFFF0000u);
  if ((bits & 0x7F800000u) == 0) bits &= 0x80000000u;
  return std::bit_cast<float>(bits);
}

// Subnormal results flush to (signed) zero.
float flush(float v) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(v);
  return (bits & 0x7F800000u) == 0 ? std::bit_cast<float>(bits & 0x80000000u) : v;
}

void microkernel_bf16_pairs_emulated(std::int64_t kc, const void* a_panel, const void* b_panel, float* acc) {
  const auto* a = static_cast<const std::uint32_t*>(a_panel);
  const auto* b = static_cast<const std::uint32_t*>(b_panel);
  const std::int64_t pairs = (kc + 1) / 2;
  for (int r = 0; r < kMr; ++r)
    for (int c = 0; c < kNr; ++c) {
      float v = acc[r * kNr + c];
      for (std::int64_t p = 0; p < pairs; ++p) {
        const std::uint32_t aw = a[p * kMr + r], bw = b[p * kNr + c];
        v = flush(v + widen_daz(aw, 1) * widen_daz(bw, 1));
        v = flush(v + widen_daz(aw, 0) * widen_daz(bw, 0));
      }
      acc[r * kNr + c] = v;
    }
}

}  // namespace

GemmMicroKernel gemm_microkernel_bf16_pairs_emulated() {
  return {"bf16_pairs_emulated", kMr, kNr, &microkernel_bf16_pairs_emulated, GemmPacking::bf16_pairs};
}

}  // namespace hal::cpu_ref
