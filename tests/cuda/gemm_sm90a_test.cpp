// cuda:0 against the cpu device for the sm_90a (TMA + wgmma) GEMM path: bf16
// and f16, A [M,K] row-major with B [N,K] (trans_b) or [K,N], whole tiles, edge tiles
// (1000^3), a long K with bias + silu, beta != 0, the wide tile, a batched call; plus
// bitwise run-to-run stability. On an sm_90 device with sm_90a code each test
// also checks that the wgmma path really launched (its launch counter moved);
// elsewhere the same calls exercise the fallback.
//
// Bound: inputs uniform in [-1, 1], so sum_k |a_ik||b_kj| ~ K/4; both sides
// accumulate in fp32 in different orders: |err| <= 2 K u (K/4) (+ alpha, beta
// and bias terms below one ulp of fp32 each), plus one rounding of C's dtype.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "backends/cuda/cuda_gemm_sm90a.h"
#include "backends/cuda/cuda_paths.h"
#include "kern_test_util.h"
#include "ops/ops.h"

namespace hal::cuda_test {
namespace {

bool wgmma_expected() {
  const auto& f = cuda_device()->info().features;
  return std::find(f.begin(), f.end(), "wgmma") != f.end() && cuda::gemm_sm90a_switched_on();
}

double sm90a_tol(std::int64_t k, double scale = 1.0) {
  return 0.5 * static_cast<double>(k) * static_cast<double>(k) * kU32 * scale + 1e-5;
}

struct Case {
  std::int64_t m, n, k;
  DType ab, c;
  ops::GemmOptions o{};
  bool bias = false;
  bool b_n_major = false;  // B stored [K, N] (trans_b = false) instead of [N, K]
};

void check(const Case& g) {
  std::vector<HostTensor> inputs = {random_tensor(g.ab, Shape{g.m, g.k}, -1, 1, 31),
                                    random_tensor(g.ab, g.b_n_major ? Shape{g.k, g.n} : Shape{g.n, g.k}, -1, 1, 32),
                                    random_tensor(g.c, Shape{g.m, g.n}, -1, 1, 33)};
  if (g.bias) inputs.push_back(random_tensor(g.c, Shape{g.n}, -1, 1, 34));
  const std::string what = std::string(dtype_name(g.ab)) + "->" + std::string(dtype_name(g.c)) + " " +
                           std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.k) +
                           (g.b_n_major ? " B [K,N]" : " B [N,K]");
  const std::uint64_t before = cuda::gemm_sm90a_launch_count();
  expect_matches_cpu(
      inputs, g.c, Shape{g.m, g.n},
      [&](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
        ops::GemmOptions o = g.o;
        o.trans_a = false;
        o.trans_b = !g.b_n_major;
        if (g.bias) o.bias = in[3];
        if (o.beta != 0.0f) ops::copy(s, in[2], y);
        ops::gemm(s, in[0], in[1], y, o);
      },
      output_ulps(g.c), what, sm90a_tol(g.k, std::abs(g.o.alpha)) + (g.o.beta != 0.0f || g.bias ? 1e-5 : 0.0));
  if (wgmma_expected() && (!g.b_n_major || cuda::path_enabled("wgmma_bn"))) {
    EXPECT_GT(cuda::gemm_sm90a_launch_count(), before) << what << ": wgmma path did not run";
  }
}

TEST(CudaGemmSm90a, WholeTiles) {
  HAL_REQUIRE_CUDA();
  for (DType t : {DType::bf16, DType::f16}) check({128, 128, 64, t, DType::f32});
  check({4096, 4096, 4096, DType::bf16, DType::f32});
}

TEST(CudaGemmSm90a, EdgeTilesAndKTail) {
  HAL_REQUIRE_CUDA();
  for (DType t : {DType::bf16, DType::f16}) {
    check({1000, 1000, 1000, t, DType::f32});
    check({1000, 1000, 1000, t, t});
  }
  check({7, 200, 72, DType::bf16, DType::f32});  // one partial tile, K tail 8
}

TEST(CudaGemmSm90a, LongKWithBiasSilu) {
  HAL_REQUIRE_CUDA();
  for (DType t : {DType::bf16, DType::f16}) {
    Case g{256, 384, 4096, t, t};
    g.o.activation = Activation::silu;
    g.bias = true;
    check(g);
  }
}

TEST(CudaGemmSm90a, AlphaBeta) {
  HAL_REQUIRE_CUDA();
  for (DType t : {DType::bf16, DType::f16}) {
    Case g{300, 260, 512, t, DType::f32};
    g.o.alpha = 0.5f;
    g.o.beta = -1.25f;
    check(g);
    g.c = t;
    g.o.activation = Activation::relu;
    g.bias = true;
    check(g);
  }
}

TEST(CudaGemmSm90a, BNMajorThroughTransposeBit) {
  HAL_REQUIRE_CUDA();
  for (DType t : {DType::bf16, DType::f16}) {
    check({128, 128, 64, t, DType::f32, {}, false, true});
    check({1000, 1000, 1000, t, DType::f32, {}, false, true});
    Case g{256, 384, 4096, t, t, {}, true, true};
    g.o.activation = Activation::silu;
    check(g);
  }
  check({2048, 2048, 2048, DType::bf16, DType::f32, {}, false, true});
}

// The wide (128 x 256) tile runs when its tiles fill the SMs: 2200 x 4600
// gives 18 x 18 of them. Edges in M and N (neither a tile multiple), both B
// layouts, both epilogue forms (plain; bias + silu and alpha/beta staged).
bool wide_expected() { return wgmma_expected() && cuda::path_enabled("wgmma_wide"); }

TEST(CudaGemmSm90a, WideTilesBothLayoutsAndEpilogues) {
  HAL_REQUIRE_CUDA();
  const std::uint64_t before = cuda::gemm_sm90a_wide_launch_count();
  for (DType t : {DType::bf16, DType::f16}) {
    for (bool n_major : {false, true}) {
      check({2200, 4600, 320, t, t, {}, false, n_major});
      Case g{2200, 4600, 320, t, DType::f32, {}, true, n_major};
      g.o.activation = Activation::silu;
      g.o.alpha = 0.5f;
      g.o.beta = -1.25f;
      check(g);
    }
  }
  if (wide_expected() && cuda::path_enabled("wgmma_bn")) {
    EXPECT_EQ(cuda::gemm_sm90a_wide_launch_count(), before + 8) << "every call should have taken the wide tile";
  }
}

TEST(CudaGemmSm90a, BatchedLoopsOnHost) {
  HAL_REQUIRE_CUDA();
  const HostTensor a = random_tensor(DType::bf16, Shape{3, 130, 136}, -1, 1, 41);
  const HostTensor b = random_tensor(DType::bf16, Shape{3, 200, 136}, -1, 1, 42);
  const std::uint64_t before = cuda::gemm_sm90a_launch_count();
  expect_matches_cpu({a, b}, DType::f32, Shape{3, 130, 200},
                     [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
                       ops::GemmOptions o;
                       o.trans_b = true;
                       ops::gemm(s, in[0], in[1], y, o);
                     },
                     output_ulps(DType::f32), "batched bf16", sm90a_tol(136));
  if (wgmma_expected()) {
    EXPECT_GE(cuda::gemm_sm90a_launch_count(), before + 3);
  }
}

TEST(CudaGemmSm90a, BitwiseStableAcrossRuns) {
  HAL_REQUIRE_CUDA();
  const std::vector<HostTensor> inputs = {random_tensor(DType::bf16, Shape{1000, 2048}, -1, 1, 51),
                                          random_tensor(DType::bf16, Shape{1000, 2048}, -1, 1, 52)};
  const OpFn op = [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
    ops::GemmOptions o;
    o.trans_b = true;
    ops::gemm(s, in[0], in[1], y, o);
  };
  const auto first = run_on(*cuda_device(), inputs, DType::f32, Shape{1000, 1000}, op);
  const auto second = run_on(*cuda_device(), inputs, DType::f32, Shape{1000, 1000}, op);
  ASSERT_EQ(first.size(), second.size());
  EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size()), 0);
}

}  // namespace
}  // namespace hal::cuda_test
