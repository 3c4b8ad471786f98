// The fp64 oracle of every training op checked against central finite
// differences of the fp64 forward op: for a random dy, the backward op's
// dx must be the gradient of L(x) = sum dy * forward(x). The oracle is the
// CPU kernel run in f64, so this checks the formulas themselves (a sign, a
// missing term, a wrong mean), independently of the contract.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "hal/stream.h"
#include "ops/ops.h"
#include "unit/test_helpers.h"

namespace {

using hal::DType;
using hal::OpCall;
using hal::Shape;
using hal::Tensor;
using hal::test::cpu;
using hal::test::view_of;
using Vec = std::vector<double>;

Tensor f64(Vec& v, const Shape& s) { return view_of(v, DType::f64, s); }

void run(const OpCall& call) {
  hal::Stream s(cpu());
  hal::ops::run(s, call);
  s.synchronize();
}

Vec random_vec(std::size_t n, unsigned seed, double lo = -2.0, double hi = 2.0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  Vec v(n);
  for (double& x : v) x = d(gen);
  return v;
}

double dot(const Vec& a, const Vec& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// dL/dx_k by central differences, h relative to |x_k|.
Vec numeric_gradient(const std::function<double(const Vec&)>& loss, Vec x) {
  Vec g(x.size());
  for (std::size_t k = 0; k < x.size(); ++k) {
    const double x0 = x[k], h = 1e-5 * std::max(1.0, std::fabs(x0));
    x[k] = x0 + h;
    const double up = loss(x);
    x[k] = x0 - h;
    const double down = loss(x);
    x[k] = x0;
    g[k] = (up - down) / (2.0 * h);
  }
  return g;
}

// Truncation O(h^2) and cancellation O(1e-16 |L| / h): 1e-7 leaves a margin
// of a hundred over both for these sizes, and is far below any formula error.
void expect_gradient(const Vec& analytic, const Vec& numeric, const char* what) {
  ASSERT_EQ(analytic.size(), numeric.size());
  for (std::size_t i = 0; i < analytic.size(); ++i)
    EXPECT_NEAR(analytic[i], numeric[i], 1e-7 * (1.0 + std::fabs(numeric[i]))) << what << " element " << i;
}

TEST(TrainingGradcheck, SoftmaxAndLogSoftmax) {
  for (bool log : {false, true})
    for (bool causal : {false, true}) {
      const Shape s{3, 5};
      const float scale = 0.7f;
      Vec x = random_vec(15, 1), dy = random_vec(15, 2);
      auto forward = [&](Vec in) {
        Vec y(15);
        run(hal::SoftmaxCall{f64(in, s), f64(y, s), scale, causal, log});
        return y;
      };
      Vec y = forward(x), dx(15, 99.0);
      run(hal::SoftmaxBackwardCall{f64(y, s), f64(dy, s), f64(dx, s), scale, causal, log});
      // Masked log_softmax entries are the constant -inf: left out of L.
      auto loss = [&](const Vec& in) {
        const Vec out = forward(in);
        double l = 0;
        for (std::size_t i = 0; i < out.size(); ++i) l += std::isinf(out[i]) ? 0.0 : dy[i] * out[i];
        return l;
      };
      expect_gradient(dx, numeric_gradient(loss, x),
                      log ? "log_softmax dx" : "softmax dx");
    }
}

TEST(TrainingGradcheck, LayernormAndRmsnorm) {
  for (bool rms : {false, true}) {
    const std::int64_t rows = 4, d = 6;
    const Shape s{rows, d}, ws{d};
    Vec x = random_vec(24, 3), w = random_vec(6, 4, 0.5, 1.5), b = random_vec(6, 5), dy = random_vec(24, 6);
    auto forward = [&](Vec xi, Vec wi, Vec bi) {
      Vec y(24);
      hal::NormCall n{f64(xi, s), f64(wi, ws), std::nullopt, f64(y, s), 1e-5f, rms};
      if (!rms) n.bias = f64(bi, ws);
      run(n);
      return dot(dy, y);
    };
    Vec dx(24), dw(6), db(6);
    hal::NormBackwardCall bw{f64(x, s), f64(w, ws), f64(dy, s), f64(dx, s), f64(dw, ws), std::nullopt, 1e-5f, rms};
    if (!rms) bw.dbias = f64(db, ws);
    run(bw);
    expect_gradient(dx, numeric_gradient([&](const Vec& v) { return forward(v, w, b); }, x), "dx");
    expect_gradient(dw, numeric_gradient([&](const Vec& v) { return forward(x, v, b); }, w), "dweight");
    if (!rms) expect_gradient(db, numeric_gradient([&](const Vec& v) { return forward(x, w, v); }, b), "dbias");
  }
}

TEST(TrainingGradcheck, UnaryKinds) {
  for (hal::UnaryKind k : {hal::UnaryKind::gelu, hal::UnaryKind::gelu_tanh, hal::UnaryKind::silu, hal::UnaryKind::relu,
                           hal::UnaryKind::sigmoid, hal::UnaryKind::tanh, hal::UnaryKind::exp}) {
    Vec x = random_vec(32, 7, -4.0, 4.0), dy = random_vec(32, 8);
    for (double& v : x)
      if (std::fabs(v) < 0.05) v = 0.5;  // relu's kink: keep h away from it
    const Shape s{32};
    auto forward = [&](Vec in) {
      Vec y(32);
      run(hal::UnaryCall{k, f64(in, s), f64(y, s)});
      return dot(dy, y);
    };
    Vec dx(32);
    run(hal::UnaryBackwardCall{k, f64(x, s), f64(dy, s), f64(dx, s)});
    expect_gradient(dx, numeric_gradient(forward, x), std::string(hal::unary_backward_name(k)).c_str());
  }
}

TEST(TrainingGradcheck, Swiglu) {
  const Shape s{3, 7};
  Vec g = random_vec(21, 9, -5.0, 5.0), u = random_vec(21, 10), dy = random_vec(21, 11);
  auto forward = [&](Vec gi, Vec ui) {
    Vec y(21);
    run(hal::SwigluCall{f64(gi, s), f64(ui, s), f64(y, s)});
    return dot(dy, y);
  };
  Vec dg(21), du(21);
  run(hal::SwigluBackwardCall{f64(g, s), f64(u, s), f64(dy, s), f64(dg, s), f64(du, s)});
  expect_gradient(dg, numeric_gradient([&](const Vec& v) { return forward(v, u); }, g), "dgate");
  expect_gradient(du, numeric_gradient([&](const Vec& v) { return forward(g, v); }, u), "dup");
}

TEST(TrainingGradcheck, CrossEntropyEveryReduction) {
  for (hal::LossReduction red : {hal::LossReduction::none, hal::LossReduction::mean, hal::LossReduction::sum})
    for (float smoothing : {0.0f, 0.15f}) {
      const std::int64_t n = 5, v = 7;
      Vec z = random_vec(35, 12, -3.0, 3.0);
      std::vector<std::int64_t> t = {3, -100, 0, 6, 2};  // row 1 ignored
      const Tensor targets = view_of(t, DType::i64, {n});
      const Shape loss_shape = red == hal::LossReduction::none ? Shape{n} : Shape{};
      auto loss = [&](Vec in) {
        Vec l(static_cast<std::size_t>(red == hal::LossReduction::none ? n : 1));
        run(hal::CrossEntropyCall{f64(in, {n, v}), targets, f64(l, loss_shape), std::nullopt, -100, smoothing, red});
        double total = 0;
        for (double x : l) total += x;  // none: L = the sum of the rows
        return total;
      };
      Vec l(static_cast<std::size_t>(red == hal::LossReduction::none ? n : 1)), dz(35);
      run(hal::CrossEntropyCall{f64(z, {n, v}), targets, f64(l, loss_shape), f64(dz, {n, v}), -100, smoothing, red});
      expect_gradient(dz, numeric_gradient(loss, z), "dlogits");
      for (std::int64_t j = 0; j < v; ++j) EXPECT_EQ(dz[static_cast<std::size_t>(v + j)], 0.0) << "ignored row";
    }
}

TEST(TrainingGradcheck, EmbeddingBackwardAccumulates) {
  const std::int64_t vocab = 6, dim = 3;
  std::vector<std::int32_t> ids = {4, 1, 4, 0, 4};  // row 4 three times, rows 2, 3, 5 never
  const Tensor id_view = view_of(ids, DType::i32, {5});
  Vec table = random_vec(18, 13), dy = random_vec(15, 14), prior = random_vec(18, 15);
  auto forward = [&](Vec t) {
    Vec y(15);
    run(hal::EmbeddingCall{f64(t, {vocab, dim}), id_view, f64(y, {5, dim})});
    return dot(dy, y);
  };
  Vec dtable = prior;
  run(hal::EmbeddingBackwardCall{id_view, f64(dy, {5, dim}), f64(dtable, {vocab, dim})});
  Vec grad = numeric_gradient(forward, table);
  for (std::size_t e = 0; e < grad.size(); ++e) grad[e] += prior[e];  // accumulated onto the prior contents
  expect_gradient(dtable, grad, "dtable");
  for (std::size_t j = 0; j < 3; ++j) EXPECT_EQ(dtable[2 * 3 + j], prior[2 * 3 + j]) << "untouched row";
}

TEST(TrainingGradcheck, RopeBackward) {
  for (hal::RopeStyle style : {hal::RopeStyle::neox, hal::RopeStyle::gptj}) {
    const Shape s{1, 3, 2, 8};
    Vec x = random_vec(48, 16), dy = random_vec(48, 17);
    std::vector<std::int32_t> pos = {0, 5, 11};
    const Tensor p = view_of(pos, DType::i32, {3});
    auto forward = [&](Vec in) {
      Vec y(48);
      run(hal::RopeCall{f64(in, s), p, f64(y, s), 100.0f, style, 6});
      return dot(dy, y);
    };
    Vec dx(48);
    run(hal::RopeBackwardCall{f64(dy, s), p, f64(dx, s), 100.0f, style, 6});
    expect_gradient(dx, numeric_gradient(forward, x), "rope dx");
  }
}

// dq, dk, dv from the forward's y and lse: grouped-query heads (dk, dv sum
// over two query heads), causal with sq < sk and sq > sk (queries that see
// no key: dq = 0), and 70 keys, two of the CPU's key blocks.
TEST(TrainingGradcheck, AttentionBackward) {
  struct Shape5 {
    std::int64_t b, sq, sk, hq, hkv, d, dv;
    bool causal;
  };
  for (const Shape5& g : {Shape5{2, 3, 5, 4, 2, 3, 2, false}, Shape5{1, 4, 6, 2, 1, 3, 2, true},
                          Shape5{1, 6, 3, 2, 2, 2, 3, true}, Shape5{1, 2, 70, 2, 1, 2, 2, true}}) {
    const Shape qs{g.b, g.sq, g.hq, g.d}, ks{g.b, g.sk, g.hkv, g.d}, vs{g.b, g.sk, g.hkv, g.dv};
    const Shape ys{g.b, g.sq, g.hq, g.dv}, ls{g.b, g.sq, g.hq};
    const auto count = [](const Shape& s) { return static_cast<std::size_t>(hal::checked_numel(s)); };
    const std::size_t nq = count(qs), nk = count(ks), nv = count(vs), ny = count(ys);
    Vec q = random_vec(nq, 30), k = random_vec(nk, 31), v = random_vec(nv, 32), dy = random_vec(ny, 33);
    const float scale = 0.6f;
    auto forward = [&](Vec qi, Vec ki, Vec vi, Vec* lse_out = nullptr) {
      Vec y(ny), lse(count(ls));
      hal::AttentionCall a{f64(qi, qs), f64(ki, ks), f64(vi, vs), f64(y, ys), scale, g.causal};
      a.lse = f64(lse, ls);
      run(a);
      if (lse_out) *lse_out = lse;
      return y;
    };
    Vec lse;
    Vec y = forward(q, k, v, &lse);
    Vec dq(nq, 99.0), dk(nk, 99.0), dv(nv, 99.0);
    run(hal::AttentionBackwardCall{f64(q, qs), f64(k, ks), f64(v, vs), f64(y, ys), f64(dy, ys), f64(lse, ls),
                                   f64(dq, qs), f64(dk, ks), f64(dv, vs), scale, g.causal});
    SCOPED_TRACE(::testing::Message() << "b " << g.b << " sq " << g.sq << " sk " << g.sk << " causal " << g.causal);
    expect_gradient(dq, numeric_gradient([&](const Vec& x) { return dot(dy, forward(x, k, v)); }, q), "dq");
    expect_gradient(dk, numeric_gradient([&](const Vec& x) { return dot(dy, forward(q, x, v)); }, k), "dk");
    expect_gradient(dv, numeric_gradient([&](const Vec& x) { return dot(dy, forward(q, k, x)); }, v), "dv");
    // lse is the row's log-sum-exp (finite for a query that sees a key).
    for (double l : lse) EXPECT_FALSE(std::isnan(l));
  }
}

// Not a gradient: AdamW against torch.optim.AdamW's update written out in double.
TEST(TrainingGradcheck, AdamwMatchesTheUpdateRule) {
  const std::size_t n = 9;
  Vec p = random_vec(n, 18), g = random_vec(n, 19), m = random_vec(n, 20, -0.1, 0.1), v = random_vec(n, 21, 0.0, 0.01);
  const Vec p0 = p, m0 = m, v0 = v;
  const float lr = 0.01f, b1 = 0.8f, b2 = 0.95f, eps = 1e-6f, wd = 0.1f;
  const std::int64_t step = 3;
  run(hal::AdamwCall{f64(p, {9}), f64(g, {9}), f64(m, {9}), f64(v, {9}), std::nullopt, lr, b1, b2, eps, wd, step});
  for (std::size_t i = 0; i < n; ++i) {
    const double mi = double(b1) * m0[i] + (1 - double(b1)) * g[i], vi = double(b2) * v0[i] + (1 - double(b2)) * g[i] * g[i];
    const double mhat = mi / (1 - std::pow(double(b1), 3)), vhat = vi / (1 - std::pow(double(b2), 3));
    const double pi = p0[i] * (1 - double(lr) * double(wd)) - double(lr) * mhat / (std::sqrt(vhat) + double(eps));
    EXPECT_NEAR(m[i], mi, 1e-15);
    EXPECT_NEAR(v[i], vi, 1e-15);
    EXPECT_NEAR(p[i], pi, 1e-12 * (1 + std::fabs(pi)));
  }
}

TEST(TrainingGradcheck, GlobalNormIsTheNormOfTheConcatenation) {
  Vec a = random_vec(40000, 22), b = random_vec(7, 23), y(1);
  run(hal::GlobalNormCall{{f64(a, {200, 200}), f64(b, {7})}, f64(y, {})});
  EXPECT_NEAR(y[0], std::sqrt(dot(a, a) + dot(b, b)), 1e-12 * y[0]);
}

// The gemm backward recipe of ops/training.h: dA = dC B^T, dB = A^T dC (two
// gemms with transposes, beta = 1 accumulating), dbias = sum of dC over rows.
TEST(TrainingGradcheck, GemmBackwardRecipe) {
  const std::int64_t m = 3, k = 4, n = 5;
  Vec a = random_vec(12, 24), b = random_vec(20, 25), bias = random_vec(5, 26), dc = random_vec(15, 27);
  auto forward = [&](Vec ai, Vec bi, Vec biasi) {
    Vec c(15);
    run(hal::GemmCall{f64(ai, {m, k}), f64(bi, {k, n}), f64(c, {m, n}), f64(biasi, {n})});
    return dot(dc, c);
  };
  Vec da = random_vec(12, 28), db(20), dbias(5);
  const Vec da0 = da;
  hal::Stream s(cpu());
  hal::ops::GemmOptions backward_a, backward_b;
  backward_a.trans_b = true, backward_a.beta = 1.0f;
  backward_b.trans_a = true;
  hal::ops::gemm(s, f64(dc, {m, n}), f64(b, {k, n}), f64(da, {m, k}), backward_a);
  hal::ops::gemm(s, f64(a, {m, k}), f64(dc, {m, n}), f64(db, {k, n}), backward_b);
  hal::ops::sum(s, f64(dc, {m, n}), f64(dbias, {n}), {.axis = 0});
  s.synchronize();
  Vec want_da = numeric_gradient([&](const Vec& v) { return forward(v, b, bias); }, a);
  for (std::size_t i = 0; i < want_da.size(); ++i) want_da[i] += da0[i];  // beta = 1 accumulated
  expect_gradient(da, want_da, "dA");
  expect_gradient(db, numeric_gradient([&](const Vec& v) { return forward(a, v, bias); }, b), "dB");
  expect_gradient(dbias, numeric_gradient([&](const Vec& v) { return forward(a, b, v); }, bias), "dbias");
}

}  // namespace
