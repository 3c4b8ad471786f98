// cuda:0 against the cpu device for attention: grouped-query heads, causal
// and not, sq != sk (both ways), head dims 64/128 and odd ones, f16/bf16/f32.
// Bound: the output is a convex combination of V rows computed with fp32
// sums of length d (scores) and sk (weights): |err| <= c*(d + sk)*u*max|v|*...,
// taken here as 8*(d*max|q||k|*scale + sk)*u, plus 1 ulp of the output.
#include <gtest/gtest.h>

#include "kern_test_util.h"
#include "ops/ops.h"

namespace hal::cuda_test {
namespace {

struct AttnCase {
  std::int64_t b, sq, sk, hq, hkv, d, dv;
  bool causal;
};

void check_attention(DType t, const AttnCase& c) {
  const HostTensor q = random_tensor(t, Shape{c.b, c.sq, c.hq, c.d}, -1, 1, 41);
  const HostTensor k = random_tensor(t, Shape{c.b, c.sk, c.hkv, c.d}, -1, 1, 42);
  const HostTensor v = random_tensor(t, Shape{c.b, c.sk, c.hkv, c.dv}, -1, 1, 43);
  const double tol = 8.0 * (static_cast<double>(c.d) + static_cast<double>(c.sk)) * kU32 * 4.0 + 1e-6;
  const std::string what = std::string(dtype_name(t)) + " b" + std::to_string(c.b) + " sq" + std::to_string(c.sq) +
                           " sk" + std::to_string(c.sk) + " hq" + std::to_string(c.hq) + " hkv" +
                           std::to_string(c.hkv) + " d" + std::to_string(c.d) + " dv" + std::to_string(c.dv) +
                           (c.causal ? " causal" : "");
  expect_matches_cpu({q, k, v}, t, Shape{c.b, c.sq, c.hq, c.dv},
                     [&](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
                       ops::attention(s, in[0], in[1], in[2], y, {.scale = 0.0f, .causal = c.causal});
                     },
                     output_ulps(t), what, tol);
}

TEST(CudaAttention, GroupedQueryCausalAndNot) {
  HAL_REQUIRE_CUDA();
  const AttnCase cases[] = {
      {1, 1, 1, 1, 1, 64, 64, false},    {2, 37, 37, 4, 2, 64, 64, true},   {1, 130, 257, 8, 2, 128, 128, true},
      {1, 257, 130, 4, 4, 128, 128, true}, {2, 65, 200, 6, 3, 64, 64, false}, {1, 19, 23, 3, 1, 40, 72, true},
      {1, 8, 600, 2, 1, 80, 600, false},
  };
  for (DType t : {DType::f16, DType::bf16})
    for (const AttnCase& c : cases) check_attention(t, c);
}

}  // namespace
}  // namespace hal::cuda_test
