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

// attention and attention_backward on q [b, sq, hq, d], k, v [b, sk, hkv, d]:
// f32 views of `data`'s vectors.
struct AttentionProblem {
  std::int64_t b, sq, sk, hq, hkv, d;
  bool causal;
  std::vector<float> q, k, v, dy;
  AttentionProblem(std::int64_t b_, std::int64_t sq_, std::int64_t sk_, std::int64_t hq_, std::int64_t hkv_,
                   std::int64_t d_, bool causal_)
      : b(b_), sq(sq_), sk(sk_), hq(hq_), hkv(hkv_), d(d_), causal(causal_),
        q(ramp(b * sq * hq * d, 1.0f)), k(ramp(b * sk * hkv * d, 0.8f, 0.1f)), v(ramp(b * sk * hkv * d, 1.3f, -0.2f)),
        dy(ramp(b * sq * hq * d, 0.7f, 0.05f)) {
    for (std::size_t i = 0; i < k.size(); ++i) k[i] *= std::cos(0.013f * static_cast<float>(i));  // not periodic
  }
  Shape qs() const { return {b, sq, hq, d}; }
  Shape ks() const { return {b, sk, hkv, d}; }
  Shape ls() const { return {b, sq, hq}; }
  struct Result {
    std::vector<float> y, lse, dq, dk, dv;
  };
  Result run(int threads) {
    Result r{std::vector<float>(q.size()), std::vector<float>(b * sq * hq), std::vector<float>(q.size()),
             std::vector<float>(k.size()), std::vector<float>(v.size())};
    tbb::task_arena arena(threads);
    arena.execute([&] {
      hal::Stream s(cpu());
      hal::AttentionCall fwd{view_of(q, DType::f32, qs()), view_of(k, DType::f32, ks()), view_of(v, DType::f32, ks()),
                             view_of(r.y, DType::f32, qs()), 0.0f, causal};
      fwd.lse = view_of(r.lse, DType::f32, ls());
      hal::ops::run(s, fwd);
      hal::ops::attention_backward(s, view_of(q, DType::f32, qs()), view_of(k, DType::f32, ks()),
                                   view_of(v, DType::f32, ks()), view_of(r.y, DType::f32, qs()),
                                   view_of(dy, DType::f32, qs()), view_of(r.lse, DType::f32, ls()),
                                   view_of(r.dq, DType::f32, qs()), view_of(r.dk, DType::f32, ks()),
                                   view_of(r.dv, DType::f32, ks()), {.causal = causal});
      s.synchronize();
    });
    return r;
  }
};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// dk, dv sum over query heads and queries, dq over key blocks: the same bits
// with one thread and two (grouped heads, causal with sq != sk, several key
// and query blocks).
TEST(TrainingOps, AttentionBackwardIsTheSameForAnyThreadCount) {
  for (bool causal : {false, true}) {
    AttentionProblem p(2, 37, 131, 4, 2, 24, causal);
    const auto one = p.run(1), two = p.run(2);
    EXPECT_TRUE(same_bits(one.dq, two.dq) && same_bits(one.dk, two.dk) && same_bits(one.dv, two.dv)) << causal;
    // dv of a key sums P dy over every query (and head) that sees it; summed
    // over the keys that is the sum of dy over the rows that see any key
    // (each row's P sums to 1).
    for (std::int64_t c = 0; c < p.d; c += 7) {
      double got = 0, want = 0;
      for (std::int64_t r = 0; r < p.b * p.sk * p.hkv; ++r) got += one.dv[static_cast<std::size_t>(r * p.d + c)];
      for (std::int64_t r = 0; r < p.b * p.sq * p.hq; ++r) want += p.dy[static_cast<std::size_t>(r * p.d + c)];
      EXPECT_NEAR(got, want, 1e-3 * (1.0 + std::fabs(want))) << "channel " << c;
    }
    // sum over keys of dS is 0 for each row (softmax's Jacobian), so the dk
    // of all keys sum to 0 channel by channel.
    for (std::int64_t c = 0; c < p.d; c += 5) {
      double sum = 0, mag = 0;
      for (std::int64_t r = 0; r < p.b * p.sk * p.hkv; ++r) {
        sum += one.dk[static_cast<std::size_t>(r * p.d + c)];
        mag += std::fabs(one.dk[static_cast<std::size_t>(r * p.d + c)]);
      }
      EXPECT_GT(mag, 1e-3);
      EXPECT_NEAR(sum, 0.0, 1e-4 * (1.0 + mag)) << "channel " << c;
    }
  }
}

// Writing lse changes no bit of y, on the blocked path and the row path
// (a decode step); lse is log(sum exp(scale q.k)) over the visible keys.
TEST(TrainingOps, AttentionLseLeavesYAndIsTheRowLogSumExp) {
  for (std::int64_t sq : {1, 33}) {
    AttentionProblem p(1, sq, 70, 4, 2, 16, true);
    std::vector<float> y_plain(p.q.size()), y(p.q.size()), lse(p.b * p.sq * p.hq, 7.0f);
    hal::Stream s(cpu());
    hal::ops::attention(s, view_of(p.q, DType::f32, p.qs()), view_of(p.k, DType::f32, p.ks()),
                        view_of(p.v, DType::f32, p.ks()), view_of(y_plain, DType::f32, p.qs()), {.causal = true});
    hal::AttentionCall with{view_of(p.q, DType::f32, p.qs()), view_of(p.k, DType::f32, p.ks()),
                            view_of(p.v, DType::f32, p.ks()), view_of(y, DType::f32, p.qs()), 0.0f, true};
    with.lse = view_of(lse, DType::f32, p.ls());
    hal::ops::run(s, with);
    s.synchronize();
    EXPECT_TRUE(same_bits(y, y_plain)) << sq;
    const double scale = 1.0 / std::sqrt(static_cast<double>(p.d));
    for (std::int64_t i = 0; i < p.sq; ++i)
      for (std::int64_t h = 0; h < p.hq; ++h) {
        double sum = 0;
        for (std::int64_t j = 0; j <= i + (p.sk - p.sq); ++j) {
          double dot = 0;
          for (std::int64_t e = 0; e < p.d; ++e)
            dot += p.q[static_cast<std::size_t>((i * p.hq + h) * p.d + e)] *
                   p.k[static_cast<std::size_t>((j * p.hkv + h / 2) * p.d + e)];
          sum += std::exp(scale * dot);
        }
        EXPECT_NEAR(lse[static_cast<std::size_t>(i * p.hq + h)], std::log(sum), 1e-5) << i << " " << h;
      }
  }
}

TEST(TrainingOps, AttentionBackwardRefusals) {
  std::vector<float> q(2 * 3 * 4 * 8), k(2 * 5 * 2 * 8), v(k.size()), y(q.size()), dy(q.size()), lse(2 * 3 * 4);
  std::vector<float> dq(q.size()), dk(k.size()), dv(k.size());
  const Shape qs{2, 3, 4, 8}, ks{2, 5, 2, 8};
  hal::Stream s(cpu());
  auto call = [&](Shape lse_shape, Shape dk_shape, DType lse_type) {
    return error_of([&] {
      hal::ops::attention_backward(s, view_of(q, DType::f32, qs), view_of(k, DType::f32, ks), view_of(v, DType::f32, ks),
                                   view_of(y, DType::f32, qs), view_of(dy, DType::f32, qs),
                                   view_of(lse, lse_type, lse_shape), view_of(dq, DType::f32, qs),
                                   view_of(dk, DType::f32, dk_shape), view_of(dv, DType::f32, ks));
    });
  };
  std::string m = call({2, 4, 3}, ks, DType::f32);  // [b, hq, sq]: not hal's layout
  EXPECT_TRUE(contains(m, "attention_backward") && contains(m, "lse") && contains(m, "[2, 3, 4]")) << m;
  m = call({2, 3, 4}, {2, 5, 2, 4}, DType::f32);
  EXPECT_TRUE(contains(m, "'dk'") && contains(m, "[2, 5, 2, 8]")) << m;
  m = call({2, 3, 4}, ks, DType::bf16);
  EXPECT_TRUE(contains(m, "lse") && contains(m, "f32")) << m;
  // The forward's lse output: its shape, and nothing written on a refusal.
  std::vector<float> small(6, 3.0f);
  hal::AttentionCall fwd{view_of(q, DType::f32, qs), view_of(k, DType::f32, ks), view_of(v, DType::f32, ks),
                         view_of(y, DType::f32, qs)};
  fwd.lse = view_of(small, DType::f32, {2, 3});
  m = error_of([&] { hal::ops::run(s, fwd); });
  EXPECT_TRUE(contains(m, "attention") && contains(m, "lse") && contains(m, "rank")) << m;
  EXPECT_EQ(small, std::vector<float>(6, 3.0f));
}

TEST(TrainingOps, GpuBackendsDeclineAttentionLseAndBackward) {
  std::vector<float> q(16), lse(2);
  const Tensor t = view_of(q, DType::f32, {1, 2, 1, 8});
  hal::AttentionCall fwd{t, t, t, t};
  EXPECT_TRUE(hal::gpu_supports_call("cuda", fwd).ok);  // without lse: the GPU kernels take it
  fwd.lse = view_of(lse, DType::f32, {1, 2, 1});
  const hal::OpCall bwd = hal::AttentionBackwardCall{t, t, t, t, t, *fwd.lse, t, t, t};
  for (const char* backend : {"cuda", "hip"}) {
    const hal::Support a = hal::gpu_supports_call(backend, fwd), b = hal::gpu_supports_call(backend, bwd);
    EXPECT_FALSE(a.ok);
    EXPECT_TRUE(contains(a.reason, backend) && contains(a.reason, "lse")) << a.reason;
    EXPECT_FALSE(b.ok);
    EXPECT_TRUE(contains(b.reason, backend) && contains(b.reason, "attention_backward")) << b.reason;
  }
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
