#pragma once
// Scoring one output against its reference: error / bound per element (pass
// at <= 1), special values, NMSE and the ulp distance in the output dtype.
#include <cstdint>
#include <limits>
#include <span>
#include <string>

#include "hal/dtype.h"

namespace hal::conformance {

struct Score {
  double score = 0.0;       // max over elements of |out - ref| / bound
  double nmse = 0.0;        // sum (out - ref)^2 / sum ref^2 over finite pairs
  std::int64_t max_ulp = 0; // max distance to the correctly rounded reference, in output ulps
  std::string failure;      // empty when every element passes
  bool passed() const { return failure.empty(); }
};

// `out`: the device's bytes (numel elements of `dtype`), `ref`/`bounds` from
// the oracle, `bound_factor` multiplies every bound (2 when comparing two
// devices that each meet the contract). Rules:
//  - NaN in ref must be NaN in out and vice versa;
//  - infinities must match exactly (sign included); an infinity in out where
//    ref is finite fails;
//  - a reference beyond the output dtype's range must round the way the host
//    conversion does (inf for f32/f16/bf16, saturation for fp8), exactly;
//  - bound 0 means exact, and with zero_sign the sign of zero must match.
Score score_output(std::span<const std::uint8_t> out, DType dtype, std::span<const double> ref,
                   std::span<const double> bounds, bool zero_sign, double bound_factor = 1.0);

}  // namespace hal::conformance
