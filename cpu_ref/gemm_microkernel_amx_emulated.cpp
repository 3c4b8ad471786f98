// The amx_bf16 contract of gemm_microkernel.h in plain C++, 32 x 32 on the
// AMX kernel's packing: what TDPBF16PS does per output element, step by step.
// Each step is one fused multiply-add (std::fma: a bf16 x bf16 product is
// exact, the sum is rounded once), then flushed if subnormal.
#include <cmath>
#include <cstdint>

#include "cpu_ref/bf16_daz_ftz.h"
#include "cpu_ref/gemm_microkernel.h"

namespace hal::cpu_ref {
namespace {

constexpr int kMr = 32;
constexpr int kNr = 32;
constexpr int kBlockK = kAmxBlockK;

void microkernel_amx_emulated(std::int64_t kc, const void* a_panel, const void* b_panel, float* acc) {
  const auto* a = static_cast<const std::uint16_t*>(a_panel);  // [block][row][32]
  const auto* b = static_cast<const std::uint32_t*>(b_panel);  // [block][pair][column]
  const std::int64_t blocks = amx_blocks(kc);
  for (std::int64_t kb = 0; kb < blocks; ++kb) {
    const std::uint16_t* ab = a + kb * kMr * kBlockK;
    const std::uint32_t* bb = b + kb * (kBlockK / 2) * kNr;
    for (int r = 0; r < kMr; ++r)
      for (int c = 0; c < kNr; ++c) {
        float even = 0.0f, odd = 0.0f;
        for (int p = 0; p < kBlockK / 2; ++p) {
          const std::uint32_t bw = bb[p * kNr + c];
          const float a_even = bf16_widen_daz(ab[r * kBlockK + 2 * p]);
          const float a_odd = bf16_widen_daz(ab[r * kBlockK + 2 * p + 1]);
          const float b_even = bf16_widen_daz(static_cast<std::uint16_t>(bw));
          const float b_odd = bf16_widen_daz(static_cast<std::uint16_t>(bw >> 16));
          even = flush_subnormal(std::fma(a_even, b_even, even));
          odd = flush_subnormal(std::fma(a_odd, b_odd, odd));
        }
        float& out = acc[r * kNr + c];
        out = flush_subnormal(out + flush_subnormal(even + odd));
      }
  }
}

}  // namespace

GemmMicroKernel gemm_microkernel_amx_emulated() {
  return {"amx_emulated_32x32", kMr, kNr, &microkernel_amx_emulated, GemmPacking::amx_bf16};
}

}  // namespace hal::cpu_ref
