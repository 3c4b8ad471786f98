// Device tests: each op on hip:0 against the CPU backend on the same inputs
// (already rounded to the input dtype). Bounds are loose multiples of the
// output dtype's unit roundoff; bit-exact where the contract says so (cast,
// fill_random, copy). Skip without a HIP device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "hip_test_util.h"
#include "hal/error.h"
#include "ops/ops.h"

namespace hal::hip_test {

namespace {

struct Pair {
  Device& hip;
  Device& cpu;
  Stream hs;
  Stream cs;
  Pair() : hip(*hip_device()), cpu(device("cpu")), hs(hip), cs(cpu) {}
};

void expect_close(const std::vector<float>& got, const std::vector<float>& want, float rel, float abs_tol) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
      continue;
    }
    EXPECT_NEAR(got[i], want[i], abs_tol + rel * std::fabs(want[i])) << "at " << i;
  }
}

}  // namespace

TEST(HipDevice, GemmMfmaF16WithBiasReluAndTransposedBMatchesCpu) {
  HAL_REQUIRE_HIP();
  Pair p;
  const std::int64_t M = 70, N = 45, K = 37;
  const auto av = ramp(M * K, 1), bv = ramp(N * K, 2), biasv = ramp(N, 3);
  std::vector<float> out[2];
  Device* devs[2] = {&p.hip, &p.cpu};
  Stream* ss[2] = {&p.hs, &p.cs};
  for (int d = 0; d < 2; ++d) {
    auto a = upload(*devs[d], *ss[d], DType::f16, Shape{M, K}, av);
    auto b = upload(*devs[d], *ss[d], DType::f16, Shape{N, K}, bv);
    auto bias = upload(*devs[d], *ss[d], DType::f32, Shape{N}, biasv);
    auto c = upload(*devs[d], *ss[d], DType::f32, Shape{M, N}, std::vector<float>(M * N, 0.5f));
    ops::GemmOptions o;
    o.trans_b = true;
    o.beta = 2.0f;
    o.bias = bias.tensor;
    o.activation = Activation::relu;
    ops::gemm(*ss[d], a.tensor, b.tensor, c.tensor, o);
    out[d] = download(*ss[d], c.tensor);
  }
  expect_close(out[0], out[1], 1e-5f, 1e-4f * K);
}

TEST(HipDevice, GemmBf16BatchedAndF32GeneralMatchCpu) {
  HAL_REQUIRE_HIP();
  Pair p;
  for (DType t : {DType::bf16, DType::f32}) {
    const std::int64_t Bt = 3, M = 33, N = 65, K = 80;
    const auto av = ramp(Bt * M * K, 4), bv = ramp(K * N, 5);
    std::vector<float> out[2];
    Device* devs[2] = {&p.hip, &p.cpu};
    Stream* ss[2] = {&p.hs, &p.cs};
    for (int d = 0; d < 2; ++d) {
      auto a = upload(*devs[d], *ss[d], t, Shape{Bt, M, K}, av);
      auto b = upload(*devs[d], *ss[d], t, Shape{K, N}, bv);
      auto c = upload(*devs[d], *ss[d], t, Shape{Bt, M, N}, std::vector<float>(Bt * M * N, 0.0f));
      ops::gemm(*ss[d], a.tensor, b.tensor, c.tensor);
      out[d] = download(*ss[d], c.tensor);
    }
    expect_close(out[0], out[1], t == DType::f32 ? 1e-5f : 8e-3f, 1e-5f * K);
  }
}

TEST(HipDevice, CastToFp8IsBitExactWithTheHostEncoding) {
  HAL_REQUIRE_HIP();
  Pair p;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> xs = {0.0f, -0.0f, 1.0f, -1.5f, 448.0f, 449.0f, 500.0f, -1e6f, inf, -inf, nan, 240.0f,
                           0.001953125f, 0.0009765625f, 3.0e-4f, 57344.0f, 61440.0f, 1e-8f, -0.0137f};
  for (std::size_t i = 0; i < 200; ++i) xs.push_back(ramp(200, 7)[i] * 300.0f);
  auto x = upload(p.hip, p.hs, DType::f32, Shape{static_cast<std::int64_t>(xs.size())}, xs);
  for (DType t : {DType::f8e4m3, DType::f8e5m2, DType::f16, DType::bf16}) {
    Buffer yb = Buffer::for_tensor(p.hip, t, x.tensor.shape);
    Tensor y = yb.view(t, x.tensor.shape);
    ops::cast(p.hs, x.tensor, y);
    const auto got = download_bytes(p.hs, y);
    for (std::size_t i = 0; i < xs.size(); ++i) {
      std::vector<unsigned char> want(dtype_size(t));
      store_element_f32(want.data(), t, 0, xs[i]);
      EXPECT_EQ(std::memcmp(&got[i * dtype_size(t)], want.data(), dtype_size(t)), 0)
          << dtype_name(t) << " of " << xs[i];
    }
  }
}

TEST(HipDevice, FillRandomGivesTheCpuBits) {
  HAL_REQUIRE_HIP();
  Pair p;
  for (RandomDistribution dist : {RandomDistribution::uniform, RandomDistribution::normal}) {
    std::vector<unsigned char> out[2];
    Device* devs[2] = {&p.hip, &p.cpu};
    Stream* ss[2] = {&p.hs, &p.cs};
    for (int d = 0; d < 2; ++d) {
      Buffer b = Buffer::for_tensor(*devs[d], DType::f32, Shape{1031});
      FillRandomCall c{b.view(DType::f32, Shape{1031}), 0x1234567890ull, dist, -2.0f, 3.0f};
      ops::run(*ss[d], c);
      out[d] = download_bytes(*ss[d], c.y);
    }
    EXPECT_EQ(out[0], out[1]);
  }
}

TEST(HipDevice, RowOpsMatchCpu) {
  HAL_REQUIRE_HIP();
  Pair p;
  const Shape shape{3, 7, 300};
  const auto xv = ramp(3 * 7 * 300, 9);
  const auto wv = ramp(300, 10);
  for (int which = 0; which < 4; ++which) {
    SCOPED_TRACE(which);
    std::vector<float> out[2];
    Device* devs[2] = {&p.hip, &p.cpu};
    Stream* ss[2] = {&p.hs, &p.cs};
    for (int d = 0; d < 2; ++d) {
      auto x = upload(*devs[d], *ss[d], DType::bf16, shape, xv);
      auto w = upload(*devs[d], *ss[d], DType::bf16, Shape{300}, wv);
      auto y = upload(*devs[d], *ss[d], DType::f32, shape, std::vector<float>(xv.size(), 0.0f));
      if (which == 0) ops::softmax(*ss[d], x.tensor, y.tensor, {.scale = 2.0f, .causal = true});
      if (which == 1) ops::log_softmax(*ss[d], x.tensor, y.tensor);
      if (which == 2) ops::layernorm(*ss[d], x.tensor, w.tensor, w.tensor, y.tensor);
      if (which == 3) ops::rmsnorm(*ss[d], x.tensor, w.tensor, y.tensor);
      out[d] = download(*ss[d], y.tensor);
    }
    expect_close(out[0], out[1], 1e-4f, 1e-5f);
  }
}

TEST(HipDevice, ArgmaxOverAMiddleAxisMatchesCpu) {
  HAL_REQUIRE_HIP();
  Pair p;
  const auto xv = ramp(4 * 513 * 3, 11);
  std::vector<float> out[2];
  Device* devs[2] = {&p.hip, &p.cpu};
  Stream* ss[2] = {&p.hs, &p.cs};
  for (int d = 0; d < 2; ++d) {
    auto x = upload(*devs[d], *ss[d], DType::f32, Shape{4, 513, 3}, xv);
    Buffer yb = Buffer::for_tensor(*devs[d], DType::i64, Shape{4, 3});
    ops::argmax(*ss[d], x.tensor, yb.view(DType::i64, Shape{4, 3}), {.axis = 1});
    out[d] = download(*ss[d], yb.view(DType::i64, Shape{4, 3}));
  }
  EXPECT_EQ(out[0], out[1]);
}

TEST(HipDevice, CausalGroupedQueryAttentionMatchesCpu) {
  HAL_REQUIRE_HIP();
  Pair p;
  const std::int64_t B = 2, SQ = 5, SK = 9, HQ = 4, HKV = 2, D = 72;
  const auto qv = ramp(B * SQ * HQ * D, 12), kv = ramp(B * SK * HKV * D, 13), vv = ramp(B * SK * HKV * D, 14);
  std::vector<float> out[2];
  Device* devs[2] = {&p.hip, &p.cpu};
  Stream* ss[2] = {&p.hs, &p.cs};
  for (int d = 0; d < 2; ++d) {
    auto q = upload(*devs[d], *ss[d], DType::bf16, Shape{B, SQ, HQ, D}, qv);
    auto k = upload(*devs[d], *ss[d], DType::bf16, Shape{B, SK, HKV, D}, kv);
    auto v = upload(*devs[d], *ss[d], DType::bf16, Shape{B, SK, HKV, D}, vv);
    auto y = upload(*devs[d], *ss[d], DType::f32, Shape{B, SQ, HQ, D}, std::vector<float>(B * SQ * HQ * D, 0.0f));
    ops::attention(*ss[d], q.tensor, k.tensor, v.tensor, y.tensor, {.causal = true});
    out[d] = download(*ss[d], y.tensor);
  }
  expect_close(out[0], out[1], 1e-4f, 1e-5f);
}

TEST(HipDevice, EmbeddingRejectsAnOutOfRangeIdBeforeWriting) {
  HAL_REQUIRE_HIP();
  Pair p;
  auto table = upload(p.hip, p.hs, DType::f32, Shape{10, 4}, ramp(40, 15));
  Buffer ids_b = Buffer::for_tensor(p.hip, DType::i32, Shape{3});
  const std::int32_t ids[3] = {1, 10, 2};
  Tensor ids_t = ids_b.view(DType::i32, Shape{3});
  p.hs.upload(ids_t, ids);
  auto y = upload(p.hip, p.hs, DType::f32, Shape{3, 4}, std::vector<float>(12, 7.0f));
  try {
    ops::embedding(p.hs, table.tensor, ids_t, y.tensor);
    ADD_FAILURE() << "no error for id 10 with vocab 10";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
  }
  for (float v : download(p.hs, y.tensor)) EXPECT_EQ(v, 7.0f);
}

}  // namespace hal::hip_test
