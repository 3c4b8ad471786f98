// The bf16_pairs contract of gemm_microkernel.h in plain C++ (4 x 8 tile):
// what vdpbf16ps does per lane, step by step. The bf16 x bf16 products are
// exact in fp32 (8 + 8 significant bits), so "acc + a * b" has one rounding,
// as the instruction's fused multiply-add has; the project builds without
// FMA contraction, and an exact product makes it irrelevant anyway.
#include <bit>
#include <cmath>
#include <cstdint>

#include "cpu_ref/bf16_daz_ftz.h"
#include "cpu_ref/gemm_microkernel.h"

namespace hal::cpu_ref {
namespace {

constexpr int kMr = 4;
constexpr int kNr = 8;

// A bf16 half of a pair word (0: low, 1: high), widened, DAZ.
float widen_daz(std::uint32_t word, int half) {
  return bf16_widen_daz(static_cast<std::uint16_t>(half == 0 ? word : word >> 16));
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
        v = flush_subnormal(v + widen_daz(aw, 1) * widen_daz(bw, 1));
        v = flush_subnormal(v + widen_daz(aw, 0) * widen_daz(bw, 0));
      }
      acc[r * kNr + c] = v;
    }
}

}  // namespace

GemmMicroKernel gemm_microkernel_bf16_pairs_emulated() {
  return {"bf16_pairs_emulated", kMr, kNr, &microkernel_bf16_pairs_emulated, GemmPacking::bf16_pairs};
}

}  // namespace hal::cpu_ref
