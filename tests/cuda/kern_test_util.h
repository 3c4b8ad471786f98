#pragma once
// Helpers shared by the kernel tests (gemm, attention, rows): deterministic
// inputs without special values, and error bounds from rounding analysis.
#include <cmath>
#include <cstdint>
#include <vector>

#include "cuda_test_util.h"

namespace hal::cuda_test {

// Uniform values in [lo, hi) from a fixed LCG, rounded once to t.
inline HostTensor random_tensor(DType t, const Shape& shape, float lo, float hi, std::uint64_t seed) {
  const auto n = static_cast<std::size_t>(checked_numel(shape));
  std::vector<float> v(n);
  std::uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (std::size_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    const double u = static_cast<double>(s >> 11) * (1.0 / 9007199254740992.0);
    v[i] = static_cast<float>(lo + (hi - lo) * u);
  }
  return {t, shape, host_values(t, v)};
}

// Unit roundoff of fp32 accumulation.
inline constexpr double kU32 = 1.0 / 16777216.0;

// Ulps allowed for an output of dtype t whose fp32 value carries a small
// error: 16-bit outputs may round to either neighbour (1 ulp).
inline std::int64_t output_ulps(DType t) { return t == DType::f32 ? 4 : 1; }

}  // namespace hal::cuda_test
