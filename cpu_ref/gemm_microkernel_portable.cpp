// Portable micro-kernel: plain C++ the compiler may auto-vectorise for the
// baseline ISA (SSE2). Host code builds with -ffp-contract=off (CMakeLists.txt),
// so a*b+c is never contracted into an FMA: each step is a rounded multiply
// then a rounded add, in ascending k.
#include <cstdint>

#include "cpu_ref/gemm_microkernel.h"
#include "cpu_ref/gemm_stream_b.h"
#include "cpu_ref/half_convert.h"

namespace hal::cpu_ref {
namespace {

constexpr int kMr = 4;
constexpr int kNr = 8;  // 4x8 floats = 8 SSE registers of accumulators

// acc (4 x 8) += a (kc x 4) * b (kc rows of 8 B elements, ldb apart, widened exactly).
template <DType T> void update_tile(std::int64_t kc, const float* a, const void* b, std::int64_t ldb, float* acc) {
  float c[kMr][kNr];
  for (int r = 0; r < kMr; ++r)
    for (int j = 0; j < kNr; ++j) c[r][j] = acc[r * kNr + j];
  for (std::int64_t k = 0; k < kc; ++k) {
    const float* ak = a + k * kMr;
    float bk[kNr];
    for (int j = 0; j < kNr; ++j) {
      if constexpr (T == DType::f32) bk[j] = static_cast<const float*>(b)[k * ldb + j];
      else bk[j] = bf16_bits_to_float(static_cast<const std::uint16_t*>(b)[k * ldb + j]);
    }
    for (int r = 0; r < kMr; ++r)
      for (int j = 0; j < kNr; ++j) c[r][j] += ak[r] * bk[j];
  }
  for (int r = 0; r < kMr; ++r)
    for (int j = 0; j < kNr; ++j) acc[r * kNr + j] = c[r][j];
}

void microkernel_portable(std::int64_t kc, const void* a_panel, const void* b_panel, float* acc) {
  update_tile<DType::f32>(kc, static_cast<const float*>(a_panel), b_panel, kNr, acc);
}

// GemmStreamBFn: the tile update on B in place, in stream_b_tiles's order
// (the same per-element chain as through packing).
void stream_b(std::int64_t kc, const float* a, std::int64_t a_stride, std::int64_t rows, const void* b, DType b_dtype,
              std::int64_t ldb, std::int64_t panels, float* acc, std::int64_t acc_m_panels) {
  const bool bf16 = b_dtype == DType::bf16;
  stream_b_tiles<kMr, kNr>(kc, a, a_stride, rows, b, bf16 ? 2 : 4, ldb, panels, acc, acc_m_panels,
                           [bf16, ldb](std::int64_t kn, const float* ap, const void* bk, float* c, std::int64_t) {
                             if (bf16) update_tile<DType::bf16>(kn, ap, bk, ldb, c);
                             else update_tile<DType::f32>(kn, ap, bk, ldb, c);
                           });
}

}  // namespace

GemmMicroKernel gemm_microkernel_portable() {
  return {"portable", kMr, kNr, &microkernel_portable, GemmPacking::fp32, &stream_b};
}

}  // namespace hal::cpu_ref
