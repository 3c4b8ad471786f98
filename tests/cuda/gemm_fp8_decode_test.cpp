// cuda:0 against the cpu device for the fp8 decode GEMM
// (ptx/kernels/gemm_fp8_decode.cu, never run before the first GPU session
// that runs this file): HAL_GPU_UNVERIFIED=1 is set for the test, and every
// call checks that the decode path launched (its counter moved). Shapes: M =
// 1..64 across the four M variants, every OCP operand pairing, N not a
// multiple of 16, K a multiple of 16 but not of 128 (the short last block),
// long K with many splits, bias + activation + alpha/beta; bitwise
// run-to-run stability.
//
// Bound: gemm_fp8's (docs/accuracy.md) with the wgmma block-sum model the
// suite uses for cuda (u_blk = 2^-13 over n = 135 steps of a full block:
// gamma_blk < 0.017), over inputs in [-1, 1] and scales in [0.5, 2]:
// |error| <= 0.02 * 4 * K, plus one rounding of C's dtype.
#include <gtest/gtest.h>

#include <cstring>

#include "backends/cuda/cuda_gemm_fp8_decode.h"
#include "kern_test_util.h"
#include "ops/ops.h"
#include "tests/unverified_switch.h"

namespace hal::cuda_test {
namespace {

struct Case {
  std::int64_t m, n, k;
  DType a, b, c;
  Fp8Epilogue e{};
  bool bias = false;
};

void check(const Case& g) {
  const test::UnverifiedSwitch on("1");
  const std::int64_t kb = (g.k + 127) / 128, nb = (g.n + 127) / 128;
  std::vector<HostTensor> inputs = {random_tensor(g.a, Shape{g.m, g.k}, -1, 1, 81),
                                    random_tensor(DType::f32, Shape{g.m, kb}, 0.5f, 2.0f, 82),
                                    random_tensor(g.b, Shape{g.n, g.k}, -1, 1, 83),
                                    random_tensor(DType::f32, Shape{nb, kb}, 0.5f, 2.0f, 84),
                                    random_tensor(g.c, Shape{g.m, g.n}, -1, 1, 85)};
  if (g.bias) inputs.push_back(random_tensor(g.c, Shape{g.n}, -1, 1, 86));
  const std::string what = std::string(dtype_name(g.a)) + "x" + std::string(dtype_name(g.b)) + "->" +
                           std::string(dtype_name(g.c)) + " " + std::to_string(g.m) + "x" + std::to_string(g.n) +
                           "x" + std::to_string(g.k);
  const std::uint64_t before = cuda::gemm_fp8_decode_launch_count();
  expect_matches_cpu(
      inputs, g.c, Shape{g.m, g.n},
      [&](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
        Fp8Epilogue e = g.e;
        if (g.bias) e.bias = in[5];
        if (e.beta != 0.0f) ops::copy(s, in[4], y);
        ops::gemm_fp8(s, in[0], in[1], in[2], in[3], y, e);
      },
      output_ulps(g.c), what, 0.08 * static_cast<double>(g.k) * (1.0 + std::abs(g.e.alpha)) + 1e-4);
  EXPECT_GT(cuda::gemm_fp8_decode_launch_count(), before) << what << ": the fp8 decode path did not run";
}

TEST(CudaGemmFp8Decode, EveryMVariantAndPairing) {
  HAL_REQUIRE_CUDA();
  for (std::int64_t m : {1, 3, 8, 9, 16, 17, 32, 33, 64}) check({m, 1000, 784, DType::f8e4m3, DType::f8e4m3, DType::f32});
  check({5, 200, 528, DType::f8e4m3, DType::f8e5m2, DType::bf16});
  check({5, 200, 528, DType::f8e5m2, DType::f8e4m3, DType::bf16});
  check({5, 200, 528, DType::f8e5m2, DType::f8e5m2, DType::f32});
  check({1, 16, 16, DType::f8e4m3, DType::f8e4m3, DType::f32});      // one unit, one chunk
  check({4, 4103, 7168, DType::f8e4m3, DType::f8e4m3, DType::bf16});  // many splits, N tail
}

TEST(CudaGemmFp8Decode, Epilogue) {
  HAL_REQUIRE_CUDA();
  Fp8Epilogue e;
  e.alpha = 0.5f;
  e.beta = -1.25f;
  e.activation = Activation::silu;
  check({16, 520, 1040, DType::f8e4m3, DType::f8e4m3, DType::bf16, e, true});
  check({64, 300, 256, DType::f8e5m2, DType::f8e4m3, DType::f32, e, true});
}

TEST(CudaGemmFp8Decode, BitwiseStableAcrossRuns) {
  HAL_REQUIRE_CUDA();
  const test::UnverifiedSwitch on("1");
  const std::vector<HostTensor> inputs = {random_tensor(DType::f8e4m3, Shape{16, 4096}, -1, 1, 91),
                                          random_tensor(DType::f32, Shape{16, 32}, 0.5f, 2.0f, 92),
                                          random_tensor(DType::f8e4m3, Shape{4096, 4096}, -1, 1, 93),
                                          random_tensor(DType::f32, Shape{32, 32}, 0.5f, 2.0f, 94)};
  const OpFn op = [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
    ops::gemm_fp8(s, in[0], in[1], in[2], in[3], y);
  };
  const auto first = run_on(*cuda_device(), inputs, DType::f32, Shape{16, 4096}, op);
  const auto second = run_on(*cuda_device(), inputs, DType::f32, Shape{16, 4096}, op);
  ASSERT_EQ(first.size(), second.size());
  EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size()), 0);
}

}  // namespace
}  // namespace hal::cuda_test
