// DType names and the bit-exact conversions of hal/dtype.h.
//
// Expected values come from the format definitions (IEEE 754 binary16,
// bfloat16, OCP fp8 e4m3fn / e5m2), from an independent nearest-value search
// over each format's decoded values, and from the x86 F16C instruction.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "cpu_ref/cpu_features.h"
#include "hal/dtype.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAL_TEST_HAVE_X86 1
#endif

namespace {

using hal::DType;

std::uint32_t bits_of(float f) { return std::bit_cast<std::uint32_t>(f); }
float float_of(std::uint32_t b) { return std::bit_cast<float>(b); }
float up(float f) { return std::nextafter(f, std::numeric_limits<float>::infinity()); }
float down(float f) { return std::nextafter(f, -std::numeric_limits<float>::infinity()); }
const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// A narrow format as the tests see it: a decoder, an encoder and its layout,
// described independently of the implementation.
struct Narrow {
  const char* name;
  int total_bits;  // 16 or 8
  int exp_bits, mant_bits;
  bool ieee_specials;  // all-ones exponent = Inf/NaN (f16, bf16, e5m2)
  bool saturating;     // fp8: out-of-range finite/Inf saturates
  float (*decode)(std::uint32_t);
  std::uint32_t (*encode)(float);
};

const Narrow kF16{"f16", 16, 5, 10, true, false, [](std::uint32_t b) { return hal::f16_to_f32(static_cast<std::uint16_t>(b)); },
                  [](float v) -> std::uint32_t { return hal::f32_to_f16(v); }};
const Narrow kBF16{"bf16", 16, 8, 7, true, false, [](std::uint32_t b) { return hal::bf16_to_f32(static_cast<std::uint16_t>(b)); },
                   [](float v) -> std::uint32_t { return hal::f32_to_bf16(v); }};
const Narrow kE4M3{"f8e4m3", 8, 4, 3, false, true, [](std::uint32_t b) { return hal::f8e4m3_to_f32(static_cast<std::uint8_t>(b)); },
                   [](float v) -> std::uint32_t { return hal::f32_to_f8e4m3(v); }};
const Narrow kE5M2{"f8e5m2", 8, 5, 2, true, true, [](std::uint32_t b) { return hal::f8e5m2_to_f32(static_cast<std::uint8_t>(b)); },
                   [](float v) -> std::uint32_t { return hal::f32_to_f8e5m2(v); }};
const Narrow* const kNarrow[] = {&kF16, &kBF16, &kE4M3, &kE5M2};

// Value of a bit pattern from the format definition (double arithmetic).
double reference_value(const Narrow& f, std::uint32_t b) {
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  const std::uint32_t sign = b >> (f.total_bits - 1);
  const std::uint32_t e = (b >> f.mant_bits) & ((1u << f.exp_bits) - 1);
  const std::uint32_t m = b & ((1u << f.mant_bits) - 1);
  const std::uint32_t e_max = (1u << f.exp_bits) - 1;
  double v;
  if (f.ieee_specials && e == e_max) {
    v = m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (!f.ieee_specials && e == e_max && m == (1u << f.mant_bits) - 1) {
    v = std::numeric_limits<double>::quiet_NaN();  // e4m3fn: S.1111.111 is the only NaN
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - bias - f.mant_bits);
  } else {
    v = std::ldexp(static_cast<double>(m + (1u << f.mant_bits)), static_cast<int>(e) - bias - f.mant_bits);
  }
  return sign ? -v : v;
}

// Positive finite values of a format, ascending, with their bit patterns.
struct Grid {
  std::vector<double> values;
  std::vector<std::uint32_t> bits;
};
Grid positive_finite(const Narrow& f) {
  Grid g;
  for (std::uint32_t b = 0; b < (1u << (f.total_bits - 1)); ++b) {
    const double v = reference_value(f, b);
    if (std::isfinite(v)) {
      g.values.push_back(v);
      g.bits.push_back(b);
    }
  }
  return g;  // patterns of a positive float ascend with their values
}

// Independent RNE: nearest grid value, ties to the even pattern; beyond the
// largest finite value by half an ulp or more, Inf (IEEE) or max (saturating).
std::uint32_t reference_round(const Narrow& f, const Grid& g, float x) {
  const std::uint32_t sign = std::signbit(x) ? 1u << (f.total_bits - 1) : 0u;
  const double a = std::fabs(static_cast<double>(x));
  const double max = g.values.back();
  const std::uint32_t max_bits = g.bits.back();
  const std::uint32_t inf_bits = ((1u << f.exp_bits) - 1) << f.mant_bits;
  if (std::isinf(x)) return sign | (f.saturating ? max_bits : inf_bits);
  if (a > max) {
    if (f.saturating) return sign | max_bits;
    const double ulp = max - g.values[g.values.size() - 2];
    return sign | (a >= max + ulp / 2 ? inf_bits : max_bits);
  }
  const auto it = std::lower_bound(g.values.begin(), g.values.end(), a);
  const std::size_t hi = static_cast<std::size_t>(it - g.values.begin());
  if (g.values[hi] == a) return sign | g.bits[hi];
  const std::size_t lo = hi - 1;
  const double dlo = a - g.values[lo], dhi = g.values[hi] - a;
  if (dlo < dhi) return sign | g.bits[lo];
  if (dhi < dlo) return sign | g.bits[hi];
  return sign | ((g.bits[lo] & 1) == 0 ? g.bits[lo] : g.bits[hi]);
}

bool is_nan_pattern(const Narrow& f, std::uint32_t b) { return std::isnan(reference_value(f, b)); }

// ---------------------------------------------------------------------------

TEST(DType, NamesRoundTripAndAliases) {
  for (DType t : hal::kAllDTypes) {
    auto parsed = hal::parse_dtype(hal::dtype_name(t));
    ASSERT_TRUE(parsed.has_value()) << hal::dtype_name(t);
    EXPECT_EQ(*parsed, t);
  }
  EXPECT_EQ(hal::dtype_name(DType::boolean), "bool");
  EXPECT_EQ(hal::dtype_name(DType::f8e4m3), "f8e4m3");
  EXPECT_EQ(hal::parse_dtype("float32"), DType::f32);
  EXPECT_EQ(hal::parse_dtype("fp32"), DType::f32);
  EXPECT_EQ(hal::parse_dtype("float16"), DType::f16);
  EXPECT_EQ(hal::parse_dtype("fp16"), DType::f16);
  EXPECT_EQ(hal::parse_dtype("bfloat16"), DType::bf16);
  EXPECT_EQ(hal::parse_dtype("float64"), DType::f64);
  EXPECT_EQ(hal::parse_dtype("int8"), DType::i8);
  EXPECT_EQ(hal::parse_dtype("int32"), DType::i32);
  EXPECT_EQ(hal::parse_dtype("int64"), DType::i64);
  EXPECT_EQ(hal::parse_dtype("e4m3"), DType::f8e4m3);
  EXPECT_EQ(hal::parse_dtype("e5m2"), DType::f8e5m2);
  EXPECT_FALSE(hal::parse_dtype("f31").has_value());
  EXPECT_FALSE(hal::parse_dtype("").has_value());
  EXPECT_FALSE(hal::parse_dtype("F32").has_value());
}

TEST(DType, SizesAndClasses) {
  EXPECT_EQ(hal::dtype_size(DType::f32), 4u);
  EXPECT_EQ(hal::dtype_size(DType::f16), 2u);
  EXPECT_EQ(hal::dtype_size(DType::bf16), 2u);
  EXPECT_EQ(hal::dtype_size(DType::f8e4m3), 1u);
  EXPECT_EQ(hal::dtype_size(DType::f8e5m2), 1u);
  EXPECT_EQ(hal::dtype_size(DType::i8), 1u);
  EXPECT_EQ(hal::dtype_size(DType::i32), 4u);
  EXPECT_EQ(hal::dtype_size(DType::i64), 8u);
  EXPECT_EQ(hal::dtype_size(DType::boolean), 1u);
  EXPECT_EQ(hal::dtype_size(DType::f64), 8u);
  for (DType t : hal::kAllDTypes) {
    const bool fp8 = t == DType::f8e4m3 || t == DType::f8e5m2 || t == DType::f8e4m3fnuz || t == DType::f8e5m2fnuz;
    const bool integer = t == DType::i8 || t == DType::i32 || t == DType::i64;
    EXPECT_EQ(hal::is_fp8(t), fp8) << hal::dtype_name(t);
    EXPECT_EQ(hal::is_integer(t), integer) << hal::dtype_name(t);
    EXPECT_EQ(hal::is_floating(t), !integer && t != DType::boolean) << hal::dtype_name(t);
  }
}

TEST(DType, EpsilonAndMaxFinite) {
  EXPECT_EQ(hal::dtype_epsilon(DType::f32), std::ldexp(1.0, -24));
  EXPECT_EQ(hal::dtype_epsilon(DType::f16), std::ldexp(1.0, -11));
  EXPECT_EQ(hal::dtype_epsilon(DType::bf16), std::ldexp(1.0, -8));
  EXPECT_EQ(hal::dtype_epsilon(DType::f8e4m3), std::ldexp(1.0, -4));
  EXPECT_EQ(hal::dtype_epsilon(DType::f8e5m2), std::ldexp(1.0, -3));
  EXPECT_EQ(hal::dtype_epsilon(DType::f64), std::ldexp(1.0, -53));
  EXPECT_EQ(hal::dtype_epsilon(DType::i32), 0.0);
  EXPECT_EQ(hal::dtype_epsilon(DType::boolean), 0.0);
  EXPECT_EQ(hal::dtype_max_finite(DType::f16), 65504.0);
  EXPECT_EQ(hal::dtype_max_finite(DType::bf16), std::ldexp(255.0, 120));
  EXPECT_EQ(hal::dtype_max_finite(DType::f8e4m3), 448.0);
  EXPECT_EQ(hal::dtype_max_finite(DType::f8e5m2), 57344.0);
  EXPECT_EQ(hal::dtype_max_finite(DType::f32), static_cast<double>(std::numeric_limits<float>::max()));
  EXPECT_EQ(hal::dtype_max_finite(DType::f64), std::numeric_limits<double>::max());
}

// Every bit pattern decodes to the value its definition gives, and encodes
// back to itself (NaNs: stay NaN; e5m2 infinities: saturate to +-57344).
TEST(DType, AllPatternsDecodeExactlyAndRoundTrip) {
  for (const Narrow* f : kNarrow) {
    for (std::uint32_t b = 0; b < (1u << f->total_bits); ++b) {
      const float v = f->decode(b);
      const double ref = reference_value(*f, b);
      if (std::isnan(ref)) {
        ASSERT_TRUE(std::isnan(v)) << f->name << " pattern " << b;
        ASSERT_TRUE(is_nan_pattern(*f, f->encode(v))) << f->name << " pattern " << b;
        continue;
      }
      ASSERT_EQ(static_cast<double>(v), ref) << f->name << " pattern " << b;
      ASSERT_EQ(std::signbit(v), std::signbit(ref)) << f->name << " pattern " << b;
      // e5m2's infinities saturate on the way back (cvt.satfinite).
      const std::uint32_t sign = b & (1u << (f->total_bits - 1));
      const std::uint32_t expect = std::isinf(ref) && f->saturating ? (sign | 0x7Bu) : b;
      ASSERT_EQ(f->encode(v), expect) << f->name << " pattern " << b;
    }
  }
}

// For every pair of adjacent values (a, next(a)) of each format: the exact
// midpoint (representable in f32) rounds to the even pattern, and the f32
// neighbours of the midpoint round to the nearer value. Both signs.
TEST(DType, MidpointsRoundToEvenAndNeighboursToNearer) {
  for (const Narrow* f : kNarrow) {
    const Grid g = positive_finite(*f);
    const std::uint32_t sign = 1u << (f->total_bits - 1);
    for (std::size_t i = 0; i + 1 < g.values.size(); ++i) {
      const float lo = static_cast<float>(g.values[i]), hi = static_cast<float>(g.values[i + 1]);
      const float mid = static_cast<float>((g.values[i] + g.values[i + 1]) / 2);
      ASSERT_EQ(static_cast<double>(mid), (g.values[i] + g.values[i + 1]) / 2) << "midpoint not exact in f32";
      const std::uint32_t even = (g.bits[i] & 1) == 0 ? g.bits[i] : g.bits[i + 1];
      ASSERT_EQ(f->encode(mid), even) << f->name << " midpoint of " << lo << ", " << hi;
      ASSERT_EQ(f->encode(-mid), sign | even) << f->name << " midpoint of " << -lo << ", " << -hi;
      ASSERT_EQ(f->encode(down(mid)), g.bits[i]) << f->name << " just below midpoint " << mid;
      ASSERT_EQ(f->encode(up(mid)), g.bits[i + 1]) << f->name << " just above midpoint " << mid;
      ASSERT_EQ(f->encode(-up(mid)), sign | g.bits[i + 1]) << f->name;
      ASSERT_EQ(f->encode(up(lo)), g.bits[i]) << f->name << " just above " << lo;
      ASSERT_EQ(f->encode(down(hi)), g.bits[i + 1]) << f->name << " just below " << hi;
    }
  }
}

TEST(DType, F16HardCases) {
  EXPECT_EQ(hal::f32_to_f16(1.0f), 0x3C00);
  EXPECT_EQ(hal::f32_to_f16(1.0f + 0x1p-11f), 0x3C00);            // tie, down to even
  EXPECT_EQ(hal::f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3C02);        // tie, up to even
  EXPECT_EQ(hal::f32_to_f16(up(1.0f + 0x1p-11f)), 0x3C01);
  EXPECT_EQ(hal::f32_to_f16(down(1.0f + 3 * 0x1p-11f)), 0x3C01);
  EXPECT_EQ(hal::f32_to_f16(0x1p-24f), 0x0001);                   // smallest subnormal
  EXPECT_EQ(hal::f32_to_f16(0x1p-25f), 0x0000);                   // tie with 0: even is 0
  EXPECT_EQ(hal::f32_to_f16(up(0x1p-25f)), 0x0001);
  EXPECT_EQ(hal::f32_to_f16(3 * 0x1p-25f), 0x0002);               // tie 1 / 2: even is 2
  EXPECT_EQ(hal::f32_to_f16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(hal::f32_to_f16(-std::numeric_limits<float>::denorm_min()), 0x8000);
  EXPECT_EQ(hal::f32_to_f16(0x1p-14f), 0x0400);                   // smallest normal
  EXPECT_EQ(hal::f32_to_f16(0x1p-14f - 0x1p-25f), 0x0400);        // tie 0x03FF/0x0400: even
  EXPECT_EQ(hal::f32_to_f16(down(0x1p-14f - 0x1p-25f)), 0x03FF);
  EXPECT_EQ(hal::f32_to_f16(65504.0f), 0x7BFF);
  EXPECT_EQ(hal::f32_to_f16(65520.0f), 0x7C00);                   // rounds to Inf
  EXPECT_EQ(hal::f32_to_f16(down(65520.0f)), 0x7BFF);
  EXPECT_EQ(hal::f32_to_f16(-65520.0f), 0xFC00);
  EXPECT_EQ(hal::f32_to_f16(1e9f), 0x7C00);
  EXPECT_EQ(hal::f32_to_f16(kInf), 0x7C00);
  EXPECT_EQ(hal::f32_to_f16(-kInf), 0xFC00);
  EXPECT_EQ(hal::f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(hal::f32_to_f16(0.0f), 0x0000);
  EXPECT_EQ(hal::f32_to_f16(kNaN), 0x7FFF);   // NVIDIA's canonical NaN
  EXPECT_EQ(hal::f32_to_f16(-kNaN), 0x7FFF);
  EXPECT_TRUE(std::isnan(hal::f16_to_f32(0xFE00)));
  EXPECT_TRUE(std::isinf(hal::f16_to_f32(0xFC00)) && hal::f16_to_f32(0xFC00) < 0);
}

TEST(DType, BF16HardCases) {
  EXPECT_EQ(hal::f32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(hal::f32_to_bf16(1.0f + 0x1p-8f), 0x3F80);
  EXPECT_EQ(hal::f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3F82);
  EXPECT_EQ(hal::f32_to_bf16(up(1.0f + 0x1p-8f)), 0x3F81);
  EXPECT_EQ(hal::f32_to_bf16(0x1p-133f), 0x0001);                 // smallest bf16 subnormal
  EXPECT_EQ(hal::f32_to_bf16(0x1p-134f), 0x0000);                 // tie with 0
  EXPECT_EQ(hal::f32_to_bf16(up(0x1p-134f)), 0x0001);
  EXPECT_EQ(hal::f32_to_bf16(0x1p-126f - 0x1p-134f), 0x0080);     // tie 0x007F/0x0080: even
  EXPECT_EQ(hal::f32_to_bf16(std::numeric_limits<float>::denorm_min()), 0x0000);
  const float bf16_max = std::ldexp(255.0f, 120);
  const float overflow = std::ldexp(511.0f, 119);  // max + half an ulp
  EXPECT_EQ(hal::f32_to_bf16(bf16_max), 0x7F7F);
  EXPECT_EQ(hal::f32_to_bf16(overflow), 0x7F80);
  EXPECT_EQ(hal::f32_to_bf16(down(overflow)), 0x7F7F);
  EXPECT_EQ(hal::f32_to_bf16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(hal::f32_to_bf16(-kInf), 0xFF80);
  EXPECT_EQ(hal::f32_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(hal::f32_to_bf16(kNaN), 0x7FFF);
  // A NaN whose payload lies only in the low 16 bits must not truncate to Inf.
  EXPECT_TRUE(std::isnan(hal::bf16_to_f32(hal::f32_to_bf16(float_of(0x7F800001u)))));
}

TEST(DType, F8E4M3HardCases) {
  EXPECT_EQ(hal::f32_to_f8e4m3(1.0f), 0x38);
  EXPECT_EQ(hal::f32_to_f8e4m3(1.0f + 0x1p-4f), 0x38);
  EXPECT_EQ(hal::f32_to_f8e4m3(1.0f + 3 * 0x1p-4f), 0x3A);
  EXPECT_EQ(hal::f32_to_f8e4m3(0x1p-9f), 0x01);                   // smallest subnormal
  EXPECT_EQ(hal::f32_to_f8e4m3(0x1p-10f), 0x00);
  EXPECT_EQ(hal::f32_to_f8e4m3(up(0x1p-10f)), 0x01);
  EXPECT_EQ(hal::f32_to_f8e4m3(3 * 0x1p-10f), 0x02);
  EXPECT_EQ(hal::f32_to_f8e4m3(15 * 0x1p-10f), 0x08);             // tie 0x07/0x08 at the normal boundary
  EXPECT_EQ(hal::f32_to_f8e4m3(0x1p-6f), 0x08);
  EXPECT_EQ(hal::f32_to_f8e4m3(448.0f), 0x7E);
  EXPECT_EQ(hal::f32_to_f8e4m3(464.0f), 0x7E);                    // saturates, never NaN
  EXPECT_EQ(hal::f32_to_f8e4m3(500.0f), 0x7E);
  EXPECT_EQ(hal::f32_to_f8e4m3(1e9f), 0x7E);
  EXPECT_EQ(hal::f32_to_f8e4m3(-1e9f), 0xFE);
  EXPECT_EQ(hal::f32_to_f8e4m3(kInf), 0x7E);
  EXPECT_EQ(hal::f32_to_f8e4m3(-kInf), 0xFE);
  EXPECT_EQ(hal::f32_to_f8e4m3(kNaN), 0x7F);
  EXPECT_EQ(hal::f32_to_f8e4m3(-kNaN), 0xFF);
  EXPECT_EQ(hal::f32_to_f8e4m3(-0.0f), 0x80);
  EXPECT_EQ(hal::f8e4m3_to_f32(0x7E), 448.0f);
  EXPECT_EQ(hal::f8e4m3_to_f32(0x01), 0x1p-9f);
  EXPECT_TRUE(std::isnan(hal::f8e4m3_to_f32(0xFF)));
}

TEST(DType, F8E5M2HardCases) {
  EXPECT_EQ(hal::f32_to_f8e5m2(1.0f), 0x3C);
  EXPECT_EQ(hal::f32_to_f8e5m2(1.0f + 0x1p-3f), 0x3C);
  EXPECT_EQ(hal::f32_to_f8e5m2(1.0f + 3 * 0x1p-3f), 0x3E);
  EXPECT_EQ(hal::f32_to_f8e5m2(0x1p-16f), 0x01);
  EXPECT_EQ(hal::f32_to_f8e5m2(0x1p-17f), 0x00);
  EXPECT_EQ(hal::f32_to_f8e5m2(up(0x1p-17f)), 0x01);
  EXPECT_EQ(hal::f32_to_f8e5m2(57344.0f), 0x7B);
  EXPECT_EQ(hal::f32_to_f8e5m2(61440.0f), 0x7B);                  // would round to Inf: saturates
  EXPECT_EQ(hal::f32_to_f8e5m2(1e9f), 0x7B);
  EXPECT_EQ(hal::f32_to_f8e5m2(kInf), 0x7B);
  EXPECT_EQ(hal::f32_to_f8e5m2(-kInf), 0xFB);
  EXPECT_EQ(hal::f32_to_f8e5m2(kNaN), 0x7E);
  EXPECT_EQ(hal::f32_to_f8e5m2(-kNaN), 0xFE);
  EXPECT_EQ(hal::f32_to_f8e5m2(-0.0f), 0x80);
  EXPECT_TRUE(std::isinf(hal::f8e5m2_to_f32(0x7C)));
  EXPECT_EQ(hal::f8e5m2_to_f32(0x7B), 57344.0f);
}

// Random f32s (all exponents, and concentrated on each format's range)
// against the independent nearest-value search.
TEST(DType, RandomFloatsMatchNearestValueSearch) {
  std::mt19937 rng(12345);
  for (const Narrow* f : kNarrow) {
    const Grid g = positive_finite(*f);
    const int bias = (1 << (f->exp_bits - 1)) - 1;
    std::uniform_int_distribution<int> exp_dist(-bias - f->mant_bits - 2, bias + 3);
    for (int i = 0; i < 200000; ++i) {
      float x;
      if (i % 2 == 0) {
        x = float_of(static_cast<std::uint32_t>(rng()));
        if (std::isnan(x)) continue;
      } else {
        const std::uint32_t mant = static_cast<std::uint32_t>(rng()) & 0x807FFFFFu;  // sign + mantissa
        x = float_of(mant | static_cast<std::uint32_t>(std::clamp(exp_dist(rng) + 127, 0, 254)) << 23);
      }
      ASSERT_EQ(f->encode(x), reference_round(*f, g, x)) << f->name << " x=" << x << " bits=" << bits_of(x);
    }
  }
}

#if HAL_TEST_HAVE_X86
__attribute__((target("f16c"))) std::uint16_t f16c_convert(float x) {
  return static_cast<std::uint16_t>(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT));
}
#endif

TEST(DType, F16MatchesHardwareF16C) {
#if HAL_TEST_HAVE_X86
  // hal's own CPUID probe: Clang's __builtin_cpu_supports knows no "f16c".
  if (!hal::cpu_ref::cpu_features().f16c) GTEST_SKIP() << "CPU has no F16C";
  std::mt19937 rng(777);
  std::uniform_int_distribution<std::uint32_t> exp_dist(127 - 27, 127 + 17);  // around the f16 range
  for (int i = 0; i < 3000000; ++i) {
    std::uint32_t b = static_cast<std::uint32_t>(rng());
    if (i % 3 != 0) b = (b & 0x807FFFFFu) | exp_dist(rng) << 23;
    const float x = float_of(b);
    if (std::isnan(x)) continue;  // F16C keeps NaN payloads; NVIDIA (and hal) canonicalise
    ASSERT_EQ(hal::f32_to_f16(x), f16c_convert(x)) << "x=" << x << " bits=" << b;
  }
#else
  GTEST_SKIP() << "not an x86 host";
#endif
}

TEST(DType, F64RoundOddAvoidsDoubleRounding) {
  EXPECT_EQ(hal::f64_to_f32_round_odd(1.5), 1.5f);
  EXPECT_EQ(bits_of(hal::f64_to_f32_round_odd(1.0 + 0x1p-30)), 0x3F800001u);   // inexact -> odd
  EXPECT_EQ(bits_of(hal::f64_to_f32_round_odd(1.0 + 0x1p-23 + 0x1p-30)), 0x3F800001u);
  EXPECT_EQ(bits_of(hal::f64_to_f32_round_odd(1.0 + 0x1p-22 + 0x1p-30)), 0x3F800003u);
  EXPECT_EQ(bits_of(hal::f64_to_f32_round_odd(-(1.0 + 0x1p-30))), 0xBF800001u);
  EXPECT_EQ(bits_of(hal::f64_to_f32_round_odd(1e300)), 0x7F7FFFFFu);
  EXPECT_EQ(bits_of(hal::f64_to_f32_round_odd(1e-300)), 0x00000001u);
  EXPECT_EQ(bits_of(hal::f64_to_f32_round_odd(-0.0)), 0x80000000u);
  EXPECT_EQ(hal::f64_to_f32_round_odd(std::numeric_limits<double>::infinity()), kInf);
  EXPECT_TRUE(std::isnan(hal::f64_to_f32_round_odd(std::numeric_limits<double>::quiet_NaN())));
  // Exact floats, including subnormals, are unchanged.
  for (float x : {0x1p-149f, 0x1p-126f, 3.0f, 65504.0f, std::numeric_limits<float>::max()})
    EXPECT_EQ(hal::f64_to_f32_round_odd(static_cast<double>(x)), x);

  // Just above an f16 tie: RNE to f32 first would land on the tie and then
  // round down to even; the correctly rounded f16 is the upper neighbour.
  std::uint16_t h = 0;
  hal::store_element(&h, DType::f16, 0, 1.0 + 0x1p-11 + 0x1p-40);
  EXPECT_EQ(h, 0x3C01);
  hal::store_element(&h, DType::f16, 0, 1.0 + 0x1p-11 - 0x1p-40);
  EXPECT_EQ(h, 0x3C00);
  hal::store_element(&h, DType::f16, 0, 1e300);
  EXPECT_EQ(h, 0x7C00);
  std::uint8_t q = 0;
  hal::store_element(&q, DType::f8e4m3, 0, -1e300);
  EXPECT_EQ(q, 0xFE);
  hal::store_element(&q, DType::f8e5m2, 0, 1.0 + 0x1p-3 + 0x1p-50);
  EXPECT_EQ(q, 0x3D);
}

TEST(DType, IntegerStoresRoundToNearestEvenAndSaturate) {
  auto store_i8 = [](double v) {
    std::int8_t x = 99;
    hal::store_element(&x, DType::i8, 0, v);
    return static_cast<int>(x);
  };
  auto store_i32 = [](double v) {
    std::int32_t x = 99;
    hal::store_element(&x, DType::i32, 0, v);
    return x;
  };
  auto store_i64 = [](double v) {
    std::int64_t x = 99;
    hal::store_element(&x, DType::i64, 0, v);
    return x;
  };
  EXPECT_EQ(store_i32(2.5), 2);
  EXPECT_EQ(store_i32(3.5), 4);
  EXPECT_EQ(store_i32(-2.5), -2);
  EXPECT_EQ(store_i32(-3.5), -4);
  EXPECT_EQ(store_i32(2.4999999), 2);
  EXPECT_EQ(store_i32(0.49999999999999994), 0);
  EXPECT_EQ(store_i32(-0.7), -1);
  EXPECT_EQ(store_i32(1e12), 2147483647);
  EXPECT_EQ(store_i32(-1e12), -2147483647 - 1);
  EXPECT_EQ(store_i32(std::nan("")), 0);
  EXPECT_EQ(store_i8(200.0), 127);
  EXPECT_EQ(store_i8(127.5), 127);
  EXPECT_EQ(store_i8(-128.5), -128);
  EXPECT_EQ(store_i8(-1e30), -128);
  EXPECT_EQ(store_i8(-std::numeric_limits<double>::infinity()), -128);
  EXPECT_EQ(store_i64(0x1p63), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(store_i64(-0x1p63), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(store_i64(0x1p62 + 2048.0), (std::int64_t{1} << 62) + 2048);
  EXPECT_EQ(store_i64(std::numeric_limits<double>::infinity()), std::numeric_limits<std::int64_t>::max());

  std::uint8_t b = 7;
  for (double v : {0.5, -3.0, std::nan("")}) {
    hal::store_element(&b, DType::boolean, 0, v);
    EXPECT_EQ(b, 1) << v;
  }
  hal::store_element(&b, DType::boolean, 0, -0.0);
  EXPECT_EQ(b, 0);
  hal::store_element_f32(&b, DType::boolean, 0, 2.0f);
  EXPECT_EQ(b, 1);
  std::int8_t c = 0;
  hal::store_element_f32(&c, DType::i8, 0, -6.5f);
  EXPECT_EQ(c, -6);
}

// Every dtype: values written at index i are read back from index i, and
// neighbouring elements are untouched (the element size is used correctly).
TEST(DType, LoadStoreEveryDType) {
  for (DType t : hal::kAllDTypes) {
    std::vector<unsigned char> mem(8 * hal::dtype_size(t), 0xAB);
    hal::store_element(mem.data(), t, 3, 1.0);
    hal::store_element_f32(mem.data(), t, 5, -2.0f);
    EXPECT_EQ(hal::load_element(mem.data(), t, 3), 1.0) << hal::dtype_name(t);
    EXPECT_EQ(hal::load_element_f32(mem.data(), t, 3), 1.0f) << hal::dtype_name(t);
    const double expect5 = t == DType::boolean ? 1.0 : -2.0;
    EXPECT_EQ(hal::load_element(mem.data(), t, 5), expect5) << hal::dtype_name(t);
    for (std::size_t i = 0; i < mem.size(); ++i) {
      const std::size_t elem = i / hal::dtype_size(t);
      if (elem != 3 && elem != 5) {
        ASSERT_EQ(mem[i], 0xAB) << hal::dtype_name(t) << " byte " << i;
      }
    }
  }
  // Values that each dtype rounds.
  std::uint16_t h;
  hal::store_element_f32(&h, DType::bf16, 0, 1.0f + 0x1p-8f);
  EXPECT_EQ(hal::load_element_f32(&h, DType::bf16, 0), 1.0f);
  float f;
  hal::store_element(&f, DType::f32, 0, 1.0 + 0x1p-24);
  EXPECT_EQ(f, 1.0f);
  hal::store_element(&f, DType::f32, 0, 1.0 + 0x1p-24 + 0x1p-40);
  EXPECT_EQ(f, 1.0f + 0x1p-23f);
  std::int64_t big = (std::int64_t{1} << 53) + 1;
  EXPECT_EQ(hal::load_element(&big, DType::i64, 0), 0x1p53);
}

}  // namespace
