// CPU reference: binary, unary and swiglu elementwise ops (cpu_ref/binary.cpp,
// unary.cpp, swiglu.cpp) through the public hal::ops API.
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <tuple>
#include <vector>

#include "hal/dtype.h"
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

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<float> binary_f32(hal::BinaryKind kind, std::vector<float> a, const Shape& sa, std::vector<float> b,
                              const Shape& sb, const Shape& sy) {
  hal::Stream s(cpu());
  std::vector<float> y(static_cast<std::size_t>(hal::checked_numel(sy)), -777.0f);
  hal::ops::binary(s, kind, view_of(a, DType::f32, sa), view_of(b, DType::f32, sb), view_of(y, DType::f32, sy));
  return y;
}

std::vector<float> unary_f32(hal::UnaryKind kind, std::vector<float> x) {
  hal::Stream s(cpu());
  std::vector<float> y(x.size(), -777.0f);
  const Shape shape{static_cast<std::int64_t>(x.size())};
  hal::ops::unary(s, kind, view_of(x, DType::f32, shape), view_of(y, DType::f32, shape));
  return y;
}

double gelu_erf_exact(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh_exact(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
}
double silu_exact(double x) { return x / (1.0 + std::exp(-x)); }

TEST(CpuElementwiseBinary, AddBroadcastsRowAgainstColumn) {
  const auto y = binary_f32(hal::BinaryKind::add, {1, 2, 3}, {3}, {10, 20}, {2, 1}, {2, 3});
  EXPECT_EQ(y, (std::vector<float>{11, 12, 13, 21, 22, 23}));
}

TEST(CpuElementwiseBinary, SubMulDivWithScalarBroadcast) {
  EXPECT_EQ(binary_f32(hal::BinaryKind::sub, {5, 7}, {2}, {2}, {1}, {2}), (std::vector<float>{3, 5}));
  EXPECT_EQ(binary_f32(hal::BinaryKind::mul, {1.5f, -2}, {2}, {4}, {}, {2}), (std::vector<float>{6, -8}));
  EXPECT_EQ(binary_f32(hal::BinaryKind::div, {1, -3}, {2}, {4, 0}, {2}, {2}), (std::vector<float>{0.25f, -kInf}));
  // b broadcast along rows: [[1,2],[3,4]] - [10, 20]
  EXPECT_EQ(binary_f32(hal::BinaryKind::sub, {1, 2, 3, 4}, {2, 2}, {10, 20}, {2}, {2, 2}),
            (std::vector<float>{-9, -18, -7, -16}));
}

TEST(CpuElementwiseBinary, MaximumMinimumPropagateNaNAndOrderSignedZeros) {
  const std::vector<float> a{kNaN, 1.0f, 2.0f, -0.0f, 0.0f, -kInf};
  const std::vector<float> b{1.0f, kNaN, 3.0f, 0.0f, -0.0f, 5.0f};
  const auto mx = binary_f32(hal::BinaryKind::maximum, a, {6}, b, {6}, {6});
  const auto mn = binary_f32(hal::BinaryKind::minimum, a, {6}, b, {6}, {6});
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_TRUE(std::isnan(mn[0]));
  EXPECT_TRUE(std::isnan(mn[1]));
  EXPECT_EQ(mx[2], 3.0f);
  EXPECT_EQ(mn[2], 2.0f);
  EXPECT_EQ(mx[3], 0.0f);
  EXPECT_FALSE(std::signbit(mx[3]));
  EXPECT_FALSE(std::signbit(mx[4]));
  EXPECT_TRUE(std::signbit(mn[3]));
  EXPECT_TRUE(std::signbit(mn[4]));
  EXPECT_EQ(mx[5], 5.0f);
  EXPECT_EQ(mn[5], -kInf);
}

TEST(CpuElementwiseBinary, Bf16AndF16ResultsRoundOnceToNearestEven) {
  hal::Stream s(cpu());
  // bf16 has 8 significant bits: near 1 the spacing is 2^-7.
  const std::vector<float> av{1.0f, 1.0f, 1.0f + 0x1p-7f, 1.0f};
  const std::vector<float> bv{0x1p-9f, 0x1p-8f, 0x1p-8f, 0x1p-8f + 0x1p-9f};
  // 1+2^-9 -> 1 (below half); 1+2^-8 -> tie -> 1 (even);
  // 1+2^-7+2^-8 -> tie -> 1+2^-6 (even); 1+2^-8+2^-9 -> above half -> 1+2^-7.
  const std::vector<float> expected{1.0f, 1.0f, 1.0f + 0x1p-6f, 1.0f + 0x1p-7f};
  std::vector<std::uint16_t> a, b, y(4, 0);
  for (int i = 0; i < 4; ++i) {
    a.push_back(hal::f32_to_bf16(av[i]));
    b.push_back(hal::f32_to_bf16(bv[i]));
    ASSERT_EQ(hal::bf16_to_f32(a.back()), av[i]);  // inputs are exact in bf16
    ASSERT_EQ(hal::bf16_to_f32(b.back()), bv[i]);
  }
  hal::ops::add(s, view_of(a, DType::bf16, {4}), view_of(b, DType::bf16, {4}), view_of(y, DType::bf16, {4}));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(hal::bf16_to_f32(y[i]), expected[i]) << "element " << i;

  // f16: 11 significant bits; 2048 + 1 is a tie -> 2048, 2048 + 3 -> 2052.
  std::vector<std::uint16_t> c{hal::f32_to_f16(2048), hal::f32_to_f16(2048)};
  std::vector<std::uint16_t> d{hal::f32_to_f16(1), hal::f32_to_f16(3)};
  std::vector<std::uint16_t> z(2, 0);
  hal::ops::add(s, view_of(c, DType::f16, {2}), view_of(d, DType::f16, {2}), view_of(z, DType::f16, {2}));
  EXPECT_EQ(hal::f16_to_f32(z[0]), 2048.0f);
  EXPECT_EQ(hal::f16_to_f32(z[1]), 2052.0f);
}

TEST(CpuElementwiseBinary, F64OutputComputesInDouble) {
  hal::Stream s(cpu());
  std::vector<double> a{1.0, 2.0}, b{3.0, 1e-10}, y(2, 0.0);
  hal::ops::div(s, view_of(a, DType::f64, {2}), view_of(b, DType::f64, {2}), view_of(y, DType::f64, {2}));
  EXPECT_EQ(y[0], 1.0 / 3.0);  // fp32 compute would give (double)(1.0f / 3.0f)
  hal::ops::add(s, view_of(a, DType::f64, {2}), view_of(b, DType::f64, {2}), view_of(y, DType::f64, {2}));
  EXPECT_EQ(y[0], 4.0);
  EXPECT_EQ(y[1], 2.0 + 1e-10);  // fp32 compute would give 2
}

// a: a permuted view; b: broadcast along two axes; y: a strided window into a
// larger buffer. Every kind is compared with a naive loop over coordinates.
TEST(CpuElementwiseBinary, StridedPermutedAndBroadcastOperandsMatchNaiveLoop) {
  hal::Stream s(cpu());
  constexpr int I = 4, J = 5, K = 6;
  std::vector<float> a_store(K * J * I), b_store(J), y_store(I * J * (K + 2), -777.0f);
  for (std::size_t n = 0; n < a_store.size(); ++n) a_store[n] = static_cast<float>(n % 13) - 6.5f;
  for (std::size_t n = 0; n < b_store.size(); ++n) b_store[n] = static_cast<float>(n) * 0.75f - 1.0f;
  // a_store is laid out as [K][J][I]; the view has shape [I, J, K].
  const Tensor a = view_of(a_store, DType::f32, {K, J, I}).permuted({2, 1, 0});
  const Tensor b = view_of(b_store, DType::f32, {J, 1});
  Tensor y = view_of(y_store, DType::f32, {I, J, K + 2});
  y.shape = {I, J, K};  // the last two entries of each row are padding
  for (auto kind : {hal::BinaryKind::add, hal::BinaryKind::sub, hal::BinaryKind::mul, hal::BinaryKind::div,
                    hal::BinaryKind::maximum, hal::BinaryKind::minimum}) {
    hal::ops::binary(s, kind, a, b, y);
    for (int i = 0; i < I; ++i)
      for (int j = 0; j < J; ++j) {
        for (int k = 0; k < K; ++k) {
          const float av = a_store[(k * J + j) * I + i];
          const float bv = b_store[j];
          float expected = 0;
          switch (kind) {
            case hal::BinaryKind::add: expected = av + bv; break;
            case hal::BinaryKind::sub: expected = av - bv; break;
            case hal::BinaryKind::mul: expected = av * bv; break;
            case hal::BinaryKind::div: expected = av / bv; break;
            case hal::BinaryKind::maximum: expected = av > bv ? av : bv; break;
            case hal::BinaryKind::minimum: expected = av < bv ? av : bv; break;
          }
          ASSERT_EQ(y_store[(i * J + j) * (K + 2) + k], expected)
              << hal::to_string(kind) << " at " << i << "," << j << "," << k;
        }
        EXPECT_EQ(y_store[(i * J + j) * (K + 2) + K], -777.0f) << "padding written";
        EXPECT_EQ(y_store[(i * J + j) * (K + 2) + K + 1], -777.0f) << "padding written";
      }
  }
}

// Many blocks plus a ragged tail, in the contiguous fast path (f32, bf16) and
// with a column-broadcast operand that needs the strided gather.
TEST(CpuElementwiseBinary, LargeTensorsMatchNaiveLoop) {
  hal::Stream s(cpu());
  constexpr std::int64_t rows = 331, cols = 307;  // primes: no block boundary lines up
  const std::int64_t n = rows * cols;
  std::vector<float> a(n), b(n), col(rows), y(n);
  std::vector<std::uint16_t> a16(n), b16(n), y16(n);
  for (std::int64_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>((i * 37) % 1001) / 97.0f - 5.0f;
    b[i] = static_cast<float>((i * 53) % 997) / 89.0f + 0.5f;
    a16[i] = hal::f32_to_bf16(a[i]);
    b16[i] = hal::f32_to_bf16(b[i]);
  }
  for (std::int64_t r = 0; r < rows; ++r) col[r] = static_cast<float>(r) * 0.5f;

  hal::ops::mul(s, view_of(a, DType::f32, {rows, cols}), view_of(b, DType::f32, {rows, cols}),
                view_of(y, DType::f32, {rows, cols}));
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], a[i] * b[i]) << i;

  hal::ops::div(s, view_of(a16, DType::bf16, {n}), view_of(b16, DType::bf16, {n}), view_of(y16, DType::bf16, {n}));
  for (std::int64_t i = 0; i < n; ++i)
    ASSERT_EQ(y16[i], hal::f32_to_bf16(hal::bf16_to_f32(a16[i]) / hal::bf16_to_f32(b16[i]))) << i;

  hal::ops::add(s, view_of(a, DType::f32, {rows, cols}), view_of(col, DType::f32, {rows, 1}),
                view_of(y, DType::f32, {rows, cols}));
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], a[i] + col[i / cols]) << i;
}

TEST(CpuElementwiseBinary, EmptyTensorIsANoOp) {
  hal::Stream s(cpu());
  std::vector<float> a{1}, b{2, 2, 2}, y{-777.0f};  // b: a view of 3 elements needs 3 (the validation layer)
  hal::ops::add(s, view_of(a, DType::f32, {0, 3}), view_of(b, DType::f32, {3}), view_of(y, DType::f32, {0, 3}));
  EXPECT_EQ(y[0], -777.0f);
}

TEST(CpuElementwiseUnary, KnownValues) {
  using K = hal::UnaryKind;
  EXPECT_EQ(unary_f32(K::exp, {0, 1})[0], 1.0f);
  EXPECT_FLOAT_EQ(unary_f32(K::exp, {0, 1})[1], static_cast<float>(std::numbers::e));
  EXPECT_EQ(unary_f32(K::log, {1})[0], 0.0f);
  EXPECT_EQ(unary_f32(K::sqrt, {4, 2.25f}), (std::vector<float>{2, 1.5f}));
  EXPECT_EQ(unary_f32(K::rsqrt, {4, 0.25f}), (std::vector<float>{0.5f, 2}));
  EXPECT_EQ(unary_f32(K::sigmoid, {0})[0], 0.5f);
  EXPECT_EQ(unary_f32(K::tanh, {0})[0], 0.0f);
  EXPECT_EQ(unary_f32(K::neg, {3, -2.5f}), (std::vector<float>{-3, 2.5f}));
  EXPECT_EQ(unary_f32(K::abs, {-2, 7}), (std::vector<float>{2, 7}));
  EXPECT_EQ(unary_f32(K::relu, {-1, 2, 0}), (std::vector<float>{0, 2, 0}));
  EXPECT_EQ(unary_f32(K::silu, {0})[0], 0.0f);
  EXPECT_EQ(unary_f32(K::gelu, {0})[0], 0.0f);
}

TEST(CpuElementwiseUnary, ActivationsMatchTheirFormulasInDouble) {
  const std::vector<float> xs{-4.0f, -1.5f, -0.5f, 0.25f, 1.0f, 2.0f, 3.5f};
  const auto gelu = unary_f32(hal::UnaryKind::gelu, xs);
  const auto gelu_t = unary_f32(hal::UnaryKind::gelu_tanh, xs);
  const auto silu = unary_f32(hal::UnaryKind::silu, xs);
  const auto sigmoid = unary_f32(hal::UnaryKind::sigmoid, xs);
  const auto tanh = unary_f32(hal::UnaryKind::tanh, xs);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double x = xs[i];
    // fp32 arithmetic: a few ulps of the magnitude of the intermediate terms.
    EXPECT_NEAR(gelu[i], gelu_erf_exact(x), 4e-7 * std::max(1.0, std::fabs(x))) << x;
    EXPECT_NEAR(gelu_t[i], gelu_tanh_exact(x), 4e-7 * std::max(1.0, std::fabs(x))) << x;
    EXPECT_NEAR(silu[i], silu_exact(x), 4e-7 * std::max(1.0, std::fabs(x))) << x;
    EXPECT_NEAR(sigmoid[i], 1.0 / (1.0 + std::exp(-x)), 3e-7) << x;
    EXPECT_NEAR(tanh[i], std::tanh(x), 3e-7) << x;
  }
  // The tanh approximation differs from the erf gelu by up to ~1e-3.
  EXPECT_NE(gelu[1], gelu_t[1]);
}

TEST(CpuElementwiseUnary, F64OutputMatchesDoubleFormulas) {
  hal::Stream s(cpu());
  std::vector<double> x{-1.5, 0.3, 2.0}, y(3);
  hal::ops::gelu(s, view_of(x, DType::f64, {3}), view_of(y, DType::f64, {3}));
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(y[i], gelu_erf_exact(x[i]), 1e-15) << x[i];
  hal::ops::exp(s, view_of(x, DType::f64, {3}), view_of(y, DType::f64, {3}));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(y[i], std::exp(x[i])) << x[i];
}

TEST(CpuElementwiseUnary, SpecialValuesFollowIeee) {
  using K = hal::UnaryKind;
  const auto neg = unary_f32(K::neg, {-kInf, kInf, -0.0f, 0.0f, kNaN});
  EXPECT_EQ(neg[0], kInf);
  EXPECT_EQ(neg[1], -kInf);
  EXPECT_TRUE(neg[2] == 0.0f && !std::signbit(neg[2]));
  EXPECT_TRUE(neg[3] == 0.0f && std::signbit(neg[3]));
  EXPECT_TRUE(std::isnan(neg[4]));

  const auto abs = unary_f32(K::abs, {-0.0f, -kInf});
  EXPECT_FALSE(std::signbit(abs[0]));
  EXPECT_EQ(abs[1], kInf);

  const auto exp = unary_f32(K::exp, {-kInf, kInf, kNaN});
  EXPECT_EQ(exp[0], 0.0f);
  EXPECT_EQ(exp[1], kInf);
  EXPECT_TRUE(std::isnan(exp[2]));

  const auto log = unary_f32(K::log, {0.0f, -0.0f, -1.0f, kInf});
  EXPECT_EQ(log[0], -kInf);
  EXPECT_EQ(log[1], -kInf);
  EXPECT_TRUE(std::isnan(log[2]));
  EXPECT_EQ(log[3], kInf);

  const auto sqrt = unary_f32(K::sqrt, {-0.0f, -1.0f, kInf});
  EXPECT_TRUE(sqrt[0] == 0.0f && std::signbit(sqrt[0]));
  EXPECT_TRUE(std::isnan(sqrt[1]));
  EXPECT_EQ(sqrt[2], kInf);

  const auto rsqrt = unary_f32(K::rsqrt, {0.0f, kInf});
  EXPECT_EQ(rsqrt[0], kInf);
  EXPECT_EQ(rsqrt[1], 0.0f);

  const auto sig = unary_f32(K::sigmoid, {-kInf, kInf, kNaN});
  EXPECT_EQ(sig[0], 0.0f);
  EXPECT_EQ(sig[1], 1.0f);
  EXPECT_TRUE(std::isnan(sig[2]));

  const auto tanh = unary_f32(K::tanh, {-kInf, kInf, -0.0f});
  EXPECT_EQ(tanh[0], -1.0f);
  EXPECT_EQ(tanh[1], 1.0f);
  EXPECT_TRUE(std::signbit(tanh[2]));

  // relu: NaN propagates; every non-positive value, -0 included, becomes +0.
  const auto relu = unary_f32(K::relu, {kNaN, -0.0f, -kInf, kInf});
  EXPECT_TRUE(std::isnan(relu[0]));
  EXPECT_TRUE(relu[1] == 0.0f && !std::signbit(relu[1]));
  EXPECT_EQ(relu[2], 0.0f);
  EXPECT_EQ(relu[3], kInf);

  for (auto kind : {K::gelu, K::gelu_tanh, K::silu}) EXPECT_TRUE(std::isnan(unary_f32(kind, {kNaN})[0]));
  EXPECT_EQ(unary_f32(K::silu, {kInf})[0], kInf);
  EXPECT_EQ(unary_f32(K::gelu, {kInf})[0], kInf);
}

TEST(CpuElementwiseUnary, PermutedBf16InputMatchesNaiveLoop) {
  hal::Stream s(cpu());
  constexpr int R = 7, C = 9;
  std::vector<std::uint16_t> x(R * C), y(R * C, 0);
  for (int i = 0; i < R * C; ++i) x[i] = hal::f32_to_bf16(static_cast<float>(i) * 0.1f - 3.0f);
  const Tensor xt = view_of(x, DType::bf16, {R, C}).transposed(0, 1);  // [C, R]
  hal::ops::exp(s, xt, view_of(y, DType::bf16, {C, R}));
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < R; ++r)
      ASSERT_EQ(y[c * R + r], hal::f32_to_bf16(std::exp(hal::bf16_to_f32(x[r * C + c])))) << r << "," << c;
}

TEST(CpuElementwiseSwiglu, SiluOfGateTimesUp) {
  hal::Stream s(cpu());
  std::vector<float> gate{0.0f, 1.0f, -2.0f, 3.0f, -0.5f, 8.0f}, up{2.0f, 3.0f, 4.0f, -5.0f, 1.0f, 0.5f}, y(6);
  hal::ops::swiglu(s, view_of(gate, DType::f32, {2, 3}), view_of(up, DType::f32, {2, 3}),
                   view_of(y, DType::f32, {2, 3}));
  EXPECT_EQ(y[0], 0.0f);
  for (int i = 0; i < 6; ++i)
    EXPECT_NEAR(y[i], silu_exact(gate[i]) * up[i], 1e-6 * std::fabs(silu_exact(gate[i]) * up[i]) + 1e-30) << i;

  // bf16 in and out, rounded once from the fp32 result.
  std::vector<std::uint16_t> g16, u16, y16(6);
  for (int i = 0; i < 6; ++i) {
    g16.push_back(hal::f32_to_bf16(gate[i]));
    u16.push_back(hal::f32_to_bf16(up[i]));
  }
  hal::ops::swiglu(s, view_of(g16, DType::bf16, {6}), view_of(u16, DType::bf16, {6}), view_of(y16, DType::bf16, {6}));
  for (int i = 0; i < 6; ++i) {
    const double exact = silu_exact(gate[i]) * up[i];
    EXPECT_NEAR(hal::bf16_to_f32(y16[i]), exact, std::fabs(exact) * 0x1p-8 * 1.01) << i;  // half an ulp of bf16
  }
}

template <class F>
void in_arena(int threads, F&& f) {
  tbb::task_arena arena(threads);
  arena.execute(f);
}

TEST(CpuElementwiseDeterminism, SameBitsForOneAndManyThreads) {
  constexpr std::int64_t n = 150001;
  std::vector<std::uint16_t> x(n), w(n);
  std::vector<float> xf(n), wf(n);
  for (std::int64_t i = 0; i < n; ++i) {
    xf[i] = std::sin(static_cast<float>(i)) * 6.0f;
    wf[i] = std::cos(static_cast<float>(i) * 0.37f);
    x[i] = hal::f32_to_bf16(xf[i]);
    w[i] = hal::f32_to_bf16(wf[i]);
  }
  auto run = [&](int threads) {
    std::vector<std::uint16_t> g(n), sw(n);
    std::vector<float> mx(n);
    in_arena(threads, [&] {
      hal::Stream s(cpu());
      hal::ops::gelu(s, view_of(x, DType::bf16, {n}), view_of(g, DType::bf16, {n}));
      hal::ops::swiglu(s, view_of(x, DType::bf16, {n}), view_of(w, DType::bf16, {n}), view_of(sw, DType::bf16, {n}));
      hal::ops::maximum(s, view_of(xf, DType::f32, {331, 453}).transposed(0, 1), view_of(wf, DType::f32, {453, 1}),
                        view_of(mx, DType::f32, {453, 331}));
    });
    return std::make_tuple(g, sw, mx);
  };
  const auto one = run(1);
  EXPECT_TRUE(one == run(4));
  EXPECT_TRUE(one == run(tbb::task_arena::automatic));
}

}  // namespace
