// cuda:0 against the cpu device for gemm: odd shapes (1, primes, not
// multiples of any tile), the tensor-core path's shapes, every transpose
// combination, batched with a broadcast operand, bias + activations + beta,
// and strided views that force the general kernel.
//
// Bound: both sides accumulate K products in fp32 (in different orders), so
// |err| <= 2 * K * u * sum_k |a_ik||b_kj| <= 2 * K^2 * u * max|a| max|b|, plus
// one rounding of C's dtype (1 ulp for 16-bit outputs, either neighbour).
#include <gtest/gtest.h>

#include "kern_test_util.h"
#include "ops/ops.h"

namespace hal::cuda_test {
namespace {

struct GemmCase {
  std::int64_t m, n, k;
};

double gemm_tol(std::int64_t k, double scale = 1.0) {
  return 2.0 * static_cast<double>(k) * static_cast<double>(k) * kU32 * scale + 1e-6;
}

void check_gemm(DType ab, DType ct, const GemmCase& g, bool ta, bool tb, const ops::GemmOptions& extra = {},
                bool with_bias = false) {
  const Shape a_shape = ta ? Shape{g.k, g.m} : Shape{g.m, g.k};
  const Shape b_shape = tb ? Shape{g.n, g.k} : Shape{g.k, g.n};
  std::vector<HostTensor> inputs = {random_tensor(ab, a_shape, -1, 1, 11), random_tensor(ab, b_shape, -1, 1, 12),
                                    random_tensor(ct, Shape{g.m, g.n}, -1, 1, 13)};
  if (with_bias) inputs.push_back(random_tensor(ct, Shape{g.n}, -1, 1, 14));
  const std::string what = std::string(dtype_name(ab)) + "->" + std::string(dtype_name(ct)) + " " +
                           std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.k) +
                           (ta ? " ta" : "") + (tb ? " tb" : "") + " beta " + std::to_string(extra.beta);
  expect_matches_cpu(inputs, ct, Shape{g.m, g.n}, [&](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
    ops::GemmOptions o = extra;
    o.trans_a = ta;
    o.trans_b = tb;
    if (with_bias) o.bias = in[3];
    if (o.beta != 0.0f) ops::copy(s, in[2], y);  // C's initial value
    ops::gemm(s, in[0], in[1], y, o);
  }, output_ulps(ct), what, gemm_tol(g.k, 1.0 + std::abs(extra.alpha)) + (extra.beta != 0.0f ? 1e-6 : 0.0));
}

TEST(CudaGemm, OddShapesEveryTransposeAndDtype) {
  HAL_REQUIRE_CUDA();
  const GemmCase cases[] = {{1, 1, 1}, {127, 257, 31}, {5, 3, 129}, {130, 7, 16}};
  for (DType t : {DType::f32, DType::f16, DType::bf16})
    for (const GemmCase& g : cases)
      for (int tr = 0; tr < 4; ++tr) check_gemm(t, t, g, tr & 1, tr & 2);
}

TEST(CudaGemm, TensorCoreShapes) {
  HAL_REQUIRE_CUDA();
  for (DType t : {DType::f16, DType::bf16})
    for (int tr = 0; tr < 4; ++tr) check_gemm(t, DType::f32, {256, 256, 256}, tr & 1, tr & 2);
  check_gemm(DType::bf16, DType::bf16, {1024, 1024, 1024}, false, true);
  check_gemm(DType::f16, DType::f16, {384, 136, 264}, true, false);  // edge tiles, K tail
}

TEST(CudaGemm, EpilogueBiasActivationsAlphaBeta) {
  HAL_REQUIRE_CUDA();
  for (DType t : {DType::f32, DType::bf16}) {
    for (Activation act : {Activation::none, Activation::relu, Activation::gelu_tanh, Activation::silu}) {
      ops::GemmOptions o;
      o.alpha = 0.5f;
      o.beta = -1.25f;
      o.activation = act;
      check_gemm(t, t, {129, 140, 72}, false, false, o, true);
      check_gemm(t, t, {129, 140, 72}, true, true, o, true);
    }
  }
}

TEST(CudaGemm, BatchedWithBroadcastOperand) {
  HAL_REQUIRE_CUDA();
  for (DType t : {DType::f32, DType::f16}) {
    const HostTensor a = random_tensor(t, Shape{3, 67, 40}, -1, 1, 21);
    const HostTensor b = random_tensor(t, Shape{40, 72}, -1, 1, 22);  // shared by every batch
    expect_matches_cpu({a, b}, t, Shape{3, 67, 72}, [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
      ops::gemm(s, in[0], in[1], y);
    }, output_ulps(t), std::string(dtype_name(t)) + " batched, b broadcast", gemm_tol(40));
    const HostTensor b3 = random_tensor(t, Shape{1, 72, 40}, -1, 1, 23);  // batch 1 broadcasts, trans_b
    expect_matches_cpu({a, b3}, t, Shape{3, 67, 72}, [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
      ops::GemmOptions o;
      o.trans_b = true;
      ops::gemm(s, in[0], in[1], y, o);
    }, output_ulps(t), std::string(dtype_name(t)) + " batched, b batch 1", gemm_tol(40));
  }
}

TEST(CudaGemm, StridedViewsUseTheGeneralKernel) {
  HAL_REQUIRE_CUDA();
  // A is every other column of a [33, 2*45] f16 tensor: K stride 2 (no fast path).
  const HostTensor a = random_tensor(DType::f16, Shape{33, 90}, -1, 1, 31);
  const HostTensor b = random_tensor(DType::f16, Shape{45, 19}, -1, 1, 32);
  expect_matches_cpu({a, b}, DType::f32, Shape{33, 19}, [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
    Tensor av = in[0];
    av.shape = Shape{33, 45};
    av.strides = Strides{90, 2};
    ops::gemm(s, av, in[1], y);
  }, 4, "f16 gemm with a K-strided view", gemm_tol(45));
}

}  // namespace
}  // namespace hal::cuda_test
