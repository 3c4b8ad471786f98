#include "conformance/score.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace hal::conformance {

namespace {

// Float bits mapped to integers that are monotonic in the value, so that the
// distance between two of them counts representable values (ulps).
std::int64_t ordered_bits(const void* p, DType t) {
  const std::size_t w = dtype_size(t);
  std::uint64_t bits = 0;
  std::memcpy(&bits, p, w);
  const std::uint64_t sign = std::uint64_t{1} << (8 * w - 1);
  const auto mag = static_cast<std::int64_t>(bits & (sign - 1));
  return (bits & sign) ? -mag : mag;
}

std::int64_t ulp_distance(const std::uint8_t* out, DType t, double ref) {
  if (!is_floating(t)) return static_cast<std::int64_t>(std::fabs(load_element(out, t, 0) - ref));
  std::uint64_t tmp = 0;
  store_element(&tmp, t, 0, ref);
  const std::int64_t d = ordered_bits(out, t) - ordered_bits(&tmp, t);
  return d < 0 ? -d : d;
}

}  // namespace

Score score_output(std::span<const std::uint8_t> out, DType dtype, std::span<const double> ref,
                   std::span<const double> bounds, bool zero_sign, double bound_factor) {
  Score s;
  const std::size_t n = ref.size(), w = dtype_size(dtype);
  if (out.size() != n * w) {
    s.failure = fmt::format("output has {} bytes, expected {}", out.size(), n * w);
    s.score = INFINITY;
    return s;
  }
  double err2 = 0, ref2 = 0;
  const double max_finite = is_floating(dtype) ? dtype_max_finite(dtype) : INFINITY;
  auto fail = [&](std::size_t i, double o, double r, std::string_view why) {
    if (s.failure.empty()) s.failure = fmt::format("element {}: out {} ref {}: {}", i, o, r, why);
  };
  for (std::size_t i = 0; i < n; ++i) {
    const double o = load_element(out.data(), dtype, static_cast<std::int64_t>(i));
    double r = ref[i];
    double bound = bounds[i] * bound_factor;
    if (std::isfinite(r) && std::fabs(r) > max_finite) {
      // Out of range: the expected value is what rounding gives (inf or the
      // saturated maximum), and it must come out exactly.
      std::uint64_t tmp = 0;
      store_element(&tmp, dtype, 0, r);
      r = load_element(&tmp, dtype, 0);
      bound = 0.0;
    }
    if (std::isnan(r) || std::isnan(o)) {
      if (std::isnan(r) != std::isnan(o)) {
        fail(i, o, r, std::isnan(r) ? "NaN expected" : "NaN where the reference is not");
        s.score = INFINITY;
      }
      continue;
    }
    if (std::isinf(r) || std::isinf(o)) {
      if (o != r) {
        fail(i, o, r, "infinities must match exactly");
        s.score = INFINITY;
      }
      continue;
    }
    const double diff = std::fabs(o - r);
    err2 += diff * diff;
    ref2 += r * r;
    s.max_ulp = std::max(s.max_ulp, ulp_distance(out.data() + i * w, dtype, r));
    if (diff == 0.0) {
      if (zero_sign && r == 0.0 && std::signbit(o) != std::signbit(r)) {
        fail(i, o, r, "sign of zero differs");
        s.score = INFINITY;
      }
      continue;
    }
    const double e = bound > 0.0 ? diff / bound : INFINITY;
    if (e > 1.0) fail(i, o, r, bound > 0.0 ? fmt::format("error {:.3g} > bound {:.3g} (score {:.3g})", diff, bound, e)
                                           : std::string("exact result required"));
    s.score = std::max(s.score, e);
  }
  s.nmse = ref2 > 0.0 ? err2 / ref2 : (err2 > 0.0 ? INFINITY : 0.0);
  return s;
}

}  // namespace hal::conformance
