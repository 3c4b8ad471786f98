// cuda:0 against the cpu device for the decode GEMM (ptx/kernels/gemm_decode.cu,
// never run before the first GPU session that runs this file): HAL_GPU_UNVERIFIED=1
// is set for the test, and every call checks that the decode path launched
// (its counter moved). Shapes: M = 1..64 across the four M variants, N not a
// multiple of 16, K a multiple of 8 but not of 32 (the K tail), long K with many
// splits, bias + activation + alpha/beta, a batch with a broadcast weight; plus
// bitwise run-to-run stability.
//
// Bound: as gemm_sm90a_test.cpp (inputs in [-1, 1], fp32 accumulation in
// different orders on both sides), plus one rounding of C's dtype.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "backends/cuda/cuda_gemm_decode.h"
#include "kern_test_util.h"
#include "ops/ops.h"
#include "tests/unverified_switch.h"

namespace hal::cuda_test {
namespace {

double decode_tol(std::int64_t k, double scale = 1.0) {
  return 0.5 * static_cast<double>(k) * static_cast<double>(k) * kU32 * scale + 1e-5;
}

struct Case {
  std::int64_t batch, m, n, k;
  DType ab, c;
  ops::GemmOptions o{};
  bool bias = false;
};

void check(const Case& g) {
  const test::UnverifiedSwitch on("1");
  const Shape a_shape = g.batch > 1 ? Shape{g.batch, g.m, g.k} : Shape{g.m, g.k};
  const Shape c_shape = g.batch > 1 ? Shape{g.batch, g.m, g.n} : Shape{g.m, g.n};
  std::vector<HostTensor> inputs = {random_tensor(g.ab, a_shape, -1, 1, 61),
                                    random_tensor(g.ab, Shape{g.n, g.k}, -1, 1, 62),  // weight [N, K], shared
                                    random_tensor(g.c, c_shape, -1, 1, 63)};
  if (g.bias) inputs.push_back(random_tensor(g.c, Shape{g.n}, -1, 1, 64));
  const std::string what = std::string(dtype_name(g.ab)) + "->" + std::string(dtype_name(g.c)) + " " +
                           std::to_string(g.batch) + "x" + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" +
                           std::to_string(g.k);
  const std::uint64_t before = cuda::gemm_decode_launch_count();
  expect_matches_cpu(
      inputs, g.c, c_shape,
      [&](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
        ops::GemmOptions o = g.o;
        o.trans_b = true;
        if (g.bias) o.bias = in[3];
        if (o.beta != 0.0f) ops::copy(s, in[2], y);
        ops::gemm(s, in[0], in[1], y, o);
      },
      output_ulps(g.c), what, decode_tol(g.k, 1.0 + std::abs(g.o.alpha)) + (g.o.beta != 0.0f || g.bias ? 1e-5 : 0.0));
  EXPECT_GT(cuda::gemm_decode_launch_count(), before) << what << ": the decode path did not run";
}

TEST(CudaGemmDecode, EveryMVariantAndEdges) {
  HAL_REQUIRE_CUDA();
  for (DType t : {DType::bf16, DType::f16})
    for (std::int64_t m : {1, 3, 8, 9, 16, 17, 32, 33, 64})
      check({1, m, 1000, 264, t, DType::f32});
  check({1, 1, 16, 8, DType::bf16, DType::bf16});       // one unit, one K chunk
  check({1, 5, 4103, 4096, DType::bf16, DType::bf16});  // many splits, N tail
}

TEST(CudaGemmDecode, EpilogueAndBatch) {
  HAL_REQUIRE_CUDA();
  ops::GemmOptions o;
  o.alpha = 0.5f;
  o.beta = -1.25f;
  o.activation = Activation::silu;
  check({1, 16, 520, 1032, DType::bf16, DType::bf16, o, true});
  check({1, 64, 300, 136, DType::f16, DType::f32, o, true});
  check({3, 7, 200, 512, DType::bf16, DType::f32});  // batch of 3 over one weight
}

TEST(CudaGemmDecode, BitwiseStableAcrossRuns) {
  HAL_REQUIRE_CUDA();
  const test::UnverifiedSwitch on("1");
  const std::vector<HostTensor> inputs = {random_tensor(DType::bf16, Shape{16, 4096}, -1, 1, 71),
                                          random_tensor(DType::bf16, Shape{4096, 4096}, -1, 1, 72)};
  const OpFn op = [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
    ops::GemmOptions o;
    o.trans_b = true;
    ops::gemm(s, in[0], in[1], y, o);
  };
  const auto first = run_on(*cuda_device(), inputs, DType::f32, Shape{16, 4096}, op);
  const auto second = run_on(*cuda_device(), inputs, DType::f32, Shape{16, 4096}, op);
  ASSERT_EQ(first.size(), second.size());
  EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size()), 0);
}

}  // namespace
}  // namespace hal::cuda_test
