// hal/philox.h: Philox4x32-10 known answers, the fill_random contract, the
// deterministic ln / sincos approximations and the distributions' statistics.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <random>

#include "hal/philox.h"

namespace {

using hal::PhiloxBits;

void expect_bits(const PhiloxBits& got, std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d) {
  EXPECT_EQ(got.v[0], a);
  EXPECT_EQ(got.v[1], b);
  EXPECT_EQ(got.v[2], c);
  EXPECT_EQ(got.v[3], d);
}

// Known-answer vectors from Random123's kat_vectors (philox4x32, 10 rounds).
TEST(Philox, Random123KnownAnswers) {
  expect_bits(hal::philox4x32_10(PhiloxBits{{0, 0, 0, 0}}, 0, 0), 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u);
  expect_bits(hal::philox4x32_10(PhiloxBits{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, 0xffffffffu,
                                 0xffffffffu),
              0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu);
  expect_bits(hal::philox4x32_10(PhiloxBits{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u,
                                 0x299f31d0u),
              0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u);
}

// Element i uses block i / 4 as the counter {lo, hi, 0, 0}, the seed as the
// key {lo, hi}, and lane i % 4.
TEST(Philox, IndexingContract) {
  const std::uint64_t seed = 0x0123456789abcdefull;
  const std::uint64_t block = 0x500000007ull;  // needs the counter's high word
  const PhiloxBits expected = hal::philox4x32_10(PhiloxBits{{0x7u, 0x5u, 0u, 0u}}, 0x89abcdefu, 0x01234567u);
  for (std::uint32_t lane = 0; lane < 4; ++lane) {
    const std::uint64_t index = block * 4 + lane;
    EXPECT_EQ(hal::philox_bits(seed, index), expected.v[lane]) << lane;
    // uniform on [0, 1): exactly (bits >> 8) * 2^-24
    EXPECT_EQ(hal::philox_uniform(seed, index, 0.0f, 1.0f), std::ldexp(static_cast<float>(expected.v[lane] >> 8), -24));
  }
  // Neighbouring blocks and seeds give other bits.
  EXPECT_NE(hal::philox_bits(seed, block * 4), hal::philox_bits(seed, block * 4 + 4));
  EXPECT_NE(hal::philox_bits(seed, 0), hal::philox_bits(seed + 1, 0));
  EXPECT_NE(hal::philox_bits(seed, 0), hal::philox_bits(seed + (std::uint64_t{1} << 32), 0));
}

TEST(Philox, Deterministic) {
  for (std::uint64_t i = 0; i < 1000; i += 7) {
    EXPECT_EQ(hal::philox_bits(42, i), hal::philox_bits(42, i));
    const float u1 = hal::philox_uniform(42, i, -1.0f, 1.0f), u2 = hal::philox_uniform(42, i, -1.0f, 1.0f);
    const float n1 = hal::philox_normal(42, i, 0.0f, 1.0f), n2 = hal::philox_normal(42, i, 0.0f, 1.0f);
    EXPECT_EQ(std::memcmp(&u1, &u2, sizeof u1), 0);
    EXPECT_EQ(std::memcmp(&n1, &n2, sizeof n1), 0);
  }
}

TEST(Philox, UniformRangeAndMoments) {
  const int n = 100000;
  const float a = -2.0f, b = 3.0f;
  double sum = 0, sum_sq = 0;
  float lo = 1e9f, hi = -1e9f;
  for (int i = 0; i < n; ++i) {
    const float v = hal::philox_uniform(7, static_cast<std::uint64_t>(i), a, b);
    ASSERT_GE(v, a);
    ASSERT_LE(v, b);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
    sum_sq += static_cast<double>(v) * v;
  }
  const double mean = sum / n, var = sum_sq / n - mean * mean;
  // sd of the mean: (b - a) / sqrt(12 n) = 0.0046; allow ~6 sd.
  EXPECT_NEAR(mean, 0.5, 0.03);
  EXPECT_NEAR(var, 25.0 / 12.0, 0.05);
  EXPECT_LT(lo, a + 0.01f);
  EXPECT_GT(hi, b - 0.01f);
  // The [0, 1) unit value never reaches 1.
  for (std::uint64_t i = 0; i < 4096; ++i) EXPECT_LT(hal::philox_uniform(99, i, 0.0f, 1.0f), 1.0f);
}

TEST(Philox, NormalMoments) {
  const int n = 100000;
  const float mean_param = 3.0f, std_param = 2.0f;
  double sum = 0, sum_sq = 0, sum_4 = 0;
  int beyond_3sd = 0;
  for (int i = 0; i < n; ++i) {
    const float v = hal::philox_normal(2024, static_cast<std::uint64_t>(i), mean_param, std_param);
    ASSERT_TRUE(std::isfinite(v));
    const double z = (v - mean_param) / std_param;
    sum += z;
    sum_sq += z * z;
    sum_4 += z * z * z * z;
    if (std::fabs(z) > 3) ++beyond_3sd;
  }
  const double mean = sum / n, var = sum_sq / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.02);       // sd 0.0032
  EXPECT_NEAR(var, 1.0, 0.03);        // sd 0.0045
  EXPECT_NEAR(sum_4 / n, 3.0, 0.15);  // kurtosis of a normal
  EXPECT_NEAR(beyond_3sd / static_cast<double>(n), 0.0027, 0.0012);
}

// The lanes of a pair share one radius: z_even^2 + z_odd^2 = -2 ln u1 with u1
// from the even lane's bits, and atan2 gives 2 pi u2 from the odd lane's.
TEST(Philox, NormalUsesBoxMullerOnLanePairs) {
  const std::uint64_t seed = 5;
  for (std::uint64_t block = 0; block < 200; ++block) {
    const PhiloxBits bits = hal::philox4x32_10(
        PhiloxBits{{static_cast<std::uint32_t>(block), 0u, 0u, 0u}}, static_cast<std::uint32_t>(seed), 0u);
    for (unsigned pair = 0; pair < 4; pair += 2) {
      const double z0 = hal::philox_normal(seed, block * 4 + pair, 0.0f, 1.0f);
      const double z1 = hal::philox_normal(seed, block * 4 + pair + 1, 0.0f, 1.0f);
      const double u1 = ((bits.v[pair] >> 8) + 1.0) * 0x1p-24;
      const double u2 = (bits.v[pair + 1] >> 8) * 0x1p-24;
      const double r = std::sqrt(-2.0 * std::log(u1));
      EXPECT_NEAR(z0, r * std::cos(2 * std::numbers::pi * u2), 1e-5 * (1 + r)) << block << " " << pair;
      EXPECT_NEAR(z1, r * std::sin(2 * std::numbers::pi * u2), 1e-5 * (1 + r)) << block << " " << pair;
    }
  }
  // mean + std * z
  EXPECT_EQ(hal::philox_normal(seed, 3, 10.0f, 0.0f), 10.0f);
}

double relative_error(double got, double want) {
  if (want == 0) return std::fabs(got);
  return std::fabs(got - want) / std::fabs(want);
}

TEST(Philox, LnMatchesStdLog) {
  double worst = 0;
  auto check = [&](float x) {
    const double err = relative_error(hal::hal_ln(x), std::log(static_cast<double>(x)));
    worst = std::max(worst, err);
    return err;
  };
  // Every value Box-Muller can see near 1 (where ln is small) and a sweep of
  // the rest of (0, 1], plus powers of two and random normal floats.
  for (std::uint32_t k = (1u << 24) - 100000; k <= (1u << 24); ++k) ASSERT_LT(check(k * 0x1p-24f), 2e-6) << k;
  for (std::uint32_t k = 1; k < (1u << 24); k += 97) ASSERT_LT(check(k * 0x1p-24f), 2e-6) << k;
  for (int e = -126; e <= 127; ++e) ASSERT_LT(check(std::ldexp(1.0f, e)), 2e-6) << e;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(1e-30f, 1.0f);
  for (int i = 0; i < 100000; ++i) ASSERT_LT(check(dist(rng)), 2e-6);
  EXPECT_EQ(hal::hal_ln(1.0f), 0.0f);
  EXPECT_LT(worst, 2e-6);
}

// sin/cos(2 pi u) against double, with the quadrant reduction done exactly
// (4u - round(4u) is exact) so the reference is exact near the zeros too.
TEST(Philox, SinCosMatchesStd) {
  auto reference = [](float u, double& s, double& c) {
    const double t = 4.0 * u, q = std::nearbyint(t), x = (t - q) * std::numbers::pi / 2;
    const double sx = std::sin(x), cx = std::cos(x);
    switch (static_cast<int>(q) & 3) {
      case 0: s = sx; c = cx; break;
      case 1: s = cx; c = -sx; break;
      case 2: s = -sx; c = -cx; break;
      default: s = -cx; c = sx; break;
    }
  };
  auto check = [&](float u) {
    double s, c;
    reference(u, s, c);
    const hal::HalSinCos got = hal::hal_sincos_2pi(u);
    EXPECT_LT(relative_error(got.sin, s), 2e-6) << "sin(2 pi " << u << ")";
    EXPECT_LT(relative_error(got.cos, c), 2e-6) << "cos(2 pi " << u << ")";
    return relative_error(got.sin, s) < 2e-6 && relative_error(got.cos, c) < 2e-6;
  };
  for (std::uint32_t k = 0; k < (1u << 24); k += 61)
    if (!check(k * 0x1p-24f)) return;
  for (float u : {0.0f, 0.125f, 0.25f, 0.375f, 0.5f, 0.75f, 1.0f - 0x1p-24f, 0x1p-24f, 0.25f - 0x1p-24f})
    if (!check(u)) return;
  // Exact values at the quadrant points.
  EXPECT_EQ(hal::hal_sincos_2pi(0.0f).cos, 1.0f);
  EXPECT_EQ(hal::hal_sincos_2pi(0.25f).sin, 1.0f);
  EXPECT_EQ(hal::hal_sincos_2pi(0.5f).cos, -1.0f);
  EXPECT_EQ(hal::hal_sincos_2pi(0.75f).sin, -1.0f);
  // Near the zero crossing at u = 0.5: relative accuracy, not just absolute.
  const float near = 0.5f + 0x1p-20f;
  EXPECT_NEAR(hal::hal_sincos_2pi(near).sin, -std::sin(2 * std::numbers::pi * 0x1p-20), 1e-6 * 2 * std::numbers::pi * 0x1p-20);
}

TEST(Philox, FmulFaddAreThePlainOperations) {
  EXPECT_EQ(hal::hal_fmul(3.0f, 0.5f), 1.5f);
  EXPECT_EQ(hal::hal_fadd(1.0f, 0x1p-24f), 1.0f);  // tie to even: rounded, not fused
  EXPECT_EQ(hal::hal_fadd(1.0f, 0x1p-23f), 1.0f + 0x1p-23f);
  EXPECT_EQ(hal::hal_fsub(1.0f, 0.25f), 0.75f);
  EXPECT_EQ(hal::hal_fdiv(1.0f, 4.0f), 0.25f);
  EXPECT_EQ(hal::hal_fsqrt(2.25f), 1.5f);
}

}  // namespace
