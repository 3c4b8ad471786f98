// The training ops on the CPU: refusals (each naming op and argument, with
// nothing written), bitwise determinism of the row sums for any thread count,
// the fp32 kernels against the fp64 oracle on a few known values, and the GPU
// backends declining them by name.
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "backends/gpu/support.h"
#include "hal/stream.h"
#include "ops/ops.h"
#include "unit/test_helpers.h"

namespace {

using hal::DType;
using hal::Shape;
using hal::Tensor;
using hal::test::contains;
using hal::test::cpu;
using hal::test::error_of;
using hal::test::view_of;

std::vector<float> ramp(std::size_t n, float scale, float shift = 0.0f) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + 0.11f) + shift;
  return v;
}

TEST(TrainingOps, SoftmaxBackwardRefusesMismatchedGradient) {
  std::vector<float> y(12), dy(10), dx(12);
  hal::Stream s(cpu());
  const std::string m = error_of([&] {
    hal::ops::softmax_backward(s, view_of(y, DType::f32, {3, 4}), view_of(dy, DType::f32, {2, 5}),
                               view_of(dx, DType::f32, {3, 4}));
  });
  EXPECT_TRUE(contains(m, "softmax_backward") && contains(m, "dy") && contains(m, "[3, 4]")) << m;
}

TEST(TrainingOps, OutputOverlappingAnInputIsRefused) {
  std::vector<float> buf(24);
  hal::Stream s(cpu());
  const Tensor y = view_of(buf, DType::f32, {12});
  const Tensor dy = Tensor::contiguous(buf.data() + 12, &cpu(), DType::f32, {12});
  const std::string m = error_of([&] { hal::ops::unary_backward(s, hal::UnaryKind::silu, y, dy, dy); });
  EXPECT_TRUE(contains(m, "silu_backward") && contains(m, "dx")) << m;
}

TEST(TrainingOps, UnaryBackwardOfAKindWithoutOneIsRefused) {
  std::vector<float> x(4), dy(4), dx(4);
  hal::Stream s(cpu());
  const std::string m = error_of([&] {
    hal::ops::unary_backward(s, hal::UnaryKind::neg, view_of(x, DType::f32, {4}), view_of(dy, DType::f32, {4}),
                             view_of(dx, DType::f32, {4}));
  });
  EXPECT_TRUE(contains(m, "kind") && contains(m, "neg")) << m;
}

TEST(TrainingOps, RmsnormBackwardHasNoBias) {
  std::vector<float> x(8), w(4), dy(8), dx(8), dw(4), db(4);
  hal::Stream s(cpu());
  hal::NormBackwardCall c{view_of(x, DType::f32, {2, 4}),  view_of(w, DType::f32, {4}),
                          view_of(dy, DType::f32, {2, 4}), view_of(dx, DType::f32, {2, 4}),
                          view_of(dw, DType::f32, {4}),    view_of(db, DType::f32, {4}), 1e-5f, true};
  EXPECT_TRUE(contains(error_of([&] { hal::ops::run(s, c); }), "dbias"));
  c.rms = false;
  c.dweight = view_of(dw, DType::bf16, {4});
  EXPECT_TRUE(contains(error_of([&] { hal::ops::run(s, c); }), "dweight"));
}

TEST(TrainingOps, CrossEntropyRefusals) {
  std::vector<float> z(12), loss(3, 7.0f), dz(12);
  std::vector<std::int32_t> t = {0, 5, 1};
  std::vector<float> tf(3);
  hal::Stream s(cpu());
  const Tensor logits = view_of(z, DType::f32, {3, 4});
  // Target 5 is outside [0, 4): an error naming the row, and nothing written.
  const std::string m = error_of([&] {
    hal::ops::cross_entropy(s, logits, view_of(t, DType::i32, {3}), view_of(loss, DType::f32, {3}),
                            view_of(dz, DType::f32, {3, 4}), {.reduction = hal::LossReduction::none});
    s.synchronize();
  });
  EXPECT_TRUE(contains(m, "targets") && contains(m, "5 at row 1")) << m;
  EXPECT_EQ(loss, std::vector<float>(3, 7.0f));
  EXPECT_TRUE(contains(error_of([&] {
                         hal::ops::cross_entropy(s, logits, view_of(tf, DType::f32, {3}),
                                                 view_of(loss, DType::f32, {}), std::nullopt);
                       }),
                       "i32 or i64"));
  EXPECT_TRUE(contains(error_of([&] {
                         hal::ops::cross_entropy(s, logits, view_of(t, DType::i32, {3}),
                                                 view_of(loss, DType::f32, {3}), std::nullopt);
                       }),
                       "loss"));
  EXPECT_TRUE(contains(error_of([&] {
                         hal::ops::cross_entropy(s, logits, view_of(t, DType::i32, {3}),
                                                 view_of(loss, DType::f32, {}), std::nullopt,
                                                 {.ignore_index = 5, .label_smoothing = 1.5f});
                       }),
                       "label_smoothing"));
}

TEST(TrainingOps, CrossEntropyOfUniformLogitsIsLogV) {
  // Equal logits: every probability is 1/V, loss log V, dlogits (1/V - [j == t]) / count.
  std::vector<float> z(2 * 8, 0.25f), loss(1), dz(16);
  std::vector<std::int64_t> t = {3, 6};
  hal::Stream s(cpu());
  hal::ops::cross_entropy(s, view_of(z, DType::f32, {2, 8}), view_of(t, DType::i64, {2}), view_of(loss, DType::f32, {}),
                          view_of(dz, DType::f32, {2, 8}));
  s.synchronize();
  EXPECT_NEAR(loss[0], std::log(8.0), 1e-6);
  EXPECT_NEAR(dz[3], (0.125 - 1.0) / 2.0, 1e-7);
  EXPECT_NEAR(dz[8 + 6], (0.125 - 1.0) / 2.0, 1e-7);
  EXPECT_NEAR(dz[0], 0.125 / 2.0, 1e-7);
}

// dweight, dbias and the mean loss sum over rows: the same bits with one
// thread and with two.
TEST(TrainingOps, RowSumsAreTheSameForAnyThreadCount) {
  const std::int64_t rows = 1000, d = 48;
  std::vector<float> x = ramp(rows * d, 2.0f, 0.3f), w = ramp(d, 0.2f, 1.0f), dy = ramp(rows * d, 1.0f);
  auto norm = [&](int threads) {
    std::vector<float> dx(x.size()), dw(d), db(d), loss(1);
    std::vector<std::int32_t> t(rows);
    for (std::int64_t i = 0; i < rows; ++i) t[i] = static_cast<std::int32_t>((i * 7) % d);
    tbb::task_arena arena(threads);
    arena.execute([&] {
      hal::Stream s(cpu());
      hal::ops::layernorm_backward(s, view_of(x, DType::f32, {rows, d}), view_of(w, DType::f32, {d}),
                                   view_of(dy, DType::f32, {rows, d}), view_of(dx, DType::f32, {rows, d}),
                                   view_of(dw, DType::f32, {d}), view_of(db, DType::f32, {d}));
      hal::ops::cross_entropy(s, view_of(x, DType::f32, {rows, d}), view_of(t, DType::i32, {rows}),
                              view_of(loss, DType::f32, {}), std::nullopt);
      s.synchronize();
    });
    dx.insert(dx.end(), dw.begin(), dw.end());
    dx.insert(dx.end(), db.begin(), db.end());
    dx.push_back(loss[0]);
    return dx;
  };
  const std::vector<float> one = norm(1), two = norm(2);
  ASSERT_EQ(one.size(), two.size());
  EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0);
  // A sum that ignored some blocks would not be the column sum of dy.
  double col0 = 0;
  for (std::int64_t r = 0; r < rows; ++r) col0 += dy[static_cast<std::size_t>(r * d)];
  EXPECT_NEAR(one[static_cast<std::size_t>(rows * d + d)], col0, 1e-3);
}

TEST(TrainingOps, EmbeddingBackwardRefusesAnOutOfRangeIdAndWritesNothing) {
  std::vector<std::int64_t> ids = {1, 4, 3};
  std::vector<float> dy(6, 1.0f), table(8, 5.0f);
  hal::Stream s(cpu());
  const std::string m = error_of([&] {
    hal::ops::embedding_backward(s, view_of(ids, DType::i64, {3}), view_of(dy, DType::f32, {3, 2}),
                                 view_of(table, DType::f32, {4, 2}));
  });
  EXPECT_TRUE(contains(m, "embedding_backward") && contains(m, "4 at position 1")) << m;
  EXPECT_EQ(table, std::vector<float>(8, 5.0f));
}

TEST(TrainingOps, AdamwRefusals) {
  std::vector<float> p(4), g(4), m(4), v(4);
  std::vector<std::uint16_t> p16(4), g16(4);
  hal::Stream s(cpu());
  auto f32 = [](std::vector<float>& x) { return view_of(x, DType::f32, {4}); };
  // A 16-bit param needs its f32 master copy.
  EXPECT_TRUE(contains(error_of([&] {
                         hal::ops::adamw_step(s, view_of(p16, DType::bf16, {4}), view_of(g16, DType::bf16, {4}), f32(m),
                                              f32(v));
                       }),
                       "master"));
  EXPECT_TRUE(contains(error_of([&] { hal::ops::adamw_step(s, f32(p), f32(g), f32(m), f32(v), {.beta2 = 1.0f}); }),
                       "beta2"));
  EXPECT_TRUE(contains(error_of([&] { hal::ops::adamw_step(s, f32(p), f32(g), f32(m), f32(v), {.step = 0}); }), "step"));
  EXPECT_TRUE(contains(error_of([&] { hal::ops::adamw_step(s, f32(p), f32(g), f32(m), f32(m)); }), "'v'"));
}

TEST(TrainingOps, EmbeddingBackwardIsTheSameForAnyThreadCount) {
  // 4096 positions into 5 rows: long chains per row, summed in position order.
  std::vector<std::int32_t> ids(4096);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int32_t>((i * 2654435761u) % 5);
  const std::vector<float> dy = ramp(4096 * 16, 1.0f);
  auto run = [&](int threads) {
    std::vector<float> table(5 * 16, 0.5f), dyc = dy;
    tbb::task_arena arena(threads);
    arena.execute([&] {
      hal::Stream s(cpu());
      hal::ops::embedding_backward(s, view_of(ids, DType::i32, {4096}), view_of(dyc, DType::f32, {4096, 16}),
                                   view_of(table, DType::f32, {5, 16}));
    });
    return table;
  };
  const std::vector<float> one = run(1), two = run(2);
  EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0);
  // Row 0, column 0 is 0.5 plus its positions' dy in ascending order, in fp32.
  float want = 0.5f;
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (ids[i] == 0) want += dy[i * 16];
  EXPECT_EQ(one[0], want);
}

TEST(TrainingOps, GpuBackendsDeclineByName) {
  std::vector<float> y(4), dy(4), dx(4);
  const hal::OpCall call = hal::SoftmaxBackwardCall{view_of(y, DType::f32, {4}), view_of(dy, DType::f32, {4}),
                                                    view_of(dx, DType::f32, {4})};
  for (const char* backend : {"cuda", "hip"}) {
    const hal::Support s = hal::gpu_supports_call(backend, call);
    EXPECT_FALSE(s.ok);
    EXPECT_TRUE(contains(s.reason, backend) && contains(s.reason, "softmax_backward")) << s.reason;
  }
}

}  // namespace
