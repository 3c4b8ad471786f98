// The CPU vector kernels (cpu_ref/vector_kernels.h) and the inline half
// conversions (cpu_ref/half_convert.h): conversions bit for bit hal's, the
// vector exp within 2 ulp of the exact exp, silu, the gelus and tanh within
// the contract, fixed-order sums, and the fast
// contiguous row / block paths giving the same bits as the strided paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <cstdint>
#include <limits>
#include <string_view>
#include <tuple>
#include <vector>

#include "cpu_ref/activation.h"
#include "cpu_ref/half_convert.h"
#include "cpu_ref/rows_math.h"
#include "cpu_ref/vector_kernels.h"
#include "hal/dtype.h"
#include "hal/registry.h"
#include "hal/stream.h"
#include "ops/ops.h"
#include "unit/test_helpers.h"

namespace {

using hal::test::cpu;

using hal::DType;
using hal::Shape;
using hal::Tensor;
using hal::cpu_ref::PrefetchHint;
using hal::cpu_ref::VectorKernels;

std::uint32_t bits(float v) { return std::bit_cast<std::uint32_t>(v); }
float from_bits(std::uint32_t b) { return std::bit_cast<float>(b); }

std::vector<const VectorKernels*> tables() {
  const auto t = hal::cpu_ref::vector_kernels_available();
  return {t.begin(), t.end()};
}

// Float bit patterns that stress 16-bit rounding: for every 16-bit prefix, the
// patterns whose dropped bits are 0, 1, just below / at / above the bf16 tie
// (bit 15) and the f16 tie (bit 12), and all ones; plus a prime-stride sweep
// of the whole 32-bit range.
std::vector<float> rounding_sweep() {
  std::vector<float> v;
  const std::uint32_t lows[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x3000,
                                0x7fff, 0x8000, 0x8001, 0x9000, 0xe000, 0xf000, 0xffff};
  for (std::uint32_t hi = 0; hi < 0x10000; ++hi)
    for (std::uint32_t lo : lows) v.push_back(from_bits(hi << 16 | lo));
  for (std::uint64_t b = 0; b < (std::uint64_t{1} << 32); b += 16411) v.push_back(from_bits(static_cast<std::uint32_t>(b)));
  return v;
}

TEST(CpuHalfConvert, WideningMatchesHalForAll16BitInputs) {
  std::vector<std::uint16_t> all(0x10000);
  for (std::uint32_t b = 0; b < 0x10000; ++b) all[b] = static_cast<std::uint16_t>(b);
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const auto h = static_cast<std::uint16_t>(b);
    ASSERT_EQ(bits(hal::cpu_ref::bf16_bits_to_float(h)), bits(hal::bf16_to_f32(h))) << std::hex << b;
    ASSERT_EQ(bits(hal::cpu_ref::f16_bits_to_float(h)), bits(hal::f16_to_f32(h))) << std::hex << b;
  }
  for (const VectorKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    // Odd offsets and lengths reach the unaligned heads and scalar tails.
    for (DType t : {DType::bf16, DType::f16}) {
      std::vector<float> out(all.size());
      k->widen(all.data() + 3, t, static_cast<std::int64_t>(all.size() - 3), out.data() + 3);
      k->widen(all.data(), t, 3, out.data());
      for (std::uint32_t b = 0; b < 0x10000; ++b) {
        const auto h = static_cast<std::uint16_t>(b);
        const float want = t == DType::bf16 ? hal::bf16_to_f32(h) : hal::f16_to_f32(h);
        ASSERT_EQ(bits(out[b]), bits(want)) << hal::dtype_name(t) << " " << std::hex << b;
      }
    }
  }
}

TEST(CpuHalfConvert, NarrowingMatchesHalOnASweepOfFloatBits) {
  const std::vector<float> sweep = rounding_sweep();
  for (float v : sweep) {
    ASSERT_EQ(hal::cpu_ref::float_to_bf16_bits(v), hal::f32_to_bf16(v)) << std::hex << bits(v);
    ASSERT_EQ(hal::cpu_ref::float_to_f16_bits(v), hal::f32_to_f16(v)) << std::hex << bits(v);
  }
  for (const VectorKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    for (DType t : {DType::bf16, DType::f16}) {
      for (bool streaming : {false, true}) {
        const auto narrow = streaming ? k->narrow_streaming : k->narrow;
        std::vector<std::uint16_t> out(sweep.size());
        const auto n = static_cast<std::int64_t>(sweep.size());
        // An odd split: the second run starts off any 16- or 32-byte boundary.
        narrow(out.data(), t, 5, sweep.data());
        narrow(out.data() + 5, t, n - 5, sweep.data() + 5);
        for (std::size_t i = 0; i < sweep.size(); ++i) {
          const std::uint16_t want = t == DType::bf16 ? hal::f32_to_bf16(sweep[i]) : hal::f32_to_f16(sweep[i]);
          ASSERT_EQ(out[i], want) << hal::dtype_name(t) << " streaming " << streaming << " " << std::hex
                                  << bits(sweep[i]);
        }
      }
    }
    // f32 streaming is a copy; short runs exercise head and tail alone.
    for (std::int64_t n : {0, 1, 3, 8, 13, 100}) {
      std::vector<float> out(static_cast<std::size_t>(n) + 1, -1.0f);
      k->narrow_streaming(out.data() + 1, DType::f32, n, sweep.data() + 1000);
      for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(bits(out[static_cast<std::size_t>(i) + 1]), bits(sweep[1000 + static_cast<std::size_t>(i)]));
      ASSERT_EQ(out[0], -1.0f);
    }
  }
}

// Every n-th finite float of each sign (bit patterns 0, n, 2n, ... below +inf),
// for the dense sweeps of the math functions.
std::vector<float> every_nth_finite_float(std::uint64_t n) {
  std::vector<float> xs;
  for (std::uint64_t b = 0; b < 0x7f800000u; b += n) {
    xs.push_back(from_bits(static_cast<std::uint32_t>(b)));
    xs.push_back(-from_bits(static_cast<std::uint32_t>(b)));
  }
  return xs;
}

// The largest error ratio of a sweep and the x it occurred at.
struct WorstRatio {
  double ratio = 0;
  float x = 0;
  void add(double r, float at) {
    if (r > ratio) ratio = r, x = at;
  }
};

// |got - exact| in units of the float ulp at the exact value (the subnormal
// ulp 2^-149 below FLT_MIN); exact results beyond FLT_MAX must give +inf.
double ulp_error(float got, double exact) {
  const double max_finite = std::numeric_limits<float>::max();
  if (exact >= max_finite * (1 + 0x1p-25)) return std::isinf(got) && got > 0 ? 0.0 : 1e30;
  if (std::isinf(got)) return 1e30;
  const double a = std::max(std::fabs(exact), 0x1p-126);
  const double ulp = std::ldexp(1.0, std::ilogb(a) - 23);
  return std::fabs(static_cast<double>(got) - exact) / ulp;
}

TEST(CpuVectorExp, WithinTwoUlpOverTheWholeRange) {
  // Every 397th float in (-inf, +inf): each binade, the subnormal-result range
  // (x < -87.3) and the overflow edge (x ~ 88.72) included.
  std::vector<float> xs = every_nth_finite_float(397);
  // Dense near the edges and at zero.
  for (float c : {88.7228394f, -87.3365479f, -103.278931f, -103.972076f, 0.0f, 0.346573591f}) {
    float v = c;
    for (int i = 0; i < 2000; ++i) v = std::nextafter(v, -1e30f);
    for (int i = 0; i < 4000; ++i, v = std::nextafter(v, 1e30f)) xs.push_back(v);
  }
  for (const VectorKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    std::vector<float> ys(xs.size());
    k->exp(xs.data(), ys.data(), static_cast<std::int64_t>(xs.size()));
    WorstRatio worst;
    for (std::size_t i = 0; i < xs.size(); ++i) worst.add(ulp_error(ys[i], std::exp(static_cast<double>(xs[i]))), xs[i]);
    EXPECT_LE(worst.ratio, 2.0) << "at x = " << worst.x;
  }
}

// silu (and swiglu with up = 1, the same silu times an exact 1) against the
// fp64 silu over a dense sweep: floats of each sign up to the
// overflow range (every 997th; both tails of sigmoid, subnormal results, the e = inf
// edge), within docs/accuracy.md's bound 4 eps32 (|ref| + |x|) + FLT_MIN; the
// worst ratio error / bound is printed so a change in margin is visible.
TEST(CpuVectorSilu, WithinTheContractOverADenseSweep) {
  std::vector<float> xs = every_nth_finite_float(997);
  const double eps32 = 0x1p-23, flt_min = 0x1p-126;
  for (const VectorKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    const auto n = static_cast<std::int64_t>(xs.size());
    std::vector<float> ys(xs.size()), sw(xs.size()), ones(xs.size(), 1.0f);
    k->silu(xs.data(), ys.data(), n);
    k->swiglu(xs.data(), ones.data(), sw.data(), n);
    WorstRatio worst;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const double x = xs[i];
      const double ref = x / (1.0 + std::exp(-x));
      const double bound = 4 * eps32 * (std::fabs(ref) + std::fabs(x)) + flt_min;
      for (float got : {ys[i], sw[i]}) {
        ASSERT_FALSE(std::isnan(got)) << "x = " << xs[i];
        worst.add(std::fabs(static_cast<double>(got) - ref) / bound, xs[i]);
      }
    }
    std::printf("[ %s ] silu worst error / bound = %.3f at x = %g\n", k->name, worst.ratio, static_cast<double>(worst.x));
    EXPECT_LE(worst.ratio, 1.0) << "at x = " << worst.x;
    // Special values: NaN stays NaN, silu(+inf) = +inf, silu(-inf) = -inf * 0 =
    // NaN (as x * sigmoid(x) gives it in fp64 and PyTorch), far tails exact.
    const float inf = std::numeric_limits<float>::infinity();
    const float sx[] = {std::numeric_limits<float>::quiet_NaN(), inf, -inf, 0.0f, -0.0f, -200.0f, 200.0f, 1.0f};
    float sy[8];
    k->silu(sx, sy, 8);
    EXPECT_TRUE(std::isnan(sy[0]));
    EXPECT_EQ(sy[1], inf);
    EXPECT_TRUE(std::isnan(sy[2]));
    EXPECT_EQ(sy[3], 0.0f);
    EXPECT_EQ(sy[4], 0.0f);
    EXPECT_EQ(sy[5], 0.0f);
    EXPECT_EQ(sy[6], 200.0f);
    EXPECT_NEAR(sy[7], 0.7310585786300049, 4 * eps32);
  }
}

TEST(CpuVectorExp, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> xs = {-inf, inf, std::numeric_limits<float>::quiet_NaN(), 0.0f, -0.0f, 89.0f,
                                 1e30f, -1e30f, -104.0f, -200.0f, 88.72f, -103.0f};
  for (const VectorKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    std::vector<float> ys(xs.size());
    k->exp(xs.data(), ys.data(), static_cast<std::int64_t>(xs.size()));
    EXPECT_EQ(bits(ys[0]), 0u);                 // exp(-inf) = +0
    EXPECT_EQ(ys[1], inf);
    EXPECT_TRUE(std::isnan(ys[2]));
    EXPECT_EQ(ys[3], 1.0f);
    EXPECT_EQ(ys[4], 1.0f);
    EXPECT_EQ(ys[5], inf);                      // e^89 > FLT_MAX
    EXPECT_EQ(ys[6], inf);
    EXPECT_EQ(bits(ys[7]), 0u);
    EXPECT_EQ(bits(ys[8]), 0u);                 // e^-104 < 2^-150 rounds to +0
    EXPECT_EQ(bits(ys[9]), 0u);
    EXPECT_LE(ulp_error(ys[10], std::exp(static_cast<double>(88.72f))), 2.0);
    EXPECT_GT(ys[11], 0.0f);                    // a subnormal, not flushed
    EXPECT_LE(ulp_error(ys[11], std::exp(-103.0)), 2.0);
  }
}

// tanh (tanh_approx.h: a polynomial below 0.75, 1 - 2 / (e^{2a} + 1) above)
// against the fp64 tanh within the contract's relative bound 4 eps32 |ref| +
// FLT_MIN over every 397th float of each sign and densely around 0.75, where
// the two forms meet; tanh is odd (signed zeros kept), +-inf give +-1.
TEST(CpuVectorTanh, WithinTheContractOverADenseSweep) {
  std::vector<float> xs = every_nth_finite_float(397);
  float v = 0.75f;
  for (int i = 0; i < 5000; ++i) v = std::nextafter(v, 0.0f);
  for (int i = 0; i < 10000; ++i, v = std::nextafter(v, 1.0f)) xs.push_back(v), xs.push_back(-v);
  const double eps32 = 0x1p-23, flt_min = 0x1p-126;
  for (const VectorKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    std::vector<float> ys(xs.size());
    k->tanh(xs.data(), ys.data(), static_cast<std::int64_t>(xs.size()));
    WorstRatio worst;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const double ref = std::tanh(static_cast<double>(xs[i]));
      ASSERT_EQ(std::signbit(ys[i]), std::signbit(xs[i])) << "x = " << xs[i];
      worst.add(std::fabs(static_cast<double>(ys[i]) - ref) / (4 * eps32 * std::fabs(ref) + flt_min), xs[i]);
    }
    std::printf("[ %s ] tanh worst error / bound = %.3f at x = %g\n", k->name, worst.ratio, static_cast<double>(worst.x));
    EXPECT_LE(worst.ratio, 1.0) << "at x = " << worst.x;
    const float inf = std::numeric_limits<float>::infinity();
    const float sx[] = {std::numeric_limits<float>::quiet_NaN(), inf, -inf, 0.0f, -0.0f, 20.0f, -20.0f};
    float sy[7];
    k->tanh(sx, sy, 7);
    EXPECT_TRUE(std::isnan(sy[0]));
    EXPECT_EQ(sy[1], 1.0f);
    EXPECT_EQ(sy[2], -1.0f);
    EXPECT_TRUE(sy[3] == 0.0f && !std::signbit(sy[3]));
    EXPECT_TRUE(sy[4] == 0.0f && std::signbit(sy[4]));
    EXPECT_EQ(sy[5], 1.0f);
    EXPECT_EQ(sy[6], -1.0f);
  }
}

// log (log_approx.h) against the fp64 log over every 397th positive float
// (subnormals included) and the 20,000 floats around 1, where log x ~ x - 1
// is small: within the contract's bound 4 eps32 (|log x| + 1), and within
// 2 ulp of the result relative to itself away from 1 (Cephes' form is about
// 1 ulp; a wrong coefficient or a lost ln2 term shows there first). Special
// values as the C library gives them.
TEST(CpuVectorLog, WithinTheContractOverADenseSweep) {
  std::vector<float> xs;
  for (float x : every_nth_finite_float(397))
    if (x > 0.0f) xs.push_back(x);
  float v = 1.0f;
  for (int i = 0; i < 10000; ++i) v = std::nextafter(v, 0.0f);
  for (int i = 0; i < 20000; ++i, v = std::nextafter(v, 2.0f)) xs.push_back(v);
  const double eps32 = 0x1p-23;
  for (const VectorKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    std::vector<float> ys(xs.size());
    k->log(xs.data(), ys.data(), static_cast<std::int64_t>(xs.size()));
    WorstRatio worst, worst_rel;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const double ref = std::log(static_cast<double>(xs[i]));
      const double err = std::fabs(static_cast<double>(ys[i]) - ref);
      worst.add(err / (4 * eps32 * (std::fabs(ref) + 1)), xs[i]);
      if (std::fabs(ref) > 0.5) worst_rel.add(err / (eps32 * std::fabs(ref)), xs[i]);
    }
    std::printf("[ %s ] log worst error / bound = %.3f at x = %g; worst %.2f ulp (|log x| > 0.5) at x = %g\n", k->name,
                worst.ratio, static_cast<double>(worst.x), worst_rel.ratio, static_cast<double>(worst_rel.x));
    EXPECT_LE(worst.ratio, 1.0) << "at x = " << worst.x;
    EXPECT_LE(worst_rel.ratio, 2.0) << "at x = " << worst_rel.x;
    const float inf = std::numeric_limits<float>::infinity();
    const float sx[] = {std::numeric_limits<float>::quiet_NaN(), inf, 0.0f, -0.0f, -1.0f, -inf, 1.0f,
                        std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max()};
    float sy[9];
    k->log(sx, sy, 9);
    EXPECT_TRUE(std::isnan(sy[0]));
    EXPECT_EQ(sy[1], inf);
    EXPECT_EQ(sy[2], -inf);
    EXPECT_EQ(sy[3], -inf);
    EXPECT_TRUE(std::isnan(sy[4]));
    EXPECT_TRUE(std::isnan(sy[5]));
    EXPECT_EQ(sy[6], 0.0f);
    EXPECT_NEAR(sy[7], std::log(static_cast<double>(sx[7])), 4 * eps32 * 104);
    EXPECT_NEAR(sy[8], std::log(static_cast<double>(sx[8])), 4 * eps32 * 89);
  }
}

// The scalar gelu_tanh of the GEMM epilogue (cpu_ref/activation.h) keeps its
// negative tail: 0.5 x (1 + tanh(u)) rounds 1 + tanh(u) to 0 below x ~ -5 in
// fp32 (the H200 test against the CPU caught the GPU's copy of that form),
// x sigmoid(2u) stays within 1e-4 of the fp64 value down to x = -10 (the
// argument of exp, about -87 there, carries a few ulp of fp32 rounding).
TEST(CpuActivation, GeluTanhKeepsItsNegativeTail) {
  for (float x : {-5.5f, -7.0f, -8.5f, -10.0f}) {
    const float y = hal::cpu_ref::gelu_tanh(x);
    const double ref = hal::cpu_ref::gelu_tanh(static_cast<double>(x));
    ASSERT_LT(ref, 0.0) << x;
    EXPECT_LT(y, 0.0f) << x;
    EXPECT_LE(std::fabs(y - ref), 1e-4 * std::fabs(ref)) << "x " << x << ": " << y << " vs " << ref;
  }
}

// gelu and gelu_tanh (gelu_approx.h: on the tables' exp, not the C library)
// against activation.h's fp64 forms, the oracle's, over the same dense sweep
// as silu, within docs/accuracy.md's bound 4 eps32 (|ref| + |x|) + FLT_MIN;
// special values as the oracle gives them.
TEST(CpuVectorGelu, WithinTheContractOverADenseSweep) {
  std::vector<float> xs = every_nth_finite_float(997);
  const double eps32 = 0x1p-23, flt_min = 0x1p-126;
  using Entry = void (*)(const float*, float*, std::int64_t);
  for (const VectorKernels* k : tables()) {
    for (const auto& [name, entry, oracle] :
         {std::tuple<const char*, Entry, double (*)(double)>{"gelu", k->gelu, hal::cpu_ref::gelu_erf<double>},
          std::tuple<const char*, Entry, double (*)(double)>{"gelu_tanh", k->gelu_tanh, hal::cpu_ref::gelu_tanh<double>}}) {
      SCOPED_TRACE(testing::Message() << k->name << " " << name);
      std::vector<float> ys(xs.size());
      entry(xs.data(), ys.data(), static_cast<std::int64_t>(xs.size()));
      WorstRatio worst;
      for (std::size_t i = 0; i < xs.size(); ++i) {
        const double x = xs[i];
        const double ref = oracle(x);
        ASSERT_FALSE(std::isnan(ys[i])) << "x = " << xs[i];
        worst.add(std::fabs(static_cast<double>(ys[i]) - ref) / (4 * eps32 * (std::fabs(ref) + std::fabs(x)) + flt_min), xs[i]);
      }
      std::printf("[ %s ] %s worst error / bound = %.3f at x = %g\n", k->name, name, worst.ratio, static_cast<double>(worst.x));
      EXPECT_LE(worst.ratio, 1.0) << "at x = " << worst.x;
      // NaN stays NaN; +inf -> +inf; -inf -> -inf * 0 = NaN, as the oracle
      // gives it; signed zeros kept; the far tails are x and -0.
      const float inf = std::numeric_limits<float>::infinity();
      const float sx[] = {std::numeric_limits<float>::quiet_NaN(), inf, -inf, 0.0f, -0.0f, -200.0f, 200.0f};
      float sy[7];
      entry(sx, sy, 7);
      EXPECT_TRUE(std::isnan(sy[0]));
      EXPECT_EQ(sy[1], inf);
      EXPECT_TRUE(std::isnan(sy[2]));
      EXPECT_TRUE(sy[3] == 0.0f && !std::signbit(sy[3]));
      EXPECT_TRUE(sy[4] == 0.0f && std::signbit(sy[4]));
      EXPECT_TRUE(sy[5] == 0.0f && std::signbit(sy[5]));
      EXPECT_EQ(sy[6], 200.0f);
    }
  }
}

TEST(CpuVectorKernels, SumsFollowTheFixedLaneOrder) {
  // Values of mixed magnitude, so a different order would change the bits.
  for (std::int64_t n : {1, 7, 8, 9, 31, 1000, 4097}) {
    std::vector<float> x(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = std::ldexp(1.0f + 0.37f * static_cast<float>(i % 11), static_cast<int>(i % 29) - 14) * ((i % 3) ? 1.0f : -1.0f);
    const float want = hal::cpu_ref::rows::fixed_sum(x.data(), n);
    double exact = 0, abs_sum = 0;
    for (float v : x) exact += v, abs_sum += std::fabs(v);
    for (const VectorKernels* k : tables()) {
      SCOPED_TRACE(k->name);
      EXPECT_EQ(bits(k->sum(x.data(), n)), bits(want)) << n;
      const double sq = k->sum_squares(x.data(), n);
      double sq_exact = 0;
      for (float v : x) sq_exact += static_cast<double>(v) * v;
      EXPECT_NEAR(sq, sq_exact, 1e-6 * sq_exact) << n;
      // dot_rows: each product rounded, then the fixed order, in every table,
      // for each of three rows (a pair and a single in the AVX2 table).
      std::vector<float> w(x.rbegin(), x.rend()), three(static_cast<std::size_t>(3 * (n + 5))), dots(3);
      for (std::size_t i = 0; i < three.size(); ++i) three[i] = std::sin(0.91f * static_cast<float>(i)) * 7.0f;
      k->dot_rows(three.data(), 3, n + 5, w.data(), DType::f32, n, dots.data());
      for (std::int64_t r = 0; r < 3; ++r)
        EXPECT_EQ(bits(dots[static_cast<std::size_t>(r)]),
                  bits(hal::cpu_ref::rows::fixed_dot(three.data() + r * (n + 5), w.data(), n))) << n << " row " << r;
      // b as bf16: the bits of the f32 form on the widened values.
      std::vector<std::uint16_t> w16(w.size());
      std::vector<float> w_wide(w.size());
      for (std::size_t i = 0; i < w.size(); ++i) w16[i] = hal::f32_to_bf16(w[i]), w_wide[i] = hal::bf16_to_f32(w16[i]);
      std::vector<float> dots16(3), dots_wide(3);
      k->dot_rows(three.data(), 3, n + 5, w16.data(), DType::bf16, n, dots16.data());
      k->dot_rows(three.data(), 3, n + 5, w_wide.data(), DType::f32, n, dots_wide.data());
      for (std::size_t r = 0; r < 3; ++r) EXPECT_EQ(bits(dots16[r]), bits(dots_wide[r])) << n << " row " << r;
      std::vector<float> y(x.size());
      const float s = k->exp_shifted_sum(x.data(), 0.5f, y.data(), n, std::nanf(""), {});
      EXPECT_EQ(bits(s), bits(hal::cpu_ref::rows::fixed_sum(y.data(), n))) << n;
    }
  }
}

// The fused entries are defined as compositions of the plain ones; check that
// bit for bit, at odd offsets (unaligned heads) and lengths (tails).
// copy_streaming: memcpy's bytes for every length and alignment of either
// side (the streaming part needs an aligned destination: heads and tails
// are copied plainly), and nothing written outside the range.
TEST(CpuVectorKernels, CopyStreamingCopiesTheBytesExactly) {
  std::vector<unsigned char> src(1200), dst(1300);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
  for (const VectorKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    for (std::int64_t bytes : {0, 1, 31, 32, 33, 127, 128, 129, 1000}) {
      for (std::size_t src_off : {0u, 1u, 5u, 32u}) {
        for (std::size_t dst_off : {0u, 3u, 17u, 32u}) {
          std::fill(dst.begin(), dst.end(), 0xAB);
          k->copy_streaming(dst.data() + dst_off, src.data() + src_off, bytes);
          for (std::size_t i = 0; i < dst.size(); ++i) {
            const bool inside = i >= dst_off && i < dst_off + static_cast<std::size_t>(bytes);
            ASSERT_EQ(dst[i], inside ? src[src_off + i - dst_off] : 0xAB)
                << "bytes " << bytes << " src+" << src_off << " dst+" << dst_off << " at " << i;
          }
        }
      }
    }
  }
}

// exp_shifted_sum tests the row's range first (AVX2: unless the caller's
// magnitude bound settles it), then runs a loop with no range test or the
// general one per pair; each lane must still get exp's bits, and the sum
// sum's, with or without the prefetch hint or the bound (the row's true
// largest magnitude, or NaN), also in place (y == x: the test must precede
// the writes). Rows: all in range; one shift just inside the range
// (|x| + |m| = 85.9); one out-of-range shift (< -86) in the head, the middle
// or the tail; -inf; +inf; a NaN whose payload sits in the low bits (its
// exponent-field arithmetic would not stay NaN without the test).
TEST(CpuVectorKernels, ExpShiftedSumEqualsExpThenSum) {
  std::vector<float> base(301);
  for (std::size_t i = 0; i < base.size(); ++i) base[i] = -std::fabs(std::sin(0.37f * static_cast<float>(i))) * 30.0f;
  const float m = 0.5f;
  const float nan_low_payload = std::bit_cast<float>(0x7fc00001u);
  struct Special {
    std::size_t at;
    float value;
  };
  const std::vector<std::vector<Special>> rows = {
      {}, {{5, -85.4f}}, {{3, -98.0f}}, {{150, -245.0f}, {20, -115.0f}}, {{299, -394.0f}}, {{41, -INFINITY}}, {{9, INFINITY}},
      {{17, nan_low_payload}}};
  for (const VectorKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    for (const auto& specials : rows) {
      std::vector<float> x = base;
      for (const Special& sp : specials) x[sp.at] = sp.value;
      for (std::int64_t n : {1, 8, 15, 16, 17, 64, 301}) {
        SCOPED_TRACE(n);
        std::vector<float> shifted(static_cast<std::size_t>(n)), want(shifted.size()), got(shifted.size());
        for (std::int64_t i = 0; i < n; ++i) shifted[static_cast<std::size_t>(i)] = x[static_cast<std::size_t>(i)] - m;
        k->exp(shifted.data(), want.data(), n);
        const float want_sum = k->sum(want.data(), n);
        float abs_max = 0.0f;
        for (std::int64_t i = 0; i < n; ++i)
          abs_max = std::isnan(x[static_cast<std::size_t>(i)]) ? x[static_cast<std::size_t>(i)]
                                                               : std::max(abs_max, std::fabs(x[static_cast<std::size_t>(i)]));
        for (const float bound : {std::nanf(""), abs_max}) {
          for (const PrefetchHint hint : {PrefetchHint{}, PrefetchHint{x.data(), 1200}}) {
            const float got_sum = k->exp_shifted_sum(x.data(), m, got.data(), n, bound, hint);
            EXPECT_EQ(0, std::memcmp(want.data(), got.data(), got.size() * sizeof(float))) << "bound " << bound;
            EXPECT_EQ(bits(want_sum), bits(got_sum)) << "bound " << bound;
          }
          std::vector<float> in_place(x.begin(), x.begin() + n);
          const float in_place_sum = k->exp_shifted_sum(in_place.data(), m, in_place.data(), n, bound, {});
          EXPECT_EQ(0, std::memcmp(want.data(), in_place.data(), in_place.size() * sizeof(float))) << "bound " << bound;
          EXPECT_EQ(bits(want_sum), bits(in_place_sum)) << "bound " << bound;
        }
      }
    }
  }
}

// weighted_row_sum, attention's per-query tail of P V: acc[c] += p[j] *
// row_j[c] for j in turn, one step per row as the table's kernels take it --
// a rounded multiply then a rounded add in the portable table, one fused
// multiply-add in the AVX2 one (the gemm micro-kernels' steps, which
// attention continues with it) -- bit for bit, and each column the same
// whether it falls in the 32-column main loop or the tail (rows of 32 more
// columns move every tail column into the main loop).
TEST(CpuVectorKernels, WeightedRowSumTakesOneStepPerRow) {
  constexpr std::int64_t kCount = 13;
  for (std::int64_t n : {1, 7, 8, 37, 64, 128}) {
    SCOPED_TRACE(n);
    std::vector<float> rows(static_cast<std::size_t>(kCount * n)), p(kCount);
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = std::cos(0.37f * static_cast<float>(i)) * 3.0f;
    for (std::int64_t j = 0; j < kCount; ++j) p[static_cast<std::size_t>(j)] = 1.0f / static_cast<float>(j + 2);
    std::vector<float> acc0(static_cast<std::size_t>(n));
    for (std::int64_t c = 0; c < n; ++c) acc0[static_cast<std::size_t>(c)] = 0.25f * static_cast<float>(c % 5);
    for (const VectorKernels* k : tables()) {
      SCOPED_TRACE(k->name);
      const bool fused = std::string_view(k->name) != "portable";
      std::vector<float> acc = acc0;
      k->weighted_row_sum(p.data(), rows.data(), DType::f32, kCount, n, n, acc.data());
      // Rows 3 apart in a wider array (every third row of `rows`, the others
      // never read), split over two calls: the same steps as those rows in one.
      std::vector<float> strided = acc0, split = acc0;
      const std::int64_t picked = (kCount + 2) / 3;
      std::vector<float> picked_p(static_cast<std::size_t>(picked));
      for (std::int64_t j = 0; j < picked; ++j) picked_p[static_cast<std::size_t>(j)] = p[static_cast<std::size_t>(3 * j)];
      k->weighted_row_sum(picked_p.data(), rows.data(), DType::f32, picked, 3 * n, n, strided.data());
      k->weighted_row_sum(picked_p.data(), rows.data(), DType::f32, 2, 3 * n, n, split.data());
      k->weighted_row_sum(picked_p.data() + 2, rows.data() + 6 * n, DType::f32, picked - 2, 3 * n, n, split.data());
      EXPECT_EQ(strided, split);
      std::vector<float> one_by_one = acc0;
      for (std::int64_t j = 0; j < picked; ++j)
        k->weighted_row_sum(picked_p.data() + j, rows.data() + 3 * j * n, DType::f32, 1, n, n, one_by_one.data());
      EXPECT_EQ(strided, one_by_one);
      // Rows of bf16: the bits of the f32 form on the widened rows.
      std::vector<std::uint16_t> rows16(rows.size());
      std::vector<float> rows16_wide(rows.size());
      for (std::size_t i = 0; i < rows.size(); ++i) rows16[i] = hal::f32_to_bf16(rows[i]), rows16_wide[i] = hal::bf16_to_f32(rows16[i]);
      std::vector<float> acc16 = acc0, acc_wide16 = acc0;
      k->weighted_row_sum(p.data(), rows16.data(), DType::bf16, kCount, n, n, acc16.data());
      k->weighted_row_sum(p.data(), rows16_wide.data(), DType::f32, kCount, n, n, acc_wide16.data());
      EXPECT_EQ(0, std::memcmp(acc16.data(), acc_wide16.data(), acc16.size() * sizeof(float)));
      std::vector<float> chain = acc0;
      for (std::int64_t j = 0; j < kCount; ++j)
        for (std::int64_t c = 0; c < n; ++c) {
          float& a = chain[static_cast<std::size_t>(c)];
          const float pj = p[static_cast<std::size_t>(j)], r = rows[static_cast<std::size_t>(j * n + c)];
          a = fused ? std::fma(pj, r, a) : a + pj * r;  // -ffp-contract=off: two roundings
        }
      for (std::int64_t c = 0; c < n; ++c) {
        double want = acc0[static_cast<std::size_t>(c)], mag = std::fabs(want);
        for (std::int64_t j = 0; j < kCount; ++j) {
          const double t = double{p[static_cast<std::size_t>(j)]} * rows[static_cast<std::size_t>(j * n + c)];
          want += t, mag += std::fabs(t);
        }
        EXPECT_EQ(bits(acc[static_cast<std::size_t>(c)]), bits(chain[static_cast<std::size_t>(c)])) << c;
        EXPECT_NEAR(acc[static_cast<std::size_t>(c)], want, 1e-6 * mag) << c;
      }
      // The same columns inside rows of 32 more: the same bits.
      const std::int64_t wide = n + 32;
      std::vector<float> rows_wide(static_cast<std::size_t>(kCount * wide), 1.0f), acc_wide(static_cast<std::size_t>(wide), 0.0f);
      for (std::int64_t j = 0; j < kCount; ++j)
        std::copy_n(rows.begin() + j * n, n, rows_wide.begin() + j * wide);
      std::copy(acc0.begin(), acc0.end(), acc_wide.begin());
      k->weighted_row_sum(p.data(), rows_wide.data(), DType::f32, kCount, wide, wide, acc_wide.data());
      EXPECT_EQ(0, std::memcmp(acc.data(), acc_wide.data(), acc.size() * sizeof(float)));
    }
  }
}

TEST(CpuVectorKernels, FirstExtremeIsTheFirstOneOrTheFirstNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const VectorKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    for (std::int64_t n : {1, 7, 16, 37, 100, 1000}) {
      std::vector<float> x(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = std::sin(0.61f * static_cast<float>(i));
      const auto at = [&](std::int64_t i) -> float& {
        return x[static_cast<std::size_t>(std::clamp<std::int64_t>(i, 0, n - 1))];
      };
      const auto expect = [&](const char* what) {
        for (bool largest : {true, false})
          EXPECT_EQ(k->first_extreme(x.data(), n, largest), hal::cpu_ref::rows::first_extreme(x.data(), n, largest))
              << what << " n " << n << " largest " << largest;
      };
      expect("distinct");
      // The same extreme in two lanes, the later one in a lower lane (9: lane 1,
      // 16: lane 0; 11: lane 3, 18: lane 2), and once more in the tail: the
      // first wins.
      at(9) = 5.0f;
      at(16) = 5.0f;
      at(n - 1) = 5.0f;
      at(11) = -5.0f;
      at(18) = -5.0f;
      at(n - 2) = -5.0f;
      expect("equal extremes");
      // -0 and +0 as the extremes: the first of them wins, bits included.
      std::fill(x.begin(), x.end(), -1.0f);
      at(n / 2 + 1) = -0.0f;
      at(n / 2) = 0.0f;
      expect("signed zeros");
      for (float& v : x) v = -v;
      expect("signed zeros, min");
      std::fill(x.begin(), x.end(), -inf);
      expect("all -inf");
      // A NaN in the vector part, then another in the tail: the first NaN wins.
      at(n / 2) = nan;
      at(n - 1) = nan;
      expect("NaN");
      std::fill(x.begin(), x.end(), 1.0f);
      at(n - 1) = nan;
      expect("NaN in the tail");
    }
    // Hand-checked, all in whole vectors: the first 3.0 (index 11, lane 3), not
    // the one in lane 0 (index 16); the first -2.0 (13, lane 5), not lane 1's (17).
    std::vector<float> y(24, 0.0f);
    y[11] = 3.0f;
    y[16] = 3.0f;
    y[13] = -2.0f;
    y[17] = -2.0f;
    EXPECT_EQ(k->first_extreme(y.data(), 24, true), 11);
    EXPECT_EQ(k->first_extreme(y.data(), 24, false), 13);
  }
}

TEST(CpuVectorKernels, FusedEntriesEqualTheirCompositions) {
  std::vector<float> x(300), w(300), b(300);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = std::sin(0.731f * static_cast<float>(i)) * 7.0f;
    w[i] = 0.5f + std::cos(0.2f * static_cast<float>(i));
    b[i] = 0.01f * static_cast<float>(i) - 1.0f;
  }
  x[17] = std::numeric_limits<float>::quiet_NaN();  // the f16 NaN fallbacks
  for (const VectorKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    for (DType t : {DType::f32, DType::bf16, DType::f16}) {
      const auto esize = static_cast<std::int64_t>(hal::dtype_size(t));
      for (std::int64_t off : {0, 1, 3}) {
        for (std::int64_t n : {1, 7, 8, 29, 256, 263}) {
          for (bool streaming : {false, true}) {
            SCOPED_TRACE(testing::Message() << hal::dtype_name(t) << " off " << off << " n " << n << " streaming "
                                            << streaming);
            std::vector<char> fused(static_cast<std::size_t>((n + 8) * esize)), composed(fused.size());
            std::vector<float> tmp(static_cast<std::size_t>(n));
            void* fd = fused.data() + off * esize;
            void* cd = composed.data() + off * esize;
            const auto same = [&] { ASSERT_EQ(0, std::memcmp(fused.data(), composed.data(), fused.size())); };
            k->scale_narrow(x.data(), 0.37f, fd, t, n, streaming);
            k->scale(x.data(), 0.37f, tmp.data(), n);
            k->narrow(cd, t, n, tmp.data());
            same();
            // The prefetch hint (any readable range) changes nothing.
            const PrefetchHint hint = streaming ? PrefetchHint{b.data(), 1000} : PrefetchHint{};
            k->rms_apply_narrow(x.data(), 1.3f, w.data(), fd, t, n, streaming, hint);
            k->rms_apply(x.data(), 1.3f, w.data(), tmp.data(), n);
            k->narrow(cd, t, n, tmp.data());
            same();
            for (const float* bias : {static_cast<const float*>(nullptr), static_cast<const float*>(b.data())}) {
              k->layer_apply_narrow(x.data(), 0.2f, 0.9f, w.data(), bias, fd, t, n, streaming, hint);
              k->layer_apply(x.data(), 0.2f, 0.9f, w.data(), bias, tmp.data(), n);
              k->narrow(cd, t, n, tmp.data());
              same();
            }
          }
        }
        // widen + sum fused: the row written and the sum both match.
        std::vector<char> src(static_cast<std::size_t>((263 + 8) * esize));
        k->narrow(src.data() + off * esize, t, 263, x.data());
        for (std::int64_t n : {1, 7, 8, 29, 263}) {
          std::vector<float> a(static_cast<std::size_t>(n)), c(a.size());
          const float s1 = k->widen_sum(src.data() + off * esize, t, n, a.data());
          k->widen(src.data() + off * esize, t, n, c.data());
          EXPECT_EQ(0, std::memcmp(a.data(), c.data(), a.size() * sizeof(float)));
          const float s2 = k->sum(c.data(), n);
          EXPECT_TRUE(bits(s1) == bits(s2) || (std::isnan(s1) && std::isnan(s2))) << n;
          const float q1 = k->widen_sum_squares(src.data() + off * esize, t, n, a.data());
          const float q2 = k->sum_squares(c.data(), n);
          EXPECT_TRUE(bits(q1) == bits(q2) || (std::isnan(q1) && std::isnan(q2))) << n;
          // widen + scale + max fused: the row and the max match the
          // composition; the largest magnitude is NaN exactly when the row
          // holds one, else max |c[i]|.
          for (float scale : {1.0f, 0.125f, -1.7f}) {
            const hal::cpu_ref::RowMax m1 = k->widen_scale_max(src.data() + off * esize, t, n, scale, a.data());
            k->widen(src.data() + off * esize, t, n, c.data());
            if (scale != 1.0f) k->scale(c.data(), scale, c.data(), n);
            const float m2 = k->max(c.data(), n);
            EXPECT_EQ(0, std::memcmp(a.data(), c.data(), a.size() * sizeof(float))) << n << " scale " << scale;
            EXPECT_TRUE(bits(m1.max) == bits(m2) || (std::isnan(m1.max) && std::isnan(m2))) << n << " scale " << scale;
            const bool any_nan = std::any_of(c.begin(), c.end(), [](float v) { return std::isnan(v); });
            float abs_max = 0.0f;
            for (float v : c) abs_max = std::isnan(v) ? abs_max : std::max(abs_max, std::fabs(v));
            if (any_nan) EXPECT_TRUE(std::isnan(m1.abs_max)) << n << " scale " << scale;
            else EXPECT_EQ(bits(m1.abs_max), bits(abs_max)) << n << " scale " << scale;
            if (scale == 1.0f) {  // row_max: the same result from the fp32 row itself, nothing stored
              const hal::cpu_ref::RowMax m3 = k->row_max(c.data(), n);
              EXPECT_TRUE(bits(m3.max) == bits(m1.max) || (std::isnan(m3.max) && std::isnan(m1.max))) << n;
              EXPECT_TRUE(bits(m3.abs_max) == bits(m1.abs_max) || (std::isnan(m3.abs_max) && std::isnan(m1.abs_max)))
                  << n;
            }
          }
        }
      }
    }
  }
}

// A [rows, d] view into `storage` whose last axis has stride 2 (every other
// element), so the kernels take their strided path.
Tensor strided_view(std::vector<std::uint16_t>& storage, DType t, std::int64_t rows, std::int64_t d) {
  hal::test::register_host_memory(storage);
  Tensor v = Tensor::contiguous(storage.data(), &cpu(), t, {rows, 2 * d});
  v.shape = Shape{rows, d};
  v.strides = {2 * d, 2};
  return v;
}

// Fills both the contiguous and the strided copy with the same values.
void fill_pair(DType t, std::int64_t rows, std::int64_t d, std::vector<std::uint16_t>& dense,
               std::vector<std::uint16_t>& sparse) {
  const std::size_t esize = hal::dtype_size(t) / 2;  // in uint16 units
  dense.assign(static_cast<std::size_t>(rows * d) * esize, 0);
  sparse.assign(static_cast<std::size_t>(rows * 2 * d) * esize, 0);
  for (std::int64_t i = 0; i < rows * d; ++i) {
    const float v = std::sin(0.37f * static_cast<float>(i)) * 3.0f + 0.25f * static_cast<float>(i % 5);
    const std::int64_t r = i / d, c = i % d;
    hal::store_element_f32(dense.data(), t, i, v);
    hal::store_element_f32(sparse.data(), t, r * 2 * d + 2 * c, v);
  }
}

TEST(CpuVectorKernels, FastRowPathsMatchStridedPathsBitForBit) {
  constexpr std::int64_t rows = 5, d = 203;  // d: not a multiple of 8 or 16
  hal::Stream s(cpu());
  for (DType t : {DType::f32, DType::bf16, DType::f16}) {
    SCOPED_TRACE(hal::dtype_name(t));
    std::vector<std::uint16_t> xd, xs, wd, ws, bd, bs;
    fill_pair(t, rows, d, xd, xs);
    fill_pair(t, 1, d, wd, ws);
    fill_pair(t, 1, d, bd, bs);
    for (const auto* v : {&xd, &wd, &bd}) hal::test::register_host_memory(*v);
    const Tensor x_dense = Tensor::contiguous(xd.data(), &cpu(), t, {rows, d});
    const Tensor x_strided = strided_view(xs, t, rows, d);
    const Tensor w = Tensor::contiguous(wd.data(), &cpu(), t, {d});
    const Tensor b = Tensor::contiguous(bd.data(), &cpu(), t, {d});
    using Run = void (*)(hal::Stream&, const Tensor&, const Tensor&, const Tensor&, const Tensor&);
    const Run runs[] = {
        [](hal::Stream& st, const Tensor& x, const Tensor&, const Tensor&, const Tensor& y) { hal::ops::softmax(st, x, y); },
        [](hal::Stream& st, const Tensor& x, const Tensor&, const Tensor&, const Tensor& y) {
          hal::ops::softmax(st, x, y, {.scale = 0.7f, .causal = true});
        },
        [](hal::Stream& st, const Tensor& x, const Tensor&, const Tensor&, const Tensor& y) { hal::ops::log_softmax(st, x, y); },
        [](hal::Stream& st, const Tensor& x, const Tensor& w, const Tensor&, const Tensor& y) { hal::ops::rmsnorm(st, x, w, y); },
        [](hal::Stream& st, const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y) { hal::ops::layernorm(st, x, w, b, y); },
        [](hal::Stream& st, const Tensor& x, const Tensor& w, const Tensor&, const Tensor& y) {
          hal::ops::layernorm(st, x, w, std::nullopt, y);
        },
        [](hal::Stream& st, const Tensor& x, const Tensor&, const Tensor&, const Tensor& y) { hal::ops::silu(st, x, y); },
        [](hal::Stream& st, const Tensor& x, const Tensor&, const Tensor&, const Tensor& y) { hal::ops::add(st, x, x, y); },
    };
    int which = 0;
    for (Run run : runs) {
      SCOPED_TRACE(testing::Message() << "op " << which++);
      std::vector<std::uint16_t> yd(xd.size(), 0xAAAA), ys(xs.size(), 0xAAAA);
      hal::test::register_host_memory(yd);
      const Tensor y_dense = Tensor::contiguous(yd.data(), &cpu(), t, {rows, d});
      const Tensor y_strided = strided_view(ys, t, rows, d);
      run(s, x_dense, w, b, y_dense);
      run(s, x_strided, w, b, y_strided);
      s.synchronize();
      for (std::int64_t i = 0; i < rows * d; ++i) {
        const std::int64_t r = i / d, c = i % d;
        const float a = hal::load_element_f32(yd.data(), t, i);
        const float bb = hal::load_element_f32(ys.data(), t, r * 2 * d + 2 * c);
        ASSERT_EQ(bits(a), bits(bb)) << "row " << r << " col " << c;
        // Sentinels between the strided elements are untouched.
        ASSERT_EQ(hal::load_element_f32(ys.data(), t, r * 2 * d + 2 * c + 1),
                  hal::load_element_f32(std::vector<std::uint16_t>(4, 0xAAAA).data(), t, 0));
      }
    }
  }
}

}  // namespace
