// CPU reference softmax, log_softmax, layernorm and rmsnorm through hal::ops,
// against formulas evaluated in double in the test.
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "hal/registry.h"
#include "hal/stream.h"
#include "ops/ops.h"
#include "unit/test_helpers.h"

namespace {

using hal::test::cpu;
using hal::test::view_of;

using hal::DType;
using hal::Shape;
using hal::Tensor;

// Softmax of one row in double, keys [0, valid) unmasked.
std::vector<double> softmax_ref(const std::vector<double>& z, std::size_t valid, bool log) {
  double m = -INFINITY, sum = 0;
  for (std::size_t j = 0; j < valid; ++j) m = std::max(m, z[j]);
  for (std::size_t j = 0; j < valid; ++j) sum += std::exp(z[j] - m);
  std::vector<double> out(z.size(), log ? -INFINITY : 0.0);
  for (std::size_t j = 0; j < valid; ++j) out[j] = log ? z[j] - m - std::log(sum) : std::exp(z[j] - m) / sum;
  return out;
}

TEST(CpuSoftmaxNorm, SoftmaxOfOneTwoThree) {
  std::vector<float> x = {1, 2, 3}, y(3);
  hal::Stream s(cpu());
  hal::ops::softmax(s, view_of(x, DType::f32, {3}), view_of(y, DType::f32, {3}));
  const double denom = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(y[static_cast<std::size_t>(j)], std::exp(j + 1.0) / denom, 5e-7);
  hal::ops::log_softmax(s, view_of(x, DType::f32, {3}), view_of(y, DType::f32, {3}));
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(y[static_cast<std::size_t>(j)], (j + 1.0) - std::log(denom), 1e-6);
  // scale multiplies x before the exponential.
  hal::ops::softmax(s, view_of(x, DType::f32, {3}), view_of(y, DType::f32, {3}), {.scale = 0.5f});
  const double half = std::exp(0.5) + std::exp(1.0) + std::exp(1.5);
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(y[static_cast<std::size_t>(j)], std::exp(0.5 * (j + 1)) / half, 5e-7);
}

TEST(CpuSoftmaxNorm, LargeValuesDoNotOverflow) {
  std::vector<float> x = {1000, 1001}, y(2);
  hal::Stream s(cpu());
  hal::ops::softmax(s, view_of(x, DType::f32, {2}), view_of(y, DType::f32, {2}));
  EXPECT_NEAR(y[0], 1 / (1 + std::exp(1.0)), 5e-7);
  EXPECT_NEAR(y[1], 1 / (1 + std::exp(-1.0)), 5e-7);
}

TEST(CpuSoftmaxNorm, CausalMaskTwoQueriesFourKeys) {
  // Lq = 2, Lk = 4: query 0 sees keys 0..2, query 1 sees all four.
  std::vector<float> x = {0.5f, -1.0f, 2.0f, 7.0f,  //
                          1.5f, 0.25f, -3.0f, 4.0f};
  std::vector<float> y(8), ylog(8);
  hal::Stream s(cpu());
  hal::ops::softmax(s, view_of(x, DType::f32, {2, 4}), view_of(y, DType::f32, {2, 4}), {.causal = true});
  hal::ops::log_softmax(s, view_of(x, DType::f32, {2, 4}), view_of(ylog, DType::f32, {2, 4}), {.causal = true});
  for (int i = 0; i < 2; ++i) {
    std::vector<double> row(x.begin() + 4 * i, x.begin() + 4 * i + 4);
    const std::size_t valid = i == 0 ? 3 : 4;
    const auto p = softmax_ref(row, valid, false);
    const auto lp = softmax_ref(row, valid, true);
    for (int j = 0; j < 4; ++j) {
      SCOPED_TRACE(testing::Message() << "i " << i << " j " << j);
      const std::size_t at = static_cast<std::size_t>(4 * i + j);
      if (static_cast<std::size_t>(j) >= valid) {
        EXPECT_EQ(y[at], 0.0f);
        EXPECT_EQ(ylog[at], -std::numeric_limits<float>::infinity());
      } else {
        EXPECT_NEAR(y[at], p[static_cast<std::size_t>(j)], 5e-7);
        EXPECT_NEAR(ylog[at], lp[static_cast<std::size_t>(j)], 2e-6);
      }
    }
  }
}

TEST(CpuSoftmaxNorm, CausalMoreQueriesThanKeysGivesMaskedRows) {
  // Lq = 3, Lk = 2: query i sees keys j <= i - 1, so query 0 sees none.
  std::vector<float> x = {1, 2, 3, 4, 5, 6}, y(6), ylog(6);
  hal::Stream s(cpu());
  hal::ops::softmax(s, view_of(x, DType::f32, {3, 2}), view_of(y, DType::f32, {3, 2}), {.causal = true});
  hal::ops::log_softmax(s, view_of(x, DType::f32, {3, 2}), view_of(ylog, DType::f32, {3, 2}), {.causal = true});
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(ylog[0], -INFINITY);
  EXPECT_EQ(ylog[1], -INFINITY);
  EXPECT_EQ(y[2], 1.0f);  // query 1 sees key 0 only
  EXPECT_EQ(y[3], 0.0f);
  EXPECT_EQ(ylog[2], 0.0f);
  EXPECT_NEAR(y[4], 1 / (1 + std::exp(1.0)), 5e-7);
}

TEST(CpuSoftmaxNorm, NaNAndInfinity) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {1, nan, 3,     // NaN: the row is NaN
                          1, 2, -inf,    // -inf: weight 0
                          1, inf, 3},    // +inf: NaN (inf - inf), as PyTorch
      y(9);
  hal::Stream s(cpu());
  hal::ops::softmax(s, view_of(x, DType::f32, {3, 3}), view_of(y, DType::f32, {3, 3}));
  for (int j = 0; j < 3; ++j) EXPECT_TRUE(std::isnan(y[static_cast<std::size_t>(j)])) << j;
  EXPECT_NEAR(y[3], 1 / (1 + std::exp(1.0)), 5e-7);
  EXPECT_EQ(y[5], 0.0f);
  EXPECT_TRUE(std::isnan(y[7]));
}

TEST(CpuSoftmaxNorm, Bf16InputsAndF64Oracle) {
  const std::vector<float> values = {0.5f, -1.25f, 2.0f, 0.0f, 3.5f};
  std::vector<std::uint16_t> x, y(5);
  for (float v : values) x.push_back(hal::f32_to_bf16(v));
  hal::Stream s(cpu());
  hal::ops::softmax(s, view_of(x, DType::bf16, {5}), view_of(y, DType::bf16, {5}));
  const auto ref = softmax_ref(std::vector<double>(values.begin(), values.end()), 5, false);
  for (std::size_t j = 0; j < 5; ++j) EXPECT_NEAR(hal::bf16_to_f32(y[j]), ref[j], ref[j] * 0x1p-8 + 1e-7) << j;
  std::vector<double> xd(values.begin(), values.end()), yd(5);
  hal::ops::softmax(s, view_of(xd, DType::f64, {5}), view_of(yd, DType::f64, {5}));
  for (std::size_t j = 0; j < 5; ++j) EXPECT_NEAR(yd[j], ref[j], 1e-15) << j;
}

TEST(CpuSoftmaxNorm, PermutedViewEqualsContiguous) {
  // Stored [37, 3, 5] and viewed as [3, 5, 37]: the reduced axis (37: whole
  // vectors and a tail) is strided, so it is gathered, while the contiguous
  // copy of it is read in place (f32); both must give the same bits.
  constexpr int kL = 37;
  constexpr std::size_t kN = 15 * kL;
  std::vector<float> base(kN);
  for (std::size_t i = 0; i < kN; ++i) base[i] = std::cos(0.91f * static_cast<float>(i)) * 4.0f;
  Tensor view = view_of(base, DType::f32, {kL, 3, 5}).permuted({1, 2, 0});
  std::vector<float> dense(kN);
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 5; ++b)
      for (int c = 0; c < kL; ++c)
        dense[static_cast<std::size_t>((a * 5 + b) * kL + c)] = base[static_cast<std::size_t>((c * 3 + a) * 5 + b)];
  const Tensor dense_view = view_of(dense, DType::f32, {3, 5, kL});
  hal::Stream s(cpu());
  for (bool log : {false, true}) {
    for (bool causal : {false, true}) {
      std::vector<float> y_view(kN), y_dense(kN);
      const auto run = [&](const Tensor& x, std::vector<float>& y) {
        if (log) hal::ops::log_softmax(s, x, view_of(y, DType::f32, {3, 5, kL}), {.causal = causal});
        else hal::ops::softmax(s, x, view_of(y, DType::f32, {3, 5, kL}), {.causal = causal});
      };
      run(view, y_view);
      run(dense_view, y_dense);
      EXPECT_EQ(y_view, y_dense) << "log " << log << " causal " << causal;
    }
  }
  // Norms over the same strided rows.
  std::vector<float> w(kL), b(kL);
  for (int i = 0; i < kL; ++i) {
    w[static_cast<std::size_t>(i)] = 1.5f - 0.01f * static_cast<float>(i);
    b[static_cast<std::size_t>(i)] = -0.25f + 0.02f * static_cast<float>(i);
  }
  std::vector<float> n_view(kN), n_dense(kN);
  hal::ops::layernorm(s, view, view_of(w, DType::f32, {kL}), view_of(b, DType::f32, {kL}),
                      view_of(n_view, DType::f32, {3, 5, kL}));
  hal::ops::layernorm(s, dense_view, view_of(w, DType::f32, {kL}), view_of(b, DType::f32, {kL}),
                      view_of(n_dense, DType::f32, {3, 5, kL}));
  EXPECT_EQ(n_view, n_dense);
  hal::ops::rmsnorm(s, view, view_of(w, DType::f32, {kL}), view_of(n_view, DType::f32, {3, 5, kL}));
  hal::ops::rmsnorm(s, dense_view, view_of(w, DType::f32, {kL}), view_of(n_dense, DType::f32, {3, 5, kL}));
  EXPECT_EQ(n_view, n_dense);
}

TEST(CpuSoftmaxNorm, LayernormOfOneToFour) {
  std::vector<float> x = {1, 2, 3, 4}, w = {1, 2, 0.5f, -1}, b = {0.1f, 0.2f, 0.3f, 0.4f}, y(4);
  hal::Stream s(cpu());
  const float eps = 1e-5f;
  hal::ops::layernorm(s, view_of(x, DType::f32, {1, 4}), view_of(w, DType::f32, {4}), view_of(b, DType::f32, {4}),
                      view_of(y, DType::f32, {1, 4}), {eps});
  // mean 2.5, variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25
  const double rstd = 1 / std::sqrt(1.25 + static_cast<double>(eps));
  for (std::size_t j = 0; j < 4; ++j)
    EXPECT_NEAR(y[j], (x[j] - 2.5) * rstd * w[j] + b[j], 1e-6) << j;
  // Without bias.
  hal::ops::layernorm(s, view_of(x, DType::f32, {4}), view_of(w, DType::f32, {4}), std::nullopt,
                      view_of(y, DType::f32, {4}), {eps});
  for (std::size_t j = 0; j < 4; ++j) EXPECT_NEAR(y[j], (x[j] - 2.5) * rstd * w[j], 1e-6) << j;
}

TEST(CpuSoftmaxNorm, LayernormTwoPassSurvivesLargeMean) {
  // mean 1e4, std 1: E[x^2] - E[x]^2 would cancel to garbage in fp32.
  std::vector<float> x = {9999, 10001, 9999, 10001}, w(4, 1.0f), y(4);
  hal::Stream s(cpu());
  hal::ops::layernorm(s, view_of(x, DType::f32, {4}), view_of(w, DType::f32, {4}), std::nullopt,
                      view_of(y, DType::f32, {4}), {1e-12f});
  for (std::size_t j = 0; j < 4; ++j) EXPECT_NEAR(y[j], j % 2 ? 1.0 : -1.0, 1e-6) << j;
}

TEST(CpuSoftmaxNorm, RmsnormByFormulaAndBf16) {
  std::vector<float> x = {1, -2, 3, 4, 0.5f, -0.5f, 0.25f, 2}, w = {1, 0.5f, 2, -1}, y(8);
  hal::Stream s(cpu());
  const float eps = 1e-6f;
  hal::ops::rmsnorm(s, view_of(x, DType::f32, {2, 4}), view_of(w, DType::f32, {4}), view_of(y, DType::f32, {2, 4}),
                    {eps});
  for (int r = 0; r < 2; ++r) {
    double ms = 0;
    for (int j = 0; j < 4; ++j) ms += double(x[static_cast<std::size_t>(4 * r + j)]) * x[static_cast<std::size_t>(4 * r + j)];
    const double rstd = 1 / std::sqrt(ms / 4 + eps);
    for (int j = 0; j < 4; ++j) {
      const std::size_t at = static_cast<std::size_t>(4 * r + j);
      EXPECT_NEAR(y[at], x[at] * rstd * w[static_cast<std::size_t>(j)], 1e-6) << at;
    }
  }
  // bf16 in and out: within one bf16 rounding of the fp32 result.
  std::vector<std::uint16_t> xb, wb, yb(8);
  for (float v : x) xb.push_back(hal::f32_to_bf16(v));
  for (float v : w) wb.push_back(hal::f32_to_bf16(v));
  hal::ops::rmsnorm(s, view_of(xb, DType::bf16, {2, 4}), view_of(wb, DType::bf16, {4}),
                    view_of(yb, DType::bf16, {2, 4}), {eps});
  for (std::size_t j = 0; j < 8; ++j)
    EXPECT_NEAR(hal::bf16_to_f32(yb[j]), y[j], std::fabs(y[j]) * 0x1p-8 + 1e-6) << j;
  // NaN in a row makes that row NaN and leaves the other alone.
  x[1] = std::numeric_limits<float>::quiet_NaN();
  hal::ops::rmsnorm(s, view_of(x, DType::f32, {2, 4}), view_of(w, DType::f32, {4}), view_of(y, DType::f32, {2, 4}),
                    {eps});
  for (std::size_t j = 0; j < 4; ++j) EXPECT_TRUE(std::isnan(y[j])) << j;
  for (std::size_t j = 4; j < 8; ++j) EXPECT_FALSE(std::isnan(y[j])) << j;
}

TEST(CpuSoftmaxNorm, BitwiseIdenticalForAnyThreadCount) {
  const Shape xs{256, 2, 300};
  std::vector<float> x(256 * 2 * 300), w(300);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.013f * static_cast<float>(i % 9973)) * 5.0f;
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 1.0f + 0.001f * static_cast<float>(i);
  hal::Stream s(cpu());
  std::vector<float> one(x.size()), many(x.size()), n_one(x.size()), n_many(x.size());
  tbb::task_arena single(1);
  single.execute([&] {
    hal::ops::softmax(s, view_of(x, DType::f32, xs), view_of(one, DType::f32, xs), {.causal = true});
    hal::ops::layernorm(s, view_of(x, DType::f32, xs), view_of(w, DType::f32, {300}), std::nullopt,
                        view_of(n_one, DType::f32, xs));
  });
  hal::ops::softmax(s, view_of(x, DType::f32, xs), view_of(many, DType::f32, xs), {.causal = true});
  hal::ops::layernorm(s, view_of(x, DType::f32, xs), view_of(w, DType::f32, {300}), std::nullopt,
                      view_of(n_many, DType::f32, xs));
  EXPECT_EQ(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(n_one.data(), n_many.data(), n_one.size() * sizeof(float)), 0);
  // Query 0 of the [2, 300] slices (Lk - Lq = 298) sees 299 keys: the last is masked.
  EXPECT_EQ(one[299], 0.0f);
  EXPECT_GT(one[298], 0.0f);
}

}  // namespace
