// Device tests of the MFMA attention kernel (hip/kernels/attention_flash.hip)
// against the CPU backend on the same 16-bit inputs: both head dims, both
// dtypes, causal with sq < sk and sq > sk (leading rows fully masked: zeros),
// grouped-query heads, query and key counts that leave partial tiles. The
// shapes are ones the launcher sends to the flash kernel
// (attention_launch_test.cpp checks that choice on the host). Skip without a
// HIP device; HAL_HIP_DISABLE=flash runs the same cases on the general kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "hip_test_util.h"
#include "ops/ops.h"

namespace hal::hip_test {

namespace {

struct FlashCase {
  DType t;
  std::int64_t b, sq, sk, hq, hkv, d;
  bool causal;
};

void run_case(const FlashCase& fc) {
  SCOPED_TRACE(testing::Message() << dtype_name(fc.t) << " d" << fc.d << " sq " << fc.sq << " sk " << fc.sk
                                  << (fc.causal ? " causal" : ""));
  Device& hip = *hip_device();
  Device& cpu = device("cpu");
  Stream hs(hip), cs(cpu);
  const Shape qs{fc.b, fc.sq, fc.hq, fc.d}, ks{fc.b, fc.sk, fc.hkv, fc.d};
  const auto qv = ramp(static_cast<std::size_t>(checked_numel(qs)), 21);
  const auto kv = ramp(static_cast<std::size_t>(checked_numel(ks)), 22);
  const auto vv = ramp(static_cast<std::size_t>(checked_numel(ks)), 23);
  std::vector<float> out[2];
  Device* devs[2] = {&hip, &cpu};
  Stream* ss[2] = {&hs, &cs};
  for (int i = 0; i < 2; ++i) {
    auto q = upload(*devs[i], *ss[i], fc.t, qs, qv);
    auto k = upload(*devs[i], *ss[i], fc.t, ks, kv);
    auto v = upload(*devs[i], *ss[i], fc.t, ks, vv);
    auto y = upload(*devs[i], *ss[i], fc.t, qs, std::vector<float>(static_cast<std::size_t>(checked_numel(qs)), 7.0f));
    ops::attention(*ss[i], q.tensor, k.tensor, v.tensor, y.tensor, {.causal = fc.causal});
    out[i] = download(*ss[i], y.tensor);
  }
  // Outputs are weighted means of |v| < 1, rounded to 16 bits: a few units
  // of the format's roundoff apart at most.
  const float tol = fc.t == DType::bf16 ? 2e-2f : 3e-3f;
  int bad = 0;
  for (std::size_t i = 0; i < out[0].size(); ++i)
    if (!(std::fabs(out[0][i] - out[1][i]) <= tol) && ++bad <= 10)
      ADD_FAILURE() << "at " << i << ": hip " << out[0][i] << ", cpu " << out[1][i];
  EXPECT_EQ(bad, 0);
}

}  // namespace

TEST(HipDevice, FlashAttentionMatchesCpu) {
  HAL_REQUIRE_HIP();
  const FlashCase cases[] = {
      {DType::f16, 2, 150, 170, 4, 2, 64, true},    // GQA, sk > sq, partial tiles
      {DType::bf16, 1, 37, 100, 2, 1, 128, false},  // one partial query tile
      {DType::bf16, 1, 200, 70, 2, 2, 64, true},    // sq > sk: first 130 rows fully masked -> 0
      {DType::f16, 1, 129, 129, 3, 3, 128, true},   // one row past a query tile
  };
  for (const FlashCase& c : cases) run_case(c);
}

}  // namespace hal::hip_test
