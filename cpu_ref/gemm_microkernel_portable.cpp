// Portable micro-kernel: plain C++ the compiler may auto-vectorise for the
// baseline ISA (SSE2). Host code builds with -ffp-contract=off (CMakeLists.txt),
// so a*b+c is never contracted into an FMA: each step is a rounded multiply
// then a rounded add, in ascending k.
#include "cpu_ref/gemm_microkernel.h"

namespace hal::cpu_ref {
namespace {

constexpr int kMr = 4;
constexpr int kNr = 8;  // 4x8 floats = 8 SSE registers of accumulators

void microkernel_portable(std::int64_t kc, const void* a_panel, const void* b_panel, float* acc) {
  const float* a = static_cast<const float*>(a_panel);
  const float* b = static_cast<const float*>(b_panel);
  float c[kMr][kNr];
  for (int r = 0; r < kMr; ++r)
    for (int j = 0; j < kNr; ++j) c[r][j] = acc[r * kNr + j];
  for (std::int64_t k = 0; k < kc; ++k) {
    const float* ak = a + k * kMr;
    const float* bk = b + k * kNr;
    for (int r = 0; r < kMr; ++r)
      for (int j = 0; j < kNr; ++j) c[r][j] += ak[r] * bk[j];
  }
  for (int r = 0; r < kMr; ++r)
    for (int j = 0; j < kNr; ++j) acc[r * kNr + j] = c[r][j];
}

}  // namespace

GemmMicroKernel gemm_microkernel_portable() { return {"portable", kMr, kNr, &microkernel_portable}; }

}  // namespace hal::cpu_ref
