// CPU reference reductions (sum, mean, max, min, argmax) through hal::ops,
// against values computed by hand or by plain double loops in the test.
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "hal/registry.h"
#include "hal/stream.h"
#include "ops/ops.h"
#include "unit/test_helpers.h"

namespace {

using hal::test::cpu;
using hal::test::view_of;

using hal::DType;
using hal::ReduceKind;
using hal::Shape;
using hal::Tensor;

std::vector<float> run_f32(ReduceKind kind, std::vector<float> x, const Shape& xs, int axis, bool keepdim,
                           const Shape& ys) {
  hal::Stream s(cpu());
  std::vector<float> y(static_cast<std::size_t>(hal::checked_numel(ys)), -777.0f);
  hal::ops::reduce(s, kind, view_of(x, DType::f32, xs), view_of(y, DType::f32, ys), {axis, keepdim});
  return y;
}

std::vector<std::int64_t> run_argmax(std::vector<float> x, const Shape& xs, int axis, bool keepdim, const Shape& ys) {
  hal::Stream s(cpu());
  std::vector<std::int64_t> y(static_cast<std::size_t>(hal::checked_numel(ys)), -7);
  hal::ops::argmax(s, view_of(x, DType::f32, xs), view_of(y, DType::i64, ys), {axis, keepdim});
  return y;
}

TEST(CpuReduce, TwoByThreeBothAxesByHand) {
  const std::vector<float> x = {1, 5, 3,   //
                                4, 2, 6};
  for (bool keepdim : {false, true}) {
    const Shape y0 = keepdim ? Shape{1, 3} : Shape{3};
    const Shape y1 = keepdim ? Shape{2, 1} : Shape{2};
    EXPECT_EQ(run_f32(ReduceKind::sum, x, {2, 3}, 0, keepdim, y0), (std::vector<float>{5, 7, 9}));
    EXPECT_EQ(run_f32(ReduceKind::sum, x, {2, 3}, 1, keepdim, y1), (std::vector<float>{9, 12}));
    EXPECT_EQ(run_f32(ReduceKind::mean, x, {2, 3}, 0, keepdim, y0), (std::vector<float>{2.5f, 3.5f, 4.5f}));
    EXPECT_EQ(run_f32(ReduceKind::mean, x, {2, 3}, 1, keepdim, y1), (std::vector<float>{3, 4}));
    EXPECT_EQ(run_f32(ReduceKind::max, x, {2, 3}, 0, keepdim, y0), (std::vector<float>{4, 5, 6}));
    EXPECT_EQ(run_f32(ReduceKind::max, x, {2, 3}, 1, keepdim, y1), (std::vector<float>{5, 6}));
    EXPECT_EQ(run_f32(ReduceKind::min, x, {2, 3}, 0, keepdim, y0), (std::vector<float>{1, 2, 3}));
    EXPECT_EQ(run_f32(ReduceKind::min, x, {2, 3}, 1, keepdim, y1), (std::vector<float>{1, 2}));
    EXPECT_EQ(run_argmax(x, {2, 3}, 0, keepdim, y0), (std::vector<std::int64_t>{1, 0, 1}));
    EXPECT_EQ(run_argmax(x, {2, 3}, 1, keepdim, y1), (std::vector<std::int64_t>{1, 2}));
  }
  // A negative axis means the same as its normalised form.
  EXPECT_EQ(run_f32(ReduceKind::sum, x, {2, 3}, -1, false, {2}), (std::vector<float>{9, 12}));
}

// x[i, j, k] with distinct values, some negative, so every kind and axis differs.
float value_2x3x4(int i, int j, int k) { return static_cast<float>(((i * 7 + j * 5 + k * 3) % 11) - 4) + 0.25f * i; }

TEST(CpuReduce, TwoByThreeByFourEveryAxisAgainstLoops) {
  const int dims[3] = {2, 3, 4};
  std::vector<float> x;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) x.push_back(value_2x3x4(i, j, k));

  for (int axis = 0; axis < 3; ++axis) {
    for (bool keepdim : {false, true}) {
      Shape ys;
      for (int a = 0; a < 3; ++a) {
        if (a != axis) ys.push_back(dims[a]);
        else if (keepdim) ys.push_back(1);
      }
      const auto sum = run_f32(ReduceKind::sum, x, {2, 3, 4}, axis, keepdim, ys);
      const auto mean = run_f32(ReduceKind::mean, x, {2, 3, 4}, axis, keepdim, ys);
      const auto mx = run_f32(ReduceKind::max, x, {2, 3, 4}, axis, keepdim, ys);
      const auto mn = run_f32(ReduceKind::min, x, {2, 3, 4}, axis, keepdim, ys);
      const auto am = run_argmax(x, {2, 3, 4}, axis, keepdim, ys);
      // Output elements in row-major order over the remaining dims.
      std::size_t out = 0;
      for (int i = 0; i < (axis == 0 ? 1 : 2); ++i)
        for (int j = 0; j < (axis == 1 ? 1 : 3); ++j)
          for (int k = 0; k < (axis == 2 ? 1 : 4); ++k, ++out) {
            double s = 0, best = -1e30, least = 1e30;
            std::int64_t arg = -1;
            for (int r = 0; r < dims[axis]; ++r) {
              const float v = value_2x3x4(axis == 0 ? r : i, axis == 1 ? r : j, axis == 2 ? r : k);
              s += v;
              if (v > best) best = v, arg = r;
              least = std::min<double>(least, v);
            }
            SCOPED_TRACE(testing::Message() << "axis " << axis << " keepdim " << keepdim << " out " << out);
            EXPECT_FLOAT_EQ(sum[out], static_cast<float>(s));
            EXPECT_FLOAT_EQ(mean[out], static_cast<float>(s / dims[axis]));
            EXPECT_EQ(mx[out], static_cast<float>(best));
            EXPECT_EQ(mn[out], static_cast<float>(least));
            EXPECT_EQ(am[out], arg);
          }
      EXPECT_EQ(out, sum.size());
    }
  }
}

TEST(CpuReduce, ArgmaxTakesFirstMaximumAndNaNCountsAsMax) {
  EXPECT_EQ(run_argmax({1, 3, 3, 2}, {4}, 0, false, {}), (std::vector<std::int64_t>{1}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(run_argmax({1, 9, nan, 5, nan}, {5}, 0, false, {}), (std::vector<std::int64_t>{2}));
  EXPECT_EQ(run_argmax({nan, 9}, {2}, 0, false, {}), (std::vector<std::int64_t>{0}));
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(run_argmax({-inf, -inf, -1}, {3}, 0, false, {}), (std::vector<std::int64_t>{2}));
}

TEST(CpuReduce, NaNPropagatesThroughEveryKind) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {1, nan, 3,  //
                                4, 5, 6};
  for (ReduceKind kind : {ReduceKind::sum, ReduceKind::mean, ReduceKind::max, ReduceKind::min}) {
    const auto y = run_f32(kind, x, {2, 3}, 1, false, {2});
    EXPECT_TRUE(std::isnan(y[0])) << hal::to_string(kind);
    EXPECT_FALSE(std::isnan(y[1])) << hal::to_string(kind);
  }
  // Max/min with NaN after the extreme value, and NaN first.
  EXPECT_TRUE(std::isnan(run_f32(ReduceKind::max, {9, nan}, {2}, 0, false, {})[0]));
  EXPECT_TRUE(std::isnan(run_f32(ReduceKind::min, {nan, -9}, {2}, 0, false, {})[0]));
}

TEST(CpuReduce, Bf16InputsAndOutputs) {
  // Each value is exact in bf16; their sum 3.51171875 needs 10 significant bits,
  // so the bf16 output must round the (exact, fp32-accumulated) sum once.
  const std::vector<float> values = {1.0f, 0.00390625f, 0.00390625f, 0.00390625f, -0.5f, 3.0f};
  std::vector<std::uint16_t> x;
  for (float v : values) x.push_back(hal::f32_to_bf16(v));
  double exact = 0;
  for (float v : values) exact += v;
  ASSERT_NE(hal::bf16_to_f32(hal::f32_to_bf16(static_cast<float>(exact))), exact);
  hal::Stream s(cpu());
  std::vector<std::uint16_t> y16(1);
  hal::ops::sum(s, view_of(x, DType::bf16, {6}), view_of(y16, DType::bf16, {}), {0, false});
  EXPECT_EQ(y16[0], hal::f32_to_bf16(static_cast<float>(exact)));
  hal::ops::max(s, view_of(x, DType::bf16, {6}), view_of(y16, DType::bf16, {}), {0, false});
  EXPECT_EQ(hal::bf16_to_f32(y16[0]), 3.0f);
  std::vector<std::int64_t> idx(1);
  hal::ops::argmax(s, view_of(x, DType::bf16, {6}), view_of(idx, DType::i64, {}), {0, false});
  EXPECT_EQ(idx[0], 5);
}

TEST(CpuReduce, F64OutputComputesInDouble) {
  // (1e8 + 1) - 1e8 is 0 in fp32 but 1 in fp64: the oracle must use fp64.
  std::vector<double> x = {1e8, 1.0, -1e8};
  std::vector<double> y(1);
  hal::Stream s(cpu());
  hal::ops::sum(s, view_of(x, DType::f64, {3}), view_of(y, DType::f64, {}), {0, false});
  EXPECT_EQ(y[0], 1.0);
}

TEST(CpuReduce, PermutedViewEqualsContiguous) {
  // x stored as [4, 3, 5]; the view permuted to [5, 4, 3] is reduced over each axis
  // and compared with a contiguous copy of the same logical tensor.
  const Shape stored{4, 3, 5};
  std::vector<float> base(60);
  for (int i = 0; i < 60; ++i) base[static_cast<std::size_t>(i)] = std::sin(0.37f * i) * 10.0f;
  Tensor permuted = view_of(base, DType::f32, stored).permuted({2, 0, 1});
  std::vector<float> dense(60);
  for (int a = 0; a < 5; ++a)
    for (int b = 0; b < 4; ++b)
      for (int c = 0; c < 3; ++c) dense[static_cast<std::size_t>((a * 4 + b) * 3 + c)] = base[static_cast<std::size_t>((b * 3 + c) * 5 + a)];
  hal::Stream s(cpu());
  const Shape logical{5, 4, 3};
  for (int axis = 0; axis < 3; ++axis) {
    Shape ys = logical;
    ys.erase(axis);
    for (ReduceKind kind : {ReduceKind::sum, ReduceKind::mean, ReduceKind::max, ReduceKind::min}) {
      std::vector<float> from_view(static_cast<std::size_t>(hal::checked_numel(ys)));
      std::vector<float> from_dense(from_view.size());
      hal::ops::reduce(s, kind, permuted, view_of(from_view, DType::f32, ys), {axis, false});
      hal::ops::reduce(s, kind, view_of(dense, DType::f32, logical), view_of(from_dense, DType::f32, ys), {axis, false});
      EXPECT_EQ(from_view, from_dense) << "axis " << axis << " " << hal::to_string(kind);
    }
    // A strided output: y written through a transposed view.
    if (ys.rank() == 2) {
      std::vector<float> yt(static_cast<std::size_t>(hal::checked_numel(ys)));
      std::vector<float> yd(yt.size());
      Tensor y_view = view_of(yt, DType::f32, {ys[1], ys[0]}).transposed(0, 1);
      hal::ops::sum(s, permuted, y_view, {axis, false});
      hal::ops::sum(s, view_of(dense, DType::f32, logical), view_of(yd, DType::f32, ys), {axis, false});
      for (std::int64_t i = 0; i < ys[0]; ++i)
        for (std::int64_t j = 0; j < ys[1]; ++j)
          EXPECT_EQ(yt[static_cast<std::size_t>(j * ys[0] + i)], yd[static_cast<std::size_t>(i * ys[1] + j)]);
    }
  }
}

TEST(CpuReduce, ContiguousRowsEqualStridedRows) {
  // Rows of 37 and 1000 elements (vector bodies and tails), once contiguous and
  // once as the transposed view of their transpose (stride 6): contiguous f32
  // rows are read in place, bf16 ones widened, strided ones gathered, and every
  // kind must give the same bits either way.
  hal::Stream s(cpu());
  for (DType t : {DType::f32, DType::bf16}) {
    for (std::int64_t n : {37, 1000}) {
      constexpr std::int64_t kRows = 6;
      std::vector<float> values(static_cast<std::size_t>(kRows * n));
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.37f * static_cast<float>(i)) * 10.0f;
      values[5] = std::numeric_limits<float>::quiet_NaN();  // row 0 holds a NaN
      std::vector<float> dense_f(values.size()), stored_t_f(values.size());
      for (std::int64_t r = 0; r < kRows; ++r)
        for (std::int64_t c = 0; c < n; ++c) {
          dense_f[static_cast<std::size_t>(r * n + c)] = values[static_cast<std::size_t>(r * n + c)];
          stored_t_f[static_cast<std::size_t>(c * kRows + r)] = values[static_cast<std::size_t>(r * n + c)];
        }
      std::vector<std::uint16_t> dense_b(values.size()), stored_t_b(values.size());
      for (std::size_t i = 0; i < values.size(); ++i) {
        dense_b[i] = hal::f32_to_bf16(dense_f[i]);
        stored_t_b[i] = hal::f32_to_bf16(stored_t_f[i]);
      }
      const Tensor dense = t == DType::f32 ? view_of(dense_f, t, {kRows, n}) : view_of(dense_b, t, {kRows, n});
      const Tensor strided =
          (t == DType::f32 ? view_of(stored_t_f, t, {n, kRows}) : view_of(stored_t_b, t, {n, kRows})).transposed(0, 1);
      for (ReduceKind kind : {ReduceKind::sum, ReduceKind::mean, ReduceKind::max, ReduceKind::min}) {
        std::vector<std::uint32_t> a(kRows), b(kRows);  // room for f32 or bf16 results
        hal::test::register_host_memory(a);
        hal::test::register_host_memory(b);
        const DType yt = t;
        hal::ops::reduce(s, kind, dense, Tensor::contiguous(a.data(), &cpu(), yt, {kRows}), {-1, false});
        hal::ops::reduce(s, kind, strided, Tensor::contiguous(b.data(), &cpu(), yt, {kRows}), {-1, false});
        EXPECT_EQ(a, b) << hal::dtype_name(t) << " n " << n << " " << hal::to_string(kind);
        EXPECT_NE(a, std::vector<std::uint32_t>(kRows, 0u)) << "nothing written";
      }
      std::vector<std::int64_t> ia(kRows, -1), ib(kRows, -1);
      hal::test::register_host_memory(ia);
      hal::test::register_host_memory(ib);
      hal::ops::argmax(s, dense, Tensor::contiguous(ia.data(), &cpu(), DType::i64, {kRows}), {-1, false});
      hal::ops::argmax(s, strided, Tensor::contiguous(ib.data(), &cpu(), DType::i64, {kRows}), {-1, false});
      EXPECT_EQ(ia, ib) << hal::dtype_name(t) << " n " << n << " argmax";
      EXPECT_EQ(ia[0], 5) << "row 0: its NaN";
    }
  }
}

TEST(CpuReduce, BitwiseIdenticalForAnyThreadCount) {
  const Shape xs{512, 1024};
  std::vector<float> x(512 * 1024);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.001f * static_cast<float>(i * 7919 % 100003)) * 3.0f;
  hal::Stream s(cpu());
  for (int axis : {0, 1}) {
    const Shape ys{axis == 0 ? 1024 : 512};
    std::vector<float> one(static_cast<std::size_t>(ys[0])), many(one.size());
    tbb::task_arena single(1);
    single.execute([&] { hal::ops::sum(s, view_of(x, DType::f32, xs), view_of(one, DType::f32, ys), {axis, false}); });
    hal::ops::sum(s, view_of(x, DType::f32, xs), view_of(many, DType::f32, ys), {axis, false});
    EXPECT_EQ(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)), 0) << "axis " << axis;
    // And the sums are right: compare one row against a double loop.
    double ref = 0;
    for (int r = 0; r < (axis == 0 ? 512 : 1024); ++r) ref += x[static_cast<std::size_t>(axis == 0 ? r * 1024 : r)];
    EXPECT_NEAR(one[0], ref, 1e-4 * (axis == 0 ? 512 : 1024));
  }
}

}  // namespace
