// The scaled-FP8 ops on the CPU: quantize_fp8, dequantize_fp8, gemm_fp8 and
// gemm_fp8_grouped (hal/op_fp8.h), their validation, and DeepGEMM's own
// accuracy check (calc_diff against the bf16 GEMM of the unquantised inputs).
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cpu_ref/cpu_features.h"
#include "cpu_ref/gemm_fp8_dot.h"
#include "hal/dtype.h"
#include "hal/stream.h"
#include "ops/ops.h"
#include "unit/test_helpers.h"

namespace {

using hal::DType;
using hal::Fp8Block;
using hal::Shape;
using hal::Tensor;
using hal::test::contains;
using hal::test::cpu;
using hal::test::error_of;
using hal::test::view_of;

constexpr DType kFormats[] = {DType::f8e4m3, DType::f8e5m2, DType::f8e4m3fnuz, DType::f8e5m2fnuz};

std::vector<float> normal_values(std::size_t n, float stddev, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> d(0.0f, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

float fp8_value(DType t, std::uint8_t b) { return hal::load_element_f32(&b, t, 0); }

TEST(CpuFp8Quantize, ScalesAreAmaxOverMaxFiniteAndValuesRoundOnce) {
  hal::Stream s(cpu());
  for (DType fmt : kFormats) {
    const float fmax = static_cast<float>(hal::dtype_max_finite(fmt));
    // Two rows, K = 200: blocks [0, 128) and [128, 200) per row.
    std::vector<float> x = normal_values(400, 2.0f, 1);
    for (float& v : x) v = std::fmax(-5.0f, std::fmin(5.0f, v));
    x[5] = -7.5f;  // row 0 block 0's amax
    std::vector<std::uint8_t> y(400, 0xAA);
    std::vector<float> scales(4, -1.0f);
    hal::ops::quantize_fp8(s, view_of(x, DType::f32, {2, 200}), view_of(y, fmt, {2, 200}), view_of(scales, DType::f32, {2, 2}));
    EXPECT_EQ(scales[0], 7.5f / fmax) << hal::dtype_name(fmt);
    // x[5] is the block's largest magnitude: it maps onto -max_finite, or
    // saturates there when the division rounds just past it.
    EXPECT_EQ(fp8_value(fmt, y[5]), -fmax) << hal::dtype_name(fmt);
    for (std::size_t i = 0; i < 400; ++i) {
      const std::size_t row = i / 200, col = i % 200;
      const float sc = scales[row * 2 + col / 128];
      std::uint8_t want = 0;
      hal::store_element_f32(&want, fmt, 0, x[i] / sc);
      ASSERT_EQ(y[i], want) << hal::dtype_name(fmt) << " element " << i;
      // And the value is within half an fp8 ulp (relative 2^-4 / 2^-3) of x / scale, or subnormal.
      const double q = fp8_value(fmt, y[i]) * static_cast<double>(sc);
      ASSERT_LE(std::fabs(q - x[i]), 1.001 * hal::dtype_epsilon(fmt) * std::fabs(x[i]) + sc * 0x1p-9) << i;
    }
  }
}

TEST(CpuFp8Quantize, AllZeroBlockNanAndInfHaveDefinedResults) {
  hal::Stream s(cpu());
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (DType fmt : kFormats) {
    std::vector<float> x(256, 0.0f);
    for (int j = 128; j < 256; ++j) x[j] = 0.5f;
    x[130] = nan;
    x[131] = inf;
    x[132] = -inf;
    x[133] = 2.0f;
    x[7] = -0.0f;
    std::vector<std::uint8_t> y(256, 0xAA);
    std::vector<float> scales(2, -1.0f);
    hal::ops::quantize_fp8(s, view_of(x, DType::f32, {1, 256}), view_of(y, fmt, {1, 256}), view_of(scales, DType::f32, {1, 2}));
    EXPECT_EQ(scales[0], 0x1p-126f) << "an all-zero block gets the smallest normal scale";
    for (int j = 0; j < 128; ++j) EXPECT_EQ(fp8_value(fmt, y[j]), 0.0f);
    EXPECT_EQ(y[7], hal::is_fp8_fnuz(fmt) ? 0x00 : 0x80) << "-0 stays -0 where the format has one";
    // NaN and Inf do not enter amax: 2 is the block's amax.
    EXPECT_EQ(scales[1], 2.0f / static_cast<float>(hal::dtype_max_finite(fmt)));
    EXPECT_TRUE(std::isnan(fp8_value(fmt, y[130])));
    EXPECT_EQ(fp8_value(fmt, y[131]), static_cast<float>(hal::dtype_max_finite(fmt)));
    EXPECT_EQ(fp8_value(fmt, y[132]), -static_cast<float>(hal::dtype_max_finite(fmt)));
    EXPECT_FALSE(std::isnan(fp8_value(fmt, y[134])));
  }
}

TEST(CpuFp8Quantize, PowerOfTwoScalesAndBlockKinds) {
  hal::Stream s(cpu());
  const std::vector<float> x = normal_values(130 * 140, 3.0f, 2);
  for (Fp8Block block : {Fp8Block::row_1x128, Fp8Block::block_128x128, Fp8Block::tensor}) {
    const Shape ss = hal::ops::fp8_scales_shape(block, 130, 140);
    std::vector<float> x_copy = x, plain(static_cast<std::size_t>(hal::checked_numel(ss))), pow2(plain.size());
    std::vector<std::uint8_t> y(x.size()), y2(x.size());
    hal::ops::quantize_fp8(s, view_of(x_copy, DType::f32, {130, 140}), view_of(y, DType::f8e4m3, {130, 140}),
                           view_of(plain, DType::f32, ss), {.block = block});
    hal::ops::quantize_fp8(s, view_of(x_copy, DType::f32, {130, 140}), view_of(y2, DType::f8e4m3, {130, 140}),
                           view_of(pow2, DType::f32, ss), {.block = block, .pow2_scales = true});
    for (std::size_t i = 0; i < plain.size(); ++i) {
      int e = 0;
      ASSERT_EQ(std::frexp(pow2[i], &e), 0.5f) << "a power of two";
      ASSERT_GE(pow2[i], plain[i]);
      ASSERT_LT(pow2[i], 2 * plain[i]);
    }
    // dequantize(quantize(x)) is within one rounding of x.
    std::vector<float> back(x.size());
    hal::ops::dequantize_fp8(s, view_of(y2, DType::f8e4m3, {130, 140}), view_of(pow2, DType::f32, ss),
                             view_of(back, DType::f32, {130, 140}), {.block = block});
    for (std::size_t i = 0; i < x.size(); ++i) ASSERT_LE(std::fabs(back[i] - x[i]), 0x1p-4 * std::fabs(x[i]) + 1e-3) << i;
  }
}

// Exact operands (small integers, power-of-two scales): the result is exact
// in fp32, so it must equal the formula computed in double.
TEST(CpuFp8Gemm, MatchesTheBlockFormulaExactlyWithARaggedK) {
  hal::Stream s(cpu());
  const std::int64_t m = 3, n = 131, k = 200, kb = 2, nb = 2;
  std::mt19937 gen(3);
  std::uniform_int_distribution<int> small(-6, 6), e(-3, 3);
  for (DType fmt : {DType::f8e4m3, DType::f8e4m3fnuz}) {
    std::vector<std::uint8_t> a(m * k), b(n * k);
    std::vector<float> av(m * k), bv(n * k), sa(m * kb), sb(nb * kb);
    for (std::size_t i = 0; i < a.size(); ++i) hal::store_element_f32(a.data(), fmt, i, av[i] = static_cast<float>(small(gen)));
    for (std::size_t i = 0; i < b.size(); ++i) hal::store_element_f32(b.data(), fmt, i, bv[i] = static_cast<float>(small(gen)));
    for (float& v : sa) v = std::ldexp(1.0f, e(gen));
    for (float& v : sb) v = std::ldexp(1.0f, e(gen));
    std::vector<float> c(m * n, -99.0f);
    hal::ops::gemm_fp8(s, view_of(a, fmt, {m, k}), view_of(sa, DType::f32, {m, kb}), view_of(b, fmt, {n, k}),
                       view_of(sb, DType::f32, {nb, kb}), view_of(c, DType::f32, {m, n}));
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (std::int64_t q = 0; q < k; ++q)
          want += static_cast<double>(av[i * k + q]) * bv[j * k + q] * sa[i * kb + q / 128] * sb[(j / 128) * kb + q / 128];
        ASSERT_EQ(c[i * n + j], static_cast<float>(want)) << hal::dtype_name(fmt) << " c[" << i << ", " << j << "]";
      }
  }
}

// DeepGEMM's check: calc_diff = 1 - 2 sum(x y) / sum(x^2 + y^2) between the
// fp8 GEMM of the quantised inputs and the bf16 GEMM of the unquantised ones.
TEST(CpuFp8Gemm, DeepGemmCalcDiffAgainstBf16IsBelow1e3) {
  hal::Stream s(cpu());
  const std::int64_t m = 64, n = 256, k = 512;
  const std::vector<float> x = normal_values(m * k, 1.0f, 4), w = normal_values(n * k, 1.0f, 5);
  std::vector<std::uint16_t> xb(x.size()), wb(w.size());
  for (std::size_t i = 0; i < x.size(); ++i) xb[i] = hal::f32_to_bf16(x[i]);
  for (std::size_t i = 0; i < w.size(); ++i) wb[i] = hal::f32_to_bf16(w[i]);
  std::vector<float> ref(m * n);
  hal::ops::GemmOptions nt;
  nt.trans_b = true;
  hal::ops::gemm(s, view_of(xb, DType::bf16, {m, k}), view_of(wb, DType::bf16, {n, k}), view_of(ref, DType::f32, {m, n}), nt);
  for (DType fmt : {DType::f8e4m3, DType::f8e4m3fnuz}) {
    std::vector<float> xc = x, wc = w, sx(m * 4), sw(2 * 4), c(m * n);
    std::vector<std::uint8_t> xq(x.size()), wq(w.size());
    hal::ops::quantize_fp8(s, view_of(xc, DType::f32, {m, k}), view_of(xq, fmt, {m, k}), view_of(sx, DType::f32, {m, 4}));
    hal::ops::quantize_fp8(s, view_of(wc, DType::f32, {n, k}), view_of(wq, fmt, {n, k}), view_of(sw, DType::f32, {2, 4}),
                           {.block = Fp8Block::block_128x128});
    hal::ops::gemm_fp8(s, view_of(xq, fmt, {m, k}), view_of(sx, DType::f32, {m, 4}), view_of(wq, fmt, {n, k}),
                       view_of(sw, DType::f32, {2, 4}), view_of(c, DType::f32, {m, n}));
    double xy = 0, sq = 0;
    for (std::size_t i = 0; i < c.size(); ++i) xy += static_cast<double>(c[i]) * ref[i], sq += static_cast<double>(c[i]) * c[i] + static_cast<double>(ref[i]) * ref[i];
    const double diff = 1.0 - 2.0 * xy / sq;
    EXPECT_LT(diff, 1e-3) << hal::dtype_name(fmt);
    EXPECT_GT(diff, 0.0) << "fp8 is not bf16: a zero difference would mean the quantisation did nothing";
  }
}

TEST(CpuFp8Gemm, EpilogueAndThreadCountIndependence) {
  hal::Stream s(cpu());
  const std::int64_t m = 17, n = 70, k = 300;
  std::vector<std::uint8_t> a(m * k), b(n * k);
  const std::vector<float> av = normal_values(a.size(), 30.0f, 6), bv = normal_values(b.size(), 30.0f, 7);
  for (std::size_t i = 0; i < a.size(); ++i) hal::store_element_f32(a.data(), DType::f8e5m2, i, av[i]);
  for (std::size_t i = 0; i < b.size(); ++i) hal::store_element_f32(b.data(), DType::f8e4m3, i, bv[i]);
  std::vector<float> sa(m * 3, 0.01f), sb(3, 0.02f), bias = normal_values(n, 1.0f, 8);
  const std::vector<float> c0 = normal_values(m * n, 1.0f, 9);
  auto run = [&](std::vector<float>& c, hal::Activation act, float beta) {
    c = c0;
    hal::Fp8Epilogue e;
    e.bias = view_of(bias, DType::f32, {n});
    e.alpha = 0.5f;
    e.beta = beta;
    e.activation = act;
    hal::ops::gemm_fp8(s, view_of(a, DType::f8e5m2, {m, k}), view_of(sa, DType::f32, {m, 3}), view_of(b, DType::f8e4m3, {n, k}),
                       view_of(sb, DType::f32, {1, 3}), view_of(c, DType::f32, {m, n}), e);
  };
  std::vector<float> plain, relu, beta;
  run(plain, hal::Activation::none, 0.0f);
  run(relu, hal::Activation::relu, 0.0f);
  run(beta, hal::Activation::none, 2.0f);
  for (std::size_t i = 0; i < plain.size(); ++i) {
    ASSERT_EQ(relu[i], plain[i] > 0 ? plain[i] : 0.0f);
    ASSERT_NEAR(beta[i], plain[i] + 2.0f * c0[i], 1e-4f * (std::fabs(plain[i]) + 2 * std::fabs(c0[i])));
  }
  std::vector<float> one_thread;
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    run(one_thread, hal::Activation::none, 0.0f);
  }
  ASSERT_EQ(std::memcmp(one_thread.data(), plain.data(), plain.size() * sizeof(float)), 0);
}

// The grouped GEMM is the plain one per group, bit for bit; empty groups
// write nothing; bad offsets are refused before anything is written.
TEST(CpuFp8GemmGrouped, EqualsPerGroupGemmAndChecksOffsets) {
  hal::Stream s(cpu());
  const std::int64_t g = 4, n = 130, k = 150, m = 11, kb = 2, nb = 2;
  std::vector<std::int32_t> offsets{0, 0, 4, 4, 11};
  std::vector<std::uint8_t> a(m * k), b(g * n * k);
  const std::vector<float> av = normal_values(a.size(), 20.0f, 10), bv = normal_values(b.size(), 20.0f, 11);
  for (std::size_t i = 0; i < a.size(); ++i) hal::store_element_f32(a.data(), DType::f8e4m3fnuz, i, av[i]);
  for (std::size_t i = 0; i < b.size(); ++i) hal::store_element_f32(b.data(), DType::f8e4m3fnuz, i, bv[i]);
  std::vector<float> sa = normal_values(m * kb, 0.01f, 12), sb = normal_values(g * nb * kb, 0.01f, 13);
  std::vector<std::uint16_t> c(m * n, 0xFFFF);
  hal::ops::gemm_fp8_grouped(s, view_of(a, DType::f8e4m3fnuz, {m, k}), view_of(sa, DType::f32, {m, kb}),
                             view_of(b, DType::f8e4m3fnuz, {g, n, k}), view_of(sb, DType::f32, {g, nb, kb}),
                             view_of(offsets, DType::i32, {g + 1}), view_of(c, DType::bf16, {m, n}));
  for (std::int64_t grp = 0; grp < g; ++grp) {
    const std::int64_t r0 = offsets[grp], rows = offsets[grp + 1] - r0;
    if (rows == 0) continue;
    std::vector<std::uint16_t> want(rows * n);
    Tensor ag = view_of(a, DType::f8e4m3fnuz, {m, k});
    ag.shape = Shape{rows, k};
    ag.offset = r0 * k;
    Tensor sag = view_of(sa, DType::f32, {m, kb});
    sag.shape = Shape{rows, kb};
    sag.offset = r0 * kb;
    Tensor bg = view_of(b, DType::f8e4m3fnuz, {g, n, k});
    bg = Tensor::contiguous(static_cast<std::uint8_t*>(bg.data) + grp * n * k, &cpu(), DType::f8e4m3fnuz, {n, k});
    Tensor sbg = Tensor::contiguous(sb.data() + grp * nb * kb, &cpu(), DType::f32, {nb, kb});
    hal::ops::gemm_fp8(s, ag, sag, bg, sbg, view_of(want, DType::bf16, {rows, n}));
    ASSERT_EQ(std::memcmp(want.data(), c.data() + r0 * n, want.size() * 2), 0) << "group " << grp;
  }
  std::vector<std::int32_t> bad{0, 5, 3, 9, 11};
  std::vector<std::uint16_t> untouched(m * n, 0x1234);
  const std::string msg = error_of([&] {
    hal::ops::gemm_fp8_grouped(s, view_of(a, DType::f8e4m3fnuz, {m, k}), view_of(sa, DType::f32, {m, kb}),
                               view_of(b, DType::f8e4m3fnuz, {g, n, k}), view_of(sb, DType::f32, {g, nb, kb}),
                               view_of(bad, DType::i32, {g + 1}), view_of(untouched, DType::bf16, {m, n}));
  });
  EXPECT_TRUE(contains(msg, "offsets")) << msg;
  EXPECT_TRUE(contains(msg, "offsets[2] = 3")) << msg;
  for (std::uint16_t v : untouched) ASSERT_EQ(v, 0x1234);
}

TEST(CpuFp8Validation, RefusesMisuseByName) {
  hal::Stream s(cpu());
  std::vector<std::uint8_t> a(4 * 200), b(8 * 200);
  std::vector<float> sa(4 * 2), sb(2), c(32), x(800);
  std::vector<std::uint16_t> c16(32);
  auto gemm = [&](DType at, DType bt, const Shape& sa_shape, DType ct) {
    hal::ops::gemm_fp8(s, view_of(a, at, {4, 200}), view_of(sa, DType::f32, sa_shape), view_of(b, bt, {8, 200}),
                       view_of(sb, DType::f32, {1, 2}), ct == DType::f32 ? view_of(c, ct, {4, 8}) : view_of(c16, ct, {4, 8}));
  };
  std::string msg = error_of([&] { gemm(DType::f8e4m3, DType::f8e4m3fnuz, {4, 2}, DType::f32); });
  EXPECT_TRUE(contains(msg, "gemm_fp8") && contains(msg, "family")) << msg;
  msg = error_of([&] { gemm(DType::f8e4m3, DType::f8e4m3, {4, 1}, DType::f32); });
  EXPECT_TRUE(contains(msg, "a_scales") && contains(msg, "[4, 1]")) << msg;
  msg = error_of([&] { gemm(DType::f8e4m3, DType::f8e4m3, {4, 2}, DType::f16); });
  EXPECT_TRUE(contains(msg, "bf16 or f32")) << msg;
  msg = error_of([&] { gemm(DType::bf16, DType::f8e4m3, {4, 2}, DType::f32); });
  EXPECT_TRUE(contains(msg, "\"a\"") || contains(msg, "a:") || contains(msg, "fp8 dtype")) << msg;
  msg = error_of([&] {
    hal::ops::quantize_fp8(s, view_of(x, DType::f32, {4, 200}), view_of(a, DType::f8e4m3, {4, 200}),
                           view_of(sa, DType::f32, {2, 4}));
  });
  EXPECT_TRUE(contains(msg, "scales") && contains(msg, "1x128")) << msg;
  msg = error_of([&] {
    hal::ops::quantize_fp8(s, view_of(x, DType::f32, {4, 200}), view_of(a, DType::bf16, {4, 100}),
                           view_of(sa, DType::f32, {4, 2}));
  });
  EXPECT_TRUE(contains(msg, "quantize_fp8") && contains(msg, "y")) << msg;
  // A [1] scale is a per-tensor scale; [4, 2] is not one.
  EXPECT_NO_THROW(hal::ops::dequantize_fp8(s, view_of(a, DType::f8e5m2fnuz, {4, 200}), view_of(sa, DType::f32, {1}),
                                           view_of(x, DType::f32, {4, 200}), {.block = Fp8Block::tensor}));
  msg = error_of([&] {
    hal::ops::dequantize_fp8(s, view_of(a, DType::f8e5m2fnuz, {4, 200}), view_of(sa, DType::f32, {4, 2}),
                             view_of(x, DType::f32, {4, 200}), {.block = Fp8Block::tensor});
  });
  EXPECT_TRUE(contains(msg, "dequantize_fp8") && contains(msg, "tensor")) << msg;
}

}  // namespace

// The AVX2 block dots give the portable ones' bits (one documented order),
// ragged lengths and odd row/column counts included.
TEST(CpuFp8Gemm, Avx2BlockDotsEqualPortableBitForBit) {
  if (!hal::cpu_ref::cpu_features().has_avx2_fma()) GTEST_SKIP() << "no AVX2+FMA here";
  std::mt19937 gen(14);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<float> a(5 * 128), b(7 * 128);
  for (float& v : a) v = fp8_value(DType::f8e4m3, static_cast<std::uint8_t>((byte(gen) & 0x7E) | (byte(gen) & 0x80)));
  for (float& v : b) v = fp8_value(DType::f8e4m3, static_cast<std::uint8_t>((byte(gen) & 0x7E) | (byte(gen) & 0x80)));
  for (std::int64_t len : {8, 40, 128})
    for (std::int64_t rows : {1, 2, 5})
      for (std::int64_t cols : {1, 4, 7}) {
        std::vector<float> p(5 * 8, -1.0f), v(5 * 8, -2.0f);
        hal::cpu_ref::fp8_block_dots_portable(a.data(), b.data(), 128, rows, cols, len, p.data(), 8);
        hal::cpu_ref::fp8_block_dots_avx2(a.data(), b.data(), 128, rows, cols, len, v.data(), 8);
        for (std::int64_t r = 0; r < rows; ++r)
          for (std::int64_t t = 0; t < cols; ++t)
            ASSERT_EQ(std::bit_cast<std::uint32_t>(p[r * 8 + t]), std::bit_cast<std::uint32_t>(v[r * 8 + t]))
                << "len " << len << " rows " << rows << " cols " << cols << " at " << r << "," << t;
      }
}
