// The two fp8 families: OCP (f8e4m3 = e4m3fn, f8e5m2) and FNUZ (f8e4m3fnuz,
// f8e5m2fnuz). Every one of the 256 patterns of each decodes to the value its
// definition gives; encoding is checked against an independent nearest-value
// search at every midpoint and its neighbours; and `cast` between every pair
// of fp8 dtypes is checked exhaustively (all 256 source patterns), from and to
// the wide float dtypes over all 256 patterns, and between every pair of
// float dtypes on a set of hard values.
//
// The definitions used here are the formats' own (OCP 8-bit floating point
// specification; the FNUZ layout of AMD CDNA3 / LLVM's Float8E4M3FNUZ and
// Float8E5M2FNUZ: exponent bias 2^(e-1), no infinity, no negative zero, 0x80
// the only NaN), written independently of hal/dtype.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "hal/dtype.h"
#include "hal/stream.h"
#include "ops/ops.h"
#include "unit/test_helpers.h"

namespace {

using hal::DType;
using hal::test::cpu;
using hal::test::view_of;

enum class Specials { ocp_e4m3, ieee, fnuz };

struct Fp8Def {
  DType dtype;
  int exp_bits, mant_bits, bias;
  Specials specials;
};

const Fp8Def kE4M3{DType::f8e4m3, 4, 3, 7, Specials::ocp_e4m3};
const Fp8Def kE5M2{DType::f8e5m2, 5, 2, 15, Specials::ieee};
const Fp8Def kE4M3Fnuz{DType::f8e4m3fnuz, 4, 3, 8, Specials::fnuz};
const Fp8Def kE5M2Fnuz{DType::f8e5m2fnuz, 5, 2, 16, Specials::fnuz};
const Fp8Def* const kAll[] = {&kE4M3, &kE5M2, &kE4M3Fnuz, &kE5M2Fnuz};

double definition_value(const Fp8Def& f, std::uint32_t b) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (f.specials == Specials::fnuz && b == 0x80) return nan;
  const bool neg = (b >> 7) != 0;
  const std::uint32_t e = (b >> f.mant_bits) & ((1u << f.exp_bits) - 1);
  const std::uint32_t m = b & ((1u << f.mant_bits) - 1);
  const std::uint32_t e_max = (1u << f.exp_bits) - 1;
  double v;
  if (f.specials == Specials::ieee && e == e_max) v = m == 0 ? std::numeric_limits<double>::infinity() : nan;
  else if (f.specials == Specials::ocp_e4m3 && e == e_max && m == (1u << f.mant_bits) - 1) v = nan;
  else if (e == 0) v = std::ldexp(static_cast<double>(m), 1 - f.bias - f.mant_bits);
  else v = std::ldexp(static_cast<double>(m + (1u << f.mant_bits)), static_cast<int>(e) - f.bias - f.mant_bits);
  return neg ? -v : v;
}

bool is_nan_bits(const Fp8Def& f, std::uint32_t b) { return std::isnan(definition_value(f, b)); }

struct Grid {
  std::vector<double> values;  // positive finite, ascending
  std::vector<std::uint32_t> bits;
};
Grid positive_finite(const Fp8Def& f) {
  Grid g;
  for (std::uint32_t b = 0; b < 0x80; ++b) {
    const double v = definition_value(f, b);
    if (std::isfinite(v)) g.values.push_back(v), g.bits.push_back(b);
  }
  return g;
}

// Round-to-nearest-even onto the grid, saturating (Inf included) to +-max;
// NaN is reported through `nan`. A zero result of a negative input is -0 in
// OCP and +0 in FNUZ (which has no -0).
std::uint32_t reference_round(const Fp8Def& f, const Grid& g, double x, bool& nan) {
  nan = std::isnan(x);
  if (nan) return 0;
  const std::uint32_t sign = std::signbit(x) ? 0x80u : 0u;
  const double a = std::fabs(x);
  std::uint32_t mag;
  if (a >= g.values.back()) {
    mag = g.bits.back();
  } else {
    const std::size_t hi = static_cast<std::size_t>(std::lower_bound(g.values.begin(), g.values.end(), a) - g.values.begin());
    if (g.values[hi] == a) {
      mag = g.bits[hi];
    } else {
      const std::size_t lo = hi - 1;
      const double dlo = a - g.values[lo], dhi = g.values[hi] - a;
      mag = dlo < dhi ? g.bits[lo] : dhi < dlo ? g.bits[hi] : ((g.bits[lo] & 1) == 0 ? g.bits[lo] : g.bits[hi]);
    }
  }
  if (mag == 0 && f.specials == Specials::fnuz) return 0;
  return sign | mag;
}

float decode(const Fp8Def& f, std::uint8_t b) {
  switch (f.dtype) {
    case DType::f8e4m3: return hal::f8e4m3_to_f32(b);
    case DType::f8e5m2: return hal::f8e5m2_to_f32(b);
    case DType::f8e4m3fnuz: return hal::f8e4m3fnuz_to_f32(b);
    default: return hal::f8e5m2fnuz_to_f32(b);
  }
}
std::uint32_t encode(const Fp8Def& f, float v) {
  switch (f.dtype) {
    case DType::f8e4m3: return hal::f32_to_f8e4m3(v);
    case DType::f8e5m2: return hal::f32_to_f8e5m2(v);
    case DType::f8e4m3fnuz: return hal::f32_to_f8e4m3fnuz(v);
    default: return hal::f32_to_f8e5m2fnuz(v);
  }
}

TEST(Fp8Families, NamesPropertiesAndAliases) {
  EXPECT_EQ(hal::dtype_name(DType::f8e4m3fnuz), "f8e4m3fnuz");
  EXPECT_EQ(hal::dtype_name(DType::f8e5m2fnuz), "f8e5m2fnuz");
  EXPECT_EQ(hal::parse_dtype("f8e4m3fnuz"), DType::f8e4m3fnuz);
  EXPECT_EQ(hal::parse_dtype("float8_e4m3fnuz"), DType::f8e4m3fnuz);
  EXPECT_EQ(hal::parse_dtype("e5m2fnuz"), DType::f8e5m2fnuz);
  EXPECT_EQ(hal::parse_dtype("float8_e4m3fn"), DType::f8e4m3);
  EXPECT_EQ(hal::parse_dtype("e4m3fn"), DType::f8e4m3);
  for (const Fp8Def* f : kAll) {
    EXPECT_EQ(hal::dtype_size(f->dtype), 1u);
    EXPECT_TRUE(hal::is_fp8(f->dtype));
    EXPECT_TRUE(hal::is_floating(f->dtype));
    EXPECT_EQ(hal::is_fp8_fnuz(f->dtype), f->specials == Specials::fnuz);
    EXPECT_EQ(hal::dtype_max_finite(f->dtype), positive_finite(*f).values.back()) << hal::dtype_name(f->dtype);
    EXPECT_EQ(hal::dtype_epsilon(f->dtype), std::ldexp(1.0, -(f->mant_bits + 1)));
  }
  EXPECT_EQ(hal::dtype_max_finite(DType::f8e4m3fnuz), 240.0);
  EXPECT_EQ(hal::dtype_max_finite(DType::f8e5m2fnuz), 57344.0);
}

// All 256 patterns of each format decode exactly, and encode back to
// themselves (a NaN to a NaN; e5m2's infinities saturate to +-57344).
TEST(Fp8Families, AllPatternsDecodeExactlyAndRoundTrip) {
  for (const Fp8Def* f : kAll) {
    int nans = 0;
    for (std::uint32_t b = 0; b < 256; ++b) {
      const float v = decode(*f, static_cast<std::uint8_t>(b));
      const double want = definition_value(*f, b);
      if (std::isnan(want)) {
        ++nans;
        ASSERT_TRUE(std::isnan(v)) << hal::dtype_name(f->dtype) << " pattern " << b;
        ASSERT_TRUE(is_nan_bits(*f, encode(*f, v))) << hal::dtype_name(f->dtype) << " pattern " << b;
        continue;
      }
      ASSERT_EQ(static_cast<double>(v), want) << hal::dtype_name(f->dtype) << " pattern " << b;
      ASSERT_EQ(std::signbit(v), std::signbit(want)) << hal::dtype_name(f->dtype) << " pattern " << b;
      const std::uint32_t expect = std::isinf(want) ? ((b & 0x80u) | 0x7Bu) : b;
      ASSERT_EQ(encode(*f, v), expect) << hal::dtype_name(f->dtype) << " pattern " << b;
    }
    EXPECT_EQ(nans, f->specials == Specials::fnuz ? 1 : f->specials == Specials::ocp_e4m3 ? 2 : 6)
        << hal::dtype_name(f->dtype);
  }
}

// Every midpoint between neighbouring values rounds to the even pattern; the
// f32 neighbours of a midpoint and of each value round to the nearer one;
// both signs; and the FNUZ sign rule at zero.
TEST(Fp8Families, EncodingMatchesNearestValueSearch) {
  for (const Fp8Def* f : kAll) {
    const Grid g = positive_finite(*f);
    std::vector<float> probes = {0.0f, -0.0f, std::numeric_limits<float>::denorm_min(), 1e-30f, 1e30f,
                                 std::numeric_limits<float>::max(), std::numeric_limits<float>::infinity()};
    for (std::size_t i = 0; i + 1 < g.values.size(); ++i) {
      const float lo = static_cast<float>(g.values[i]), hi = static_cast<float>(g.values[i + 1]);
      const float mid = static_cast<float>((g.values[i] + g.values[i + 1]) / 2);
      for (float p : {lo, hi, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f), std::nextafter(lo, 1e9f),
                      std::nextafter(hi, 0.0f)})
        probes.push_back(p);
    }
    // Past the largest value: half an ulp above, and far.
    const double top = g.values.back(), ulp = top - g.values[g.values.size() - 2];
    probes.push_back(static_cast<float>(top + ulp / 2));
    probes.push_back(static_cast<float>(top + ulp));
    for (float p : probes) {
      for (float x : {p, -p}) {
        bool nan = false;
        const std::uint32_t want = reference_round(*f, g, x, nan);
        ASSERT_EQ(encode(*f, x), want) << hal::dtype_name(f->dtype) << " of " << x;
      }
    }
    const std::uint32_t nan_bits = encode(*f, std::numeric_limits<float>::quiet_NaN());
    EXPECT_TRUE(is_nan_bits(*f, nan_bits));
    EXPECT_TRUE(is_nan_bits(*f, encode(*f, -std::numeric_limits<float>::quiet_NaN())));
  }
}

TEST(Fp8Families, FnuzHardCases) {
  EXPECT_EQ(hal::f32_to_f8e4m3fnuz(1.0f), 0x40);         // exponent field 8 = bias
  EXPECT_EQ(hal::f32_to_f8e4m3fnuz(240.0f), 0x7F);       // the largest value is all ones
  EXPECT_EQ(hal::f32_to_f8e4m3fnuz(248.0f), 0x7F);       // saturates
  EXPECT_EQ(hal::f32_to_f8e4m3fnuz(-1e9f), 0xFF);
  EXPECT_EQ(hal::f32_to_f8e4m3fnuz(-std::numeric_limits<float>::infinity()), 0xFF);
  EXPECT_EQ(hal::f32_to_f8e4m3fnuz(std::numeric_limits<float>::quiet_NaN()), 0x80);
  EXPECT_EQ(hal::f32_to_f8e4m3fnuz(-0.0f), 0x00);        // no negative zero
  EXPECT_EQ(hal::f32_to_f8e4m3fnuz(-0x1p-12f), 0x00);    // rounds to zero: +0, not the NaN
  EXPECT_EQ(hal::f32_to_f8e4m3fnuz(0x1p-10f), 0x01);     // smallest subnormal
  EXPECT_EQ(hal::f32_to_f8e4m3fnuz(-0x1p-11f), 0x00);    // tie with zero: even (zero), positive
  EXPECT_EQ(hal::f32_to_f8e4m3fnuz(-std::nextafter(0x1p-11f, 1.0f)), 0x81);
  EXPECT_EQ(hal::f32_to_f8e5m2fnuz(1.0f), 0x40);
  EXPECT_EQ(hal::f32_to_f8e5m2fnuz(57344.0f), 0x7F);
  EXPECT_EQ(hal::f32_to_f8e5m2fnuz(std::numeric_limits<float>::infinity()), 0x7F);
  EXPECT_EQ(hal::f32_to_f8e5m2fnuz(0x1p-17f), 0x01);
  EXPECT_EQ(hal::f32_to_f8e5m2fnuz(-0.0f), 0x00);
  EXPECT_TRUE(std::isnan(hal::f8e5m2fnuz_to_f32(0x80)));
  EXPECT_EQ(hal::f8e5m2fnuz_to_f32(0xFF), -57344.0f);
  EXPECT_EQ(hal::f8e4m3fnuz_to_f32(0xFF), -240.0f);
}

// Element access takes the fnuz types like the others; doubles round once.
TEST(Fp8Families, ElementAccessRoundsOnce) {
  std::uint8_t q = 0;
  // 1 + 2^-4 + tiny: above the midpoint of 1 and 1.125, so 1.125 (e4m3), not
  // 1 as rounding first to f32 (RNE, tie) and then to fp8 would give.
  hal::store_element(&q, DType::f8e4m3fnuz, 0, 1.0 + 0x1p-4 + 0x1p-40);
  EXPECT_EQ(q, 0x41);
  hal::store_element(&q, DType::f8e5m2fnuz, 0, -3.0);
  EXPECT_EQ(hal::load_element(&q, DType::f8e5m2fnuz, 0), -3.0);
  hal::store_element_f32(&q, DType::f8e4m3fnuz, 0, -0.0f);
  EXPECT_EQ(q, 0x00);
}

// Casting an fp8 pattern through `cast` on the CPU: the value of the source
// pattern, rounded by the reference to the target (saturating; NaN stays
// NaN). All 256 patterns for each of the 16 ordered pairs, with scale 1 and
// with a scale that moves values across the ranges.
TEST(Fp8Families, CastBetweenEveryFp8PairIsExhaustivelyExact) {
  hal::Stream s(cpu());
  std::vector<std::uint8_t> x(256), y(256);
  for (std::uint32_t b = 0; b < 256; ++b) x[b] = static_cast<std::uint8_t>(b);
  for (const Fp8Def* from : kAll)
    for (const Fp8Def* to : kAll) {
      const Grid g = positive_finite(*to);
      for (float scale : {1.0f, 0.25f, 8.0f}) {
        std::fill(y.begin(), y.end(), 0xAA);
        hal::ops::cast(s, view_of(x, from->dtype, {256}), view_of(y, to->dtype, {256}), {.scale = scale});
        s.synchronize();
        for (std::uint32_t b = 0; b < 256; ++b) {
          // The value times a power of two is exact in double and in f32.
          const double v = definition_value(*from, b) * scale;
          bool nan = false;
          const std::uint32_t want = reference_round(*to, g, v, nan);
          if (nan) {
            ASSERT_TRUE(is_nan_bits(*to, y[b])) << hal::dtype_name(from->dtype) << "->" << hal::dtype_name(to->dtype)
                                                << " pattern " << b;
          } else {
            ASSERT_EQ(y[b], want) << hal::dtype_name(from->dtype) << "->" << hal::dtype_name(to->dtype) << " pattern "
                                  << b << " scale " << scale;
          }
        }
      }
    }
}

// fp8 -> f32/f64/f16/bf16 is exact for every pattern (every fp8 value is a
// bf16 and an f16 value), and back again gives the pattern (NaN: a NaN).
TEST(Fp8Families, WideningCastsAreExactForEveryPattern) {
  hal::Stream s(cpu());
  std::vector<std::uint8_t> x(256), back(256);
  for (std::uint32_t b = 0; b < 256; ++b) x[b] = static_cast<std::uint8_t>(b);
  for (const Fp8Def* f : kAll)
    for (DType wide : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
      std::vector<std::uint8_t> w(256 * hal::dtype_size(wide));
      const hal::Tensor wt = view_of(w, wide, {256});
      hal::ops::cast(s, view_of(x, f->dtype, {256}), wt);
      hal::ops::cast(s, wt, view_of(back, f->dtype, {256}));
      s.synchronize();
      for (std::uint32_t b = 0; b < 256; ++b) {
        const double want = definition_value(*f, b);
        const double got = hal::load_element(w.data(), wide, b);
        if (std::isnan(want)) {
          ASSERT_TRUE(std::isnan(got));
          ASSERT_TRUE(is_nan_bits(*f, back[b]));
          continue;
        }
        ASSERT_EQ(got, want) << hal::dtype_name(f->dtype) << "->" << hal::dtype_name(wide) << " pattern " << b;
        ASSERT_EQ(std::signbit(got), std::signbit(want));
        const std::uint32_t expect = std::isinf(want) ? ((b & 0x80u) | 0x7Bu) : b;
        ASSERT_EQ(back[b], expect) << hal::dtype_name(f->dtype) << " via " << hal::dtype_name(wide) << " pattern " << b;
      }
    }
}

// Every ordered pair of the eight float dtypes on values that stress each
// target (ties, overflow, subnormals, signed zero, NaN, Inf): the result is
// the host conversion of fp32(x * scale) (fp64 when either side is f64).
TEST(Fp8Families, CastBetweenEveryFloatPair) {
  const DType floats[] = {DType::f32,    DType::f16,    DType::bf16,       DType::f64,
                          DType::f8e4m3, DType::f8e5m2, DType::f8e4m3fnuz, DType::f8e5m2fnuz};
  const double values[] = {0.0,    -0.0,  1.0,     -1.5,    1.0625,  240.0, 248.0,   448.0, 464.0,  57344.0,
                           61440.0, 65504.0, 1e6,  -1e30,   0x1p-10, 0x1p-17, 3e-8, 1.0 / 3, 0x1p-140,
                           std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN()};
  constexpr std::int64_t n = sizeof(values) / sizeof(values[0]);
  hal::Stream s(cpu());
  for (DType from : floats)
    for (DType to : floats) {
      std::vector<std::uint8_t> x(n * hal::dtype_size(from)), y(n * hal::dtype_size(to), 0xAA);
      for (std::int64_t i = 0; i < n; ++i) hal::store_element(x.data(), from, i, values[i]);
      hal::ops::cast(s, view_of(x, from, {n}), view_of(y, to, {n}));
      s.synchronize();
      for (std::int64_t i = 0; i < n; ++i) {
        std::vector<std::uint8_t> want(8);
        if (from == DType::f64 || to == DType::f64) hal::store_element(want.data(), to, 0, hal::load_element(x.data(), from, i));
        else hal::store_element_f32(want.data(), to, 0, hal::load_element_f32(x.data(), from, i));
        const double w = hal::load_element(want.data(), to, 0), got = hal::load_element(y.data(), to, i);
        if (std::isnan(w)) {
          ASSERT_TRUE(std::isnan(got)) << hal::dtype_name(from) << "->" << hal::dtype_name(to) << " value " << values[i];
          continue;
        }
        ASSERT_EQ(std::memcmp(want.data(), y.data() + i * hal::dtype_size(to), hal::dtype_size(to)), 0)
            << hal::dtype_name(from) << "->" << hal::dtype_name(to) << " value " << values[i] << ": got " << got
            << ", want " << w;
        if (hal::is_fp8(to)) {
          ASSERT_LE(std::fabs(got), hal::dtype_max_finite(to));  // saturating
        }
      }
    }
}

}  // namespace
