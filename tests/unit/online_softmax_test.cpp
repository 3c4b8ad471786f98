// The general attention forwards' online-softmax step (kernel_math/
// online_softmax.h) on rows with -inf and NaN scores, run on the host: the
// CUDA kernel's block loop (ptx/kernels/attention_general.cu: 32 keys a
// block, fmaxf block max, a NaN vote) and the HIP kernel's key loop
// (hip/kernels/attention_general.hip) written out around the same helpers,
// against cpu_ref's attention (its fp32 row and blocked paths and the fp64
// oracle) on a call whose scores are exactly those values (d = 1, q = 1,
// k = the scores, scale 1). The step as it was before the fix is run too, to
// show each case catches the wrong answer it gave (CUDA: zeros for a row of
// NaN or of -inf scores; HIP: NaN for a row whose first score is -inf).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cpu_ref/attention_task.h"
#include "hal/stream.h"
#include "kernel_math/online_softmax.h"
#include "ops/ops.h"
#include "unit/test_helpers.h"

namespace {

using hal::DType;
using hal::test::cpu;
using hal::test::view_of;
namespace km = hal::kernel_math;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr int kDv = 3;

float value(std::int64_t j, int c) { return 0.25f * static_cast<float>((j * 7 + c * 3) % 11) - 1.0f; }

// ptx/kernels/attention_general.cu's loop for one row and one dv slice, the
// warp's reductions done in lane order. fixed = false: the step before the fix
// (the max's NaN dropped, zeros when l == 0).
std::vector<float> cuda_row(const std::vector<float>& s, bool fixed) {
  const std::int64_t valid = static_cast<std::int64_t>(s.size());
  float acc[kDv] = {0.0f, 0.0f, 0.0f};
  float m = -kInf, l = 0.0f;
  for (std::int64_t j0 = 0; j0 < valid; j0 += 32) {
    float lane_s[32];
    bool blk_nan = false;
    for (int lane = 0; lane < 32; ++lane) {
      lane_s[lane] = j0 + lane < valid ? s[static_cast<std::size_t>(j0 + lane)] : -kInf;
      blk_nan = blk_nan || std::isnan(lane_s[lane]);
    }
    float blk_max = lane_s[0];
    for (int lane = 1; lane < 32; ++lane) blk_max = fmaxf(blk_max, lane_s[lane]);
    const float m_new = fixed ? km::online_softmax_block_max(m, blk_max, blk_nan) : fmaxf(m, blk_max);
    if (m_new == -kInf) continue;
    const float corr = expf(m - m_new);
    float pj[32], psum = 0.0f;
    for (int lane = 0; lane < 32; ++lane) {
      pj[lane] = j0 + lane < valid ? expf(lane_s[lane] - m_new) : 0.0f;
      psum += pj[lane];
    }
    l = l * corr + psum;
    for (float& a : acc) a *= corr;
    const int n_keys = valid - j0 < 32 ? static_cast<int>(valid - j0) : 32;
    for (int jj = 0; jj < n_keys; ++jj)
      for (int c = 0; c < kDv; ++c) acc[c] = fmaf(pj[jj], value(j0 + jj, c), acc[c]);
    m = m_new;
  }
  std::vector<float> y(kDv);
  for (int c = 0; c < kDv; ++c)
    y[static_cast<std::size_t>(c)] = fixed ? km::online_softmax_output(acc[c], l, valid > 0)
                                           : (l == 0.0f ? 0.0f : acc[c] / l);
  return y;
}

// hip/kernels/attention_general.hip's loop for one row. fixed = false: the
// exponents shifted by m_new even while it is -inf.
std::vector<float> hip_row(const std::vector<float>& s, bool fixed) {
  const std::int64_t end = static_cast<std::int64_t>(s.size());
  float acc[kDv] = {0.0f, 0.0f, 0.0f};
  float m = -kInf, l = 0.0f;
  for (std::int64_t j = 0; j < end; ++j) {
    const float sj = s[static_cast<std::size_t>(j)];
    const float m_new = fmaxf(m, sj);
    const float shift = fixed ? km::online_softmax_shift(m_new) : m_new;
    const float corr = expf(m - shift);
    const float w = expf(sj - shift);
    l = l * corr + w;
    for (int c = 0; c < kDv; ++c) acc[c] = acc[c] * corr + w * value(j, c);
    m = m_new;
  }
  const float inv_l = end > 0 ? 1.0f / l : 0.0f;
  std::vector<float> y(kDv);
  for (int c = 0; c < kDv; ++c) y[static_cast<std::size_t>(c)] = end > 0 ? acc[c] * inv_l : 0.0f;
  return y;
}

// cpu_ref's attention for `rows` identical query rows whose scores are s
// (rows <= 8: the fp32 row path, more: the blocked path; f64: the oracle).
template <class E>
std::vector<double> cpu_ref_row(const std::vector<float>& s, DType dt, int rows) {
  const std::int64_t sk = static_cast<std::int64_t>(s.size());
  std::vector<E> q(static_cast<std::size_t>(rows), E(1)), k(s.begin(), s.end());
  std::vector<E> v(static_cast<std::size_t>(sk * kDv)), y(static_cast<std::size_t>(rows * kDv), E(-99));
  for (std::int64_t j = 0; j < sk; ++j)
    for (int c = 0; c < kDv; ++c) v[static_cast<std::size_t>(j * kDv + c)] = E(value(j, c));
  hal::Stream st(cpu());
  hal::ops::attention(st, view_of(q, dt, {1, rows, 1, 1}), view_of(k, dt, {1, sk, 1, 1}), view_of(v, dt, {1, sk, 1, kDv}),
                      view_of(y, dt, {1, rows, 1, kDv}), {.scale = 1.0f, .causal = false});
  for (int r = 1; r < rows; ++r)
    for (int c = 0; c < kDv; ++c) EXPECT_EQ(std::isnan(y[static_cast<std::size_t>(r * kDv + c)]), std::isnan(y[static_cast<std::size_t>(c)]));
  return std::vector<double>(y.begin(), y.begin() + kDv);
}

// NaN where the reference is NaN, else within a few fp32 ulps (the host
// loops sum in another order than cpu_ref's vector kernels).
bool same_answer(const std::vector<float>& got, const std::vector<double>& ref) {
  for (std::size_t c = 0; c < ref.size(); ++c) {
    if (std::isnan(ref[c]) != std::isnan(got[c])) return false;
    if (!std::isnan(ref[c]) && std::fabs(got[c] - ref[c]) > 1e-6 * (1.0 + std::fabs(ref[c]))) return false;
  }
  return true;
}

struct Row {
  std::string name;
  std::vector<float> s;
  bool nan_row;       // cpu_ref's answer is NaN
  bool cuda_was_ok;   // the CUDA step before the fix gave cpu_ref's answer
  bool hip_was_ok;    // the HIP step before the fix did
};

std::vector<Row> edge_rows() {
  const auto filled = [](std::size_t n, float x) { return std::vector<float>(n, x); };
  std::vector<Row> rows;
  // 80 keys: CUDA blocks [0, 32) [32, 64) [64, 80).
  std::vector<float> s = filled(80, 0.0f);
  for (std::size_t j = 0; j < 80; ++j) s[j] = 0.125f * static_cast<float>(j % 9) - 0.5f;
  rows.push_back({"finite", s, false, true, true});
  std::vector<float> lead = s;
  for (std::size_t j = 0; j < 40; ++j) lead[j] = -kInf;  // block 0 all -inf, block 1 partly
  rows.push_back({"minus_inf_first_block_then_finite", lead, false, true, false});
  std::vector<float> one = s;
  one[0] = -kInf;
  rows.push_back({"first_score_minus_inf", one, false, true, false});
  rows.push_back({"all_minus_inf", filled(80, -kInf), true, false, true});
  rows.push_back({"all_nan", filled(80, kNaN), true, false, true});
  std::vector<float> mixed = lead;
  mixed[5] = kNaN;  // a block of -inf and one NaN, then finite blocks
  rows.push_back({"nan_among_minus_inf_then_finite", mixed, true, false, true});
  std::vector<float> nan_inf = filled(80, -kInf);
  nan_inf[70] = kNaN;  // no finite score at all: only the NaN decides
  rows.push_back({"nan_among_minus_inf_only", nan_inf, true, false, true});
  std::vector<float> late = s;
  late[79] = kNaN;
  rows.push_back({"nan_after_finite", late, true, true, true});
  return rows;
}

TEST(OnlineSoftmax, KernelStepsMatchCpuRefOnNonFiniteRows) {
  for (const Row& row : edge_rows()) {
    SCOPED_TRACE(row.name);
    const auto ref32 = cpu_ref_row<float>(row.s, DType::f32, 1);
    const auto ref32_blocked = cpu_ref_row<float>(row.s, DType::f32, 9);
    const auto ref64 = cpu_ref_row<double>(row.s, DType::f64, 1);
    for (const auto* ref : {&ref32, &ref32_blocked, &ref64})
      for (double x : *ref) EXPECT_EQ(std::isnan(x), row.nan_row);
    for (const auto* ref : {&ref32, &ref32_blocked, &ref64}) {
      EXPECT_TRUE(same_answer(cuda_row(row.s, true), *ref));
      EXPECT_TRUE(same_answer(hip_row(row.s, true), *ref));
      EXPECT_EQ(same_answer(cuda_row(row.s, false), *ref), row.cuda_was_ok);
      EXPECT_EQ(same_answer(hip_row(row.s, false), *ref), row.hip_was_ok);
    }
  }
}

TEST(OnlineSoftmax, RowWithNoVisibleKeyGivesZeros) {
  // valid = 0 (causal, sq > sk): both loops never run; cpu_ref's finish_row
  // gives zeros for a state that saw no key.
  const std::vector<float> none;
  EXPECT_EQ(cuda_row(none, true), std::vector<float>(kDv, 0.0f));
  EXPECT_EQ(hip_row(none, true), std::vector<float>(kDv, 0.0f));
  std::vector<float> out(kDv, 5.0f);
  hal::cpu_ref::attention_detail::finish_row(hal::cpu_ref::attention_detail::QueryState<float>{}, out.data(), kDv);
  EXPECT_EQ(out, std::vector<float>(kDv, 0.0f));
}

TEST(OnlineSoftmax, HelpersOnTheirOwn) {
  EXPECT_TRUE(std::isnan(km::online_softmax_block_max(-kInf, kNaN, true)));
  EXPECT_TRUE(std::isnan(km::online_softmax_block_max(2.0f, -kInf, true)));
  EXPECT_EQ(km::online_softmax_block_max(-kInf, -kInf, false), -kInf);
  EXPECT_EQ(km::online_softmax_block_max(1.0f, 3.0f, false), 3.0f);
  EXPECT_EQ(km::online_softmax_shift(-kInf), 0.0f);
  EXPECT_EQ(km::online_softmax_shift(-2.5f), -2.5f);
  EXPECT_TRUE(std::isnan(km::online_softmax_shift(kNaN)));
  EXPECT_EQ(km::online_softmax_output(6.0f, 2.0f, true), 3.0f);
  EXPECT_EQ(km::online_softmax_output(kNaN, 0.0f, false), 0.0f);
  EXPECT_TRUE(std::isnan(km::online_softmax_output(0.0f, 0.0f, true)));
}

}  // namespace
