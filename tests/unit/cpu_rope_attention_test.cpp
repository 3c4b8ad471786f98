// CPU reference rope and attention through hal::ops, against the formulas
// evaluated in double in the test (a naive attention that builds the whole
// score matrix).
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "cpu_ref/attention_task.h"
#include "hal/registry.h"
#include "hal/stream.h"
#include "ops/ops.h"
#include "unit/test_helpers.h"

namespace {

using hal::test::cpu;
using hal::test::view_of;

using hal::DType;
using hal::RopeStyle;
using hal::Shape;
using hal::Tensor;

std::vector<float> wave(std::size_t n, float freq, float phase) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::sin(freq * static_cast<float>(i) + phase) * 1.5f;
  return v;
}

// ---- rope ----------------------------------------------------------------

// y for x [b, s, h, hd] row-major, positions per (b, s), in double.
std::vector<double> rope_ref(const std::vector<float>& x, const std::vector<int>& pos_bs, int b, int s, int h, int hd,
                             int rotary_dim, RopeStyle style, double theta) {
  std::vector<double> y(x.begin(), x.end());
  const int half = rotary_dim / 2;
  for (int bi = 0; bi < b; ++bi)
    for (int si = 0; si < s; ++si)
      for (int hi = 0; hi < h; ++hi) {
        const std::size_t row = static_cast<std::size_t>(((bi * s + si) * h + hi) * hd);
        for (int i = 0; i < half; ++i) {
          const double angle = pos_bs[static_cast<std::size_t>(bi * s + si)] * std::pow(theta, -2.0 * i / rotary_dim);
          const int a = style == RopeStyle::neox ? i : 2 * i;
          const int c = style == RopeStyle::neox ? i + half : 2 * i + 1;
          const double xa = x[row + static_cast<std::size_t>(a)], xc = x[row + static_cast<std::size_t>(c)];
          y[row + static_cast<std::size_t>(a)] = xa * std::cos(angle) - xc * std::sin(angle);
          y[row + static_cast<std::size_t>(c)] = xc * std::cos(angle) + xa * std::sin(angle);
        }
      }
  return y;
}

TEST(CpuRopeAttention, RopeBothStylesMatchFormula) {
  const int b = 1, s = 3, h = 2, hd = 8;
  std::vector<float> x = wave(static_cast<std::size_t>(b * s * h * hd), 0.7f, 0.1f);
  std::vector<std::int32_t> pos = {0, 1, 5};
  hal::Stream st(cpu());
  for (RopeStyle style : {RopeStyle::neox, RopeStyle::gptj}) {
    for (int rotary_dim : {8, 4}) {
      std::vector<float> y(x.size(), -99.0f);
      hal::ops::rope(st, view_of(x, DType::f32, {b, s, h, hd}), view_of(pos, DType::i32, {s}),
                     view_of(y, DType::f32, {b, s, h, hd}), {.theta = 100.0f, .style = style, .rotary_dim = rotary_dim});
      const auto ref = rope_ref(x, {0, 1, 5}, b, s, h, hd, rotary_dim, style, 100.0);
      for (std::size_t i = 0; i < y.size(); ++i) {
        SCOPED_TRACE(testing::Message() << hal::to_string(style) << " rotary_dim " << rotary_dim << " i " << i);
        if (static_cast<int>(i % hd) >= rotary_dim) {
          EXPECT_EQ(y[i], x[i]);  // the tail is copied unchanged
        } else {
          EXPECT_NEAR(y[i], ref[i], 2e-6);
        }
      }
      // Position 0 is the identity.
      for (int c = 0; c < hd; ++c) EXPECT_EQ(y[static_cast<std::size_t>(c)], x[static_cast<std::size_t>(c)]);
    }
  }
  // The styles pair different channels, so they must differ at position 5.
  std::vector<float> yn(x.size()), yg(x.size());
  hal::ops::rope(st, view_of(x, DType::f32, {b, s, h, hd}), view_of(pos, DType::i32, {s}),
                 view_of(yn, DType::f32, {b, s, h, hd}), {.style = RopeStyle::neox});
  hal::ops::rope(st, view_of(x, DType::f32, {b, s, h, hd}), view_of(pos, DType::i32, {s}),
                 view_of(yg, DType::f32, {b, s, h, hd}), {.style = RopeStyle::gptj});
  EXPECT_NE(yn, yg);
}

TEST(CpuRopeAttention, RopeWithGivenFrequencies) {
  // inv_freq replaces theta^(-2i/rd) pair by pair (Llama 3's scaled
  // frequencies), read through a strided view; in f32 and in f64.
  const int b = 1, s = 3, h = 2, hd = 8;
  std::vector<float> x = wave(static_cast<std::size_t>(b * s * h * hd), 0.7f, 0.1f);
  std::vector<std::int32_t> pos = {0, 3, 700};
  std::vector<float> freq_storage = {0.9f, -1.0f, 0.05f, -1.0f, 0.3f, -1.0f, 1e-3f, -1.0f};  // stride 2
  Tensor freq = view_of(freq_storage, DType::f32, {8});
  freq.shape = Shape{4};
  freq.strides = hal::Strides{2};
  hal::Stream st(cpu());
  std::vector<float> y(x.size(), -99.0f);
  hal::ops::rope(st, view_of(x, DType::f32, {b, s, h, hd}), view_of(pos, DType::i32, {s}), view_of(y, DType::f32, {b, s, h, hd}),
                 {.style = RopeStyle::neox, .inv_freq = freq});
  for (int si = 0; si < s; ++si)
    for (int hi = 0; hi < h; ++hi)
      for (int i = 0; i < 4; ++i) {
        const std::size_t row = static_cast<std::size_t>((si * h + hi) * hd);
        const double angle = pos[static_cast<std::size_t>(si)] * static_cast<double>(freq_storage[static_cast<std::size_t>(2 * i)]);
        const double xa = x[row + static_cast<std::size_t>(i)], xc = x[row + static_cast<std::size_t>(i + 4)];
        EXPECT_NEAR(y[row + static_cast<std::size_t>(i)], xa * std::cos(angle) - xc * std::sin(angle), 1e-4);
        EXPECT_NEAR(y[row + static_cast<std::size_t>(i + 4)], xc * std::cos(angle) + xa * std::sin(angle), 1e-4);
      }
  // f64 takes f64 frequencies; f32 frequencies with f64 x are fine too, f64 ones with f32 x are not.
  std::vector<double> x64(x.begin(), x.end()), y64(x.size()), f64 = {0.9, 0.05, 0.3, 1e-3};
  hal::ops::rope(st, view_of(x64, DType::f64, {b, s, h, hd}), view_of(pos, DType::i32, {s}),
                 view_of(y64, DType::f64, {b, s, h, hd}), {.inv_freq = view_of(f64, DType::f64, {4})});
  EXPECT_NEAR(y64[static_cast<std::size_t>(2 * h * hd)], x64[static_cast<std::size_t>(2 * h * hd)] * std::cos(630.0) -
                                                              x64[static_cast<std::size_t>(2 * h * hd + 4)] * std::sin(630.0), 1e-12);
  EXPECT_THROW(hal::ops::rope(st, view_of(x, DType::f32, {b, s, h, hd}), view_of(pos, DType::i32, {s}),
                              view_of(y, DType::f32, {b, s, h, hd}), {.inv_freq = view_of(f64, DType::f64, {4})}),
               hal::Error);
  EXPECT_THROW(hal::ops::rope(st, view_of(x, DType::f32, {b, s, h, hd}), view_of(pos, DType::i32, {s}),
                              view_of(y, DType::f32, {b, s, h, hd}), {.rotary_dim = 4, .inv_freq = freq}),
               hal::Error);  // [rotary_dim / 2] = [2] expected, [4] given
}

TEST(CpuRopeAttention, RopePerBatchPositionsBf16AndStrided) {
  const int b = 2, s = 3, h = 3, hd = 6;
  std::vector<float> x = wave(static_cast<std::size_t>(b * s * h * hd), 0.31f, 0.5f);
  std::vector<std::int32_t> pos = {3, 4, 5, 10, 0, 7};
  const std::vector<int> pos_int(pos.begin(), pos.end());
  const auto ref = rope_ref(x, pos_int, b, s, h, hd, hd, RopeStyle::gptj, 10000.0);
  hal::Stream st(cpu());
  std::vector<float> y(x.size());
  hal::ops::rope(st, view_of(x, DType::f32, {b, s, h, hd}), view_of(pos, DType::i32, {b, s}),
                 view_of(y, DType::f32, {b, s, h, hd}), {.style = RopeStyle::gptj});
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], ref[i], 4e-6) << i;

  // bf16 in and out: within a bf16 rounding of the exact result on bf16 inputs.
  std::vector<std::uint16_t> xb, yb(x.size());
  std::vector<float> xr;
  for (float v : x) xb.push_back(hal::f32_to_bf16(v)), xr.push_back(hal::bf16_to_f32(xb.back()));
  const auto ref_b = rope_ref(xr, pos_int, b, s, h, hd, hd, RopeStyle::gptj, 10000.0);
  hal::ops::rope(st, view_of(xb, DType::bf16, {b, s, h, hd}), view_of(pos, DType::i32, {b, s}),
                 view_of(yb, DType::bf16, {b, s, h, hd}), {.style = RopeStyle::gptj});
  for (std::size_t i = 0; i < yb.size(); ++i)
    EXPECT_NEAR(hal::bf16_to_f32(yb[i]), ref_b[i], std::fabs(ref_b[i]) * 0x1p-8 + 1e-6) << i;

  // x stored as [b, h, s, hd] and read through a permuted view equals the contiguous result.
  std::vector<float> stored(x.size());
  for (int bi = 0; bi < b; ++bi)
    for (int si = 0; si < s; ++si)
      for (int hi = 0; hi < h; ++hi)
        for (int c = 0; c < hd; ++c)
          stored[static_cast<std::size_t>(((bi * h + hi) * s + si) * hd + c)] =
              x[static_cast<std::size_t>(((bi * s + si) * h + hi) * hd + c)];
  std::vector<float> y_view(x.size());
  hal::ops::rope(st, view_of(stored, DType::f32, {b, h, s, hd}).permuted({0, 2, 1, 3}),
                 view_of(pos, DType::i32, {b, s}), view_of(y_view, DType::f32, {b, s, h, hd}),
                 {.style = RopeStyle::gptj});
  EXPECT_EQ(y_view, y);
}

// ---- attention -----------------------------------------------------------

struct AttnShape {
  int b, sq, sk, hq, hkv, d, dv;
};

// Naive attention in double over row-major Q, K, V.
std::vector<double> attention_ref(const AttnShape& a, const std::vector<float>& q, const std::vector<float>& k,
                                  const std::vector<float>& v, bool causal, double scale) {
  std::vector<double> y(static_cast<std::size_t>(a.b * a.sq * a.hq * a.dv), 0.0);
  const int group = a.hq / a.hkv;
  for (int bi = 0; bi < a.b; ++bi)
    for (int h = 0; h < a.hq; ++h)
      for (int i = 0; i < a.sq; ++i) {
        const int g = h / group;
        std::vector<double> score(static_cast<std::size_t>(a.sk));
        double m = -INFINITY;
        int visible = 0;
        for (int j = 0; j < a.sk; ++j) {
          if (causal && j > i + (a.sk - a.sq)) continue;
          double dot = 0;
          for (int c = 0; c < a.d; ++c)
            dot += double(q[static_cast<std::size_t>(((bi * a.sq + i) * a.hq + h) * a.d + c)]) *
                   k[static_cast<std::size_t>(((bi * a.sk + j) * a.hkv + g) * a.d + c)];
          score[static_cast<std::size_t>(j)] = scale * dot;
          m = std::max(m, scale * dot);
          ++visible;
        }
        if (visible == 0) continue;  // fully masked: zeros
        double sum = 0;
        for (int j = 0; j < visible; ++j) sum += std::exp(score[static_cast<std::size_t>(j)] - m);
        for (int c = 0; c < a.dv; ++c) {
          double acc = 0;
          for (int j = 0; j < visible; ++j)
            acc += std::exp(score[static_cast<std::size_t>(j)] - m) *
                   v[static_cast<std::size_t>(((bi * a.sk + j) * a.hkv + g) * a.dv + c)];
          y[static_cast<std::size_t>(((bi * a.sq + i) * a.hq + h) * a.dv + c)] = acc / sum;
        }
      }
  return y;
}

struct AttnData {
  std::vector<float> q, k, v;
  explicit AttnData(const AttnShape& a)
      : q(wave(static_cast<std::size_t>(a.b * a.sq * a.hq * a.d), 0.37f, 0.2f)),
        k(wave(static_cast<std::size_t>(a.b * a.sk * a.hkv * a.d), 0.53f, 1.1f)),
        v(wave(static_cast<std::size_t>(a.b * a.sk * a.hkv * a.dv), 0.29f, 2.3f)) {}
};

// q, k, v, y all of dtype `dt` (f32 or f64, matching E).
template <class E>
void run_attention(const AttnShape& a, std::vector<E>& q, std::vector<E>& k, std::vector<E>& v, std::vector<E>& y,
                   DType dt, bool causal, float scale = 0.0f) {
  hal::Stream st(cpu());
  hal::ops::attention(st, view_of(q, dt, {a.b, a.sq, a.hq, a.d}), view_of(k, dt, {a.b, a.sk, a.hkv, a.d}),
                      view_of(v, dt, {a.b, a.sk, a.hkv, a.dv}), view_of(y, dt, {a.b, a.sq, a.hq, a.dv}),
                      {.scale = scale, .causal = causal});
}

// Q, K, V rounded to bf16, causal attention in bf16 against the naive result
// on the rounded inputs.
void expect_bf16_attention_matches_naive(const AttnShape& a, const AttnData& in) {
  std::vector<std::uint16_t> qb, kb, vb, yb(static_cast<std::size_t>(a.b * a.sq * a.hq * a.dv));
  std::vector<float> qr, kr, vr;
  auto to_bf16 = [](const std::vector<float>& src, std::vector<std::uint16_t>& bits, std::vector<float>& rounded) {
    for (float f : src) bits.push_back(hal::f32_to_bf16(f)), rounded.push_back(hal::bf16_to_f32(bits.back()));
  };
  to_bf16(in.q, qb, qr);
  to_bf16(in.k, kb, kr);
  to_bf16(in.v, vb, vr);
  hal::Stream st(cpu());
  hal::ops::attention(st, view_of(qb, DType::bf16, {a.b, a.sq, a.hq, a.d}), view_of(kb, DType::bf16, {a.b, a.sk, a.hkv, a.d}),
                      view_of(vb, DType::bf16, {a.b, a.sk, a.hkv, a.dv}),
                      view_of(yb, DType::bf16, {a.b, a.sq, a.hq, a.dv}), {.causal = true});
  const auto ref = attention_ref(a, qr, kr, vr, true, 1 / std::sqrt(static_cast<double>(a.d)));
  for (std::size_t i = 0; i < yb.size(); ++i)
    EXPECT_NEAR(hal::bf16_to_f32(yb[i]), ref[i], std::fabs(ref[i]) * 0x1p-8 + 1e-5) << i;
}

TEST(CpuRopeAttention, AttentionOddShapesMatchNaive) {
  // The last two: a decode step and a few queries, grouped heads (8 on 2, 6 on
  // 3 kv heads) over several key blocks.
  for (AttnShape a : {AttnShape{2, 5, 7, 4, 2, 8, 6}, AttnShape{1, 7, 5, 4, 2, 8, 6}, AttnShape{1, 1, 300, 8, 2, 8, 6},
                      AttnShape{2, 3, 130, 6, 3, 8, 6}}) {
    AttnData in(a);
    for (bool causal : {false, true}) {
      SCOPED_TRACE(testing::Message() << "sq " << a.sq << " sk " << a.sk << " causal " << causal);
      const auto ref = attention_ref(a, in.q, in.k, in.v, causal, 1 / std::sqrt(8.0));
      std::vector<float> y(ref.size(), -99.0f);
      run_attention(a, in.q, in.k, in.v, y, DType::f32, causal);
      for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], ref[i], 2e-6) << i;
      // The fp64 oracle path agrees to near double precision.
      // (The scale is a float attribute, so the oracle uses its float value.)
      std::vector<double> qd(in.q.begin(), in.q.end()), kd(in.k.begin(), in.k.end()), vd(in.v.begin(), in.v.end());
      std::vector<double> yd(ref.size(), -99.0);
      const float scale = static_cast<float>(1 / std::sqrt(8.0));
      run_attention(a, qd, kd, vd, yd, DType::f64, causal, scale);
      const auto ref_f = attention_ref(a, in.q, in.k, in.v, causal, scale);
      for (std::size_t i = 0; i < yd.size(); ++i) EXPECT_NEAR(yd[i], ref_f[i], 1e-13) << i;
    }
  }
  // sq = 7 > sk = 5 causal: queries 0 and 1 see no key and give exact zeros.
  const AttnShape a{1, 7, 5, 4, 2, 8, 6};
  AttnData in(a);
  std::vector<float> y(static_cast<std::size_t>(7 * 4 * 6), -99.0f);
  run_attention(a, in.q, in.k, in.v, y, DType::f32, true);
  for (std::size_t i = 0; i < 2 * 4 * 6; ++i) EXPECT_EQ(y[i], 0.0f) << i;
  for (std::size_t i = 2 * 4 * 6; i < y.size(); ++i) EXPECT_NE(y[i], 0.0f) << i;
  // Query 2 sees key 0 only: its output is exactly V's row 0 of its kv head.
  for (int h = 0; h < 4; ++h)
    for (int c = 0; c < 6; ++c)
      EXPECT_EQ(y[static_cast<std::size_t>((2 * 4 + h) * 6 + c)], in.v[static_cast<std::size_t>((h / 2) * 6 + c)]);
}

TEST(CpuRopeAttention, AttentionLongSequenceSpansKeyBlocksAndIsDeterministic) {
  // sk = 400 crosses several key blocks of 64; the 4 query heads share one kv
  // head, so a task (cpu_ref/attention_blocked.cpp) holds 64 queries x 4 heads
  // and sq = 300 takes five, over many micro-kernel row panels; causal, each
  // task ends on a diagonal key block.
  const AttnShape a{1, 300, 400, 4, 1, 16, 8};
  AttnData in(a);
  for (bool causal : {false, true}) {
    const auto ref = attention_ref(a, in.q, in.k, in.v, causal, 0.25);
    std::vector<float> one(ref.size()), many(ref.size());
    tbb::task_arena single(1);
    single.execute([&] { run_attention(a, in.q, in.k, in.v, one, DType::f32, causal); });
    run_attention(a, in.q, in.k, in.v, many, DType::f32, causal);
    EXPECT_EQ(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)), 0);
    for (std::size_t i = 0; i < one.size(); ++i) EXPECT_NEAR(one[i], ref[i], 3e-6) << i;
  }
}

TEST(CpuRopeAttention, AttentionStridedAndBf16) {
  const AttnShape a{1, 5, 7, 4, 2, 8, 6};
  AttnData in(a);
  std::vector<float> y(static_cast<std::size_t>(5 * 4 * 6));
  run_attention(a, in.q, in.k, in.v, y, DType::f32, true);

  // Q and K stored head-major ([b, h, s, d]) and read through permuted views;
  // y written through a permuted view too.
  auto head_major = [](const std::vector<float>& t, int s, int h, int d) {
    std::vector<float> out(t.size());
    for (int si = 0; si < s; ++si)
      for (int hi = 0; hi < h; ++hi)
        for (int c = 0; c < d; ++c)
          out[static_cast<std::size_t>((hi * s + si) * d + c)] = t[static_cast<std::size_t>((si * h + hi) * d + c)];
    return out;
  };
  std::vector<float> qh = head_major(in.q, 5, 4, 8), kh = head_major(in.k, 7, 2, 8), yh(y.size());
  hal::Stream st(cpu());
  hal::ops::attention(st, view_of(qh, DType::f32, {1, 4, 5, 8}).permuted({0, 2, 1, 3}),
                      view_of(kh, DType::f32, {1, 2, 7, 8}).permuted({0, 2, 1, 3}),
                      view_of(in.v, DType::f32, {1, 7, 2, 6}),
                      view_of(yh, DType::f32, {1, 4, 5, 6}).permuted({0, 2, 1, 3}), {.causal = true});
  EXPECT_EQ(head_major(y, 5, 4, 6), yh);

  expect_bf16_attention_matches_naive(a, in);
}

TEST(CpuRopeAttention, AttentionNaNInKeyReachesOnlyQueriesThatSeeIt) {
  // NaN in key 4: with causal (sq = sk = 7) queries 0..3 never see it.
  const AttnShape a{1, 7, 7, 2, 1, 4, 3};
  AttnData in(a);
  in.k[static_cast<std::size_t>(4 * 4 + 1)] = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> y(static_cast<std::size_t>(7 * 2 * 3));
  run_attention(a, in.q, in.k, in.v, y, DType::f32, true);
  for (std::size_t i = 0; i < y.size(); ++i) {
    const std::size_t query = i / 6;
    EXPECT_EQ(std::isnan(y[i]), query >= 4) << i;
  }
}

TEST(CpuRopeAttention, AttentionInfInValueReachesOnlyQueriesThatSeeIt) {
  // +inf in every column of value row 70 (causal, sq = sk = 100, two query
  // heads on one kv head: a task's rows are (query, head) pairs). The rows of
  // queries 69..71 share a micro-kernel panel (6 rows on AVX2; 12 on AVX-512
  // and 4 on the portable kernel give other mixes): the keys they all see go
  // through the micro-kernel, the rest row by row, so key 70 must reach
  // queries 70.. only, even though its row is in the block the panel uses.
  const AttnShape a{1, 100, 100, 2, 1, 8, 20};
  AttnData in(a);
  for (int c = 0; c < a.dv; ++c) in.v[static_cast<std::size_t>(70 * a.dv + c)] = std::numeric_limits<float>::infinity();
  std::vector<float> y(static_cast<std::size_t>(a.sq * a.hq * a.dv));
  run_attention(a, in.q, in.k, in.v, y, DType::f32, true);
  const auto ref = attention_ref(a, in.q, in.k, in.v, true, 1 / std::sqrt(8.0));
  for (std::size_t i = 0; i < y.size(); ++i) {
    const std::size_t query = i / static_cast<std::size_t>(a.hq * a.dv);
    if (query < 70) {
      EXPECT_NEAR(y[i], ref[i], 3e-6) << i;
    } else {
      EXPECT_EQ(y[i], std::numeric_limits<float>::infinity()) << i;  // p > 0 times +inf, over a finite sum
    }
  }
}

// ---- attention's row path (cpu_ref/attention_rows.cpp: few rows per kv head)

// The shapes below must take the row path, or these tests check nothing new.
void expect_row_path(const AttnShape& a) {
  ASSERT_LE(a.sq * (a.hq / a.hkv), hal::cpu_ref::attention_detail::kRowPathRows);
}

TEST(CpuRopeAttention, AttentionRowPathMatchesNaiveWhateverTheThreadCount) {
  // A decode step without grouped heads over two batch entries and three key
  // chunks (of 128 keys: merged per row); two queries on four heads per kv
  // head; one query on eight heads per kv head over 9000 keys (47 chunks of
  // 192); four queries on two per kv head, causal with fewer keys than
  // queries (query 0 sees none). The chunks depend on the shape only, so
  // 1, 2, 3 or 5 threads must give the same bits.
  for (AttnShape a : {AttnShape{2, 1, 300, 6, 6, 16, 12}, AttnShape{1, 2, 150, 8, 2, 8, 6},
                      AttnShape{1, 1, 9000, 8, 1, 8, 6}, AttnShape{1, 4, 3, 4, 2, 8, 6}}) {
    expect_row_path(a);
    AttnData in(a);
    for (bool causal : {false, true}) {
      SCOPED_TRACE(testing::Message() << "b " << a.b << " sq " << a.sq << " sk " << a.sk << " hq " << a.hq
                                      << " hkv " << a.hkv << " causal " << causal);
      const double scale = 1 / std::sqrt(static_cast<double>(a.d));
      const auto ref = attention_ref(a, in.q, in.k, in.v, causal, scale);
      std::vector<float> first;
      for (int threads : {1, 2, 3, 5}) {
        std::vector<float> y(ref.size(), -99.0f);
        tbb::task_arena arena(threads);
        arena.execute([&] { run_attention(a, in.q, in.k, in.v, y, DType::f32, causal); });
        if (first.empty()) {
          first = y;
          for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], ref[i], 3e-6) << i;
        } else {
          EXPECT_EQ(std::memcmp(first.data(), y.data(), y.size() * sizeof(float)), 0) << threads << " threads";
        }
      }
    }
  }
  // sq = 4 > sk = 3, causal: query 0 sees no key and gives exact zeros;
  // query 1 sees key 0 only and gives V's row 0 of its kv head exactly.
  const AttnShape a{1, 4, 3, 4, 2, 8, 6};
  AttnData in(a);
  std::vector<float> y(static_cast<std::size_t>(a.sq * a.hq * a.dv), -99.0f);
  run_attention(a, in.q, in.k, in.v, y, DType::f32, true);
  for (std::size_t i = 0; i < static_cast<std::size_t>(a.hq * a.dv); ++i) EXPECT_EQ(y[i], 0.0f) << i;
  for (int h = 0; h < a.hq; ++h)
    for (int c = 0; c < a.dv; ++c)
      EXPECT_EQ(y[static_cast<std::size_t>((a.hq + h) * a.dv + c)],
                in.v[static_cast<std::size_t>((h / 2) * a.dv + c)]);
}

TEST(CpuRopeAttention, AttentionRowPathStridedAndBf16) {
  const AttnShape a{1, 2, 70, 8, 2, 8, 6};
  expect_row_path(a);
  AttnData in(a);
  std::vector<float> y(static_cast<std::size_t>(a.sq * a.hq * a.dv));
  run_attention(a, in.q, in.k, in.v, y, DType::f32, true);

  // K stored head-major ([b, h, s, d]); V stored [b, s, dv, h], so its rows
  // are strided (the row path gathers them); the same bits.
  std::vector<float> kh(in.k.size()), vt(in.v.size());
  for (int s = 0; s < a.sk; ++s)
    for (int h = 0; h < a.hkv; ++h) {
      for (int c = 0; c < a.d; ++c)
        kh[static_cast<std::size_t>((h * a.sk + s) * a.d + c)] = in.k[static_cast<std::size_t>((s * a.hkv + h) * a.d + c)];
      for (int c = 0; c < a.dv; ++c)
        vt[static_cast<std::size_t>((s * a.dv + c) * a.hkv + h)] = in.v[static_cast<std::size_t>((s * a.hkv + h) * a.dv + c)];
    }
  std::vector<float> ys(y.size());
  hal::Stream st(cpu());
  hal::ops::attention(st, view_of(in.q, DType::f32, {1, a.sq, a.hq, a.d}),
                      view_of(kh, DType::f32, {1, a.hkv, a.sk, a.d}).permuted({0, 2, 1, 3}),
                      view_of(vt, DType::f32, {1, a.sk, a.dv, a.hkv}).permuted({0, 1, 3, 2}),
                      view_of(ys, DType::f32, {1, a.sq, a.hq, a.dv}), {.causal = true});
  EXPECT_EQ(ys, y);

  expect_bf16_attention_matches_naive(a, in);
}

TEST(CpuRopeAttention, AttentionRowPathSpecialValuesReachOnlyQueriesThatSeeThem) {
  // Two queries, causal: query 0 sees keys [0, sk - 1), query 1 all of them.
  // A NaN in the last key, or +inf in every column of the last value row,
  // must reach query 1's rows only, through the merge of the last of three
  // key chunks; query 0's stay as without it.
  const AttnShape a{1, 2, 300, 8, 2, 8, 6};
  expect_row_path(a);
  const std::size_t query_values = static_cast<std::size_t>(a.hq * a.dv);
  AttnData clean(a);
  const auto ref = attention_ref(a, clean.q, clean.k, clean.v, true, 1 / std::sqrt(8.0));
  for (bool nan_key : {true, false}) {
    SCOPED_TRACE(nan_key ? "NaN in K" : "+inf in V");
    AttnData in(a);
    if (nan_key) {
      in.k[static_cast<std::size_t>(((a.sk - 1) * a.hkv + 1) * a.d + 3)] = std::numeric_limits<float>::quiet_NaN();
    } else {
      for (int h = 0; h < a.hkv; ++h)
        for (int c = 0; c < a.dv; ++c)
          in.v[static_cast<std::size_t>(((a.sk - 1) * a.hkv + h) * a.dv + c)] = std::numeric_limits<float>::infinity();
    }
    std::vector<float> y(ref.size());
    run_attention(a, in.q, in.k, in.v, y, DType::f32, true);
    for (std::size_t i = 0; i < y.size(); ++i) {
      const bool query1 = i >= query_values;
      const bool reads_poisoned_head = !nan_key || (i % query_values) / static_cast<std::size_t>(a.dv) / 4 == 1;
      if (!query1 || !reads_poisoned_head) {
        EXPECT_NEAR(y[i], ref[i], 3e-6) << i;
      } else if (nan_key) {
        EXPECT_TRUE(std::isnan(y[i])) << i;
      } else {
        EXPECT_EQ(y[i], std::numeric_limits<float>::infinity()) << i;
      }
    }
  }
}

TEST(CpuRopeAttention, AttentionRowPathChunkOfMinusInfScoresAddsNothing) {
  // Q all ones and -inf in one column of keys 0..127 (the first key chunk):
  // those scores are -inf, so the chunk holds no finite score and must add
  // nothing to the merge; the result is attention over keys 128.. alone.
  const AttnShape a{1, 1, 300, 4, 4, 8, 6};
  expect_row_path(a);
  AttnData in(a);
  std::fill(in.q.begin(), in.q.end(), 1.0f);
  for (int j = 0; j < 128; ++j)
    for (int h = 0; h < a.hkv; ++h) in.k[static_cast<std::size_t>((j * a.hkv + h) * a.d)] = -std::numeric_limits<float>::infinity();
  const auto ref = attention_ref(a, in.q, in.k, in.v, false, 1 / std::sqrt(8.0));
  std::vector<float> y(ref.size());
  run_attention(a, in.q, in.k, in.v, y, DType::f32, false);
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], ref[i], 3e-6) << i;
}

}  // namespace
