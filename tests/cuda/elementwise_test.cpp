// cuda:0 against the cpu device for binary, unary and swiglu, f32/f16/bf16.
// Exact ops (IEEE basic operations in fp32, then one rounding) must match bit
// for bit; transcendental ones within 2 ulp of the output dtype (f32 outputs
// may also differ by 4e-7 absolute, where cancellation inside gelu/silu
// magnifies a 1-ulp difference of the libm functions).
#include <gtest/gtest.h>

#include "cuda_test_util.h"
#include "ops/ops.h"

namespace hal::cuda_test {
namespace {

const DType kDtypes[] = {DType::f32, DType::f16, DType::bf16};

struct UnaryCase {
  UnaryKind kind;
  float lo, hi;
  bool exact;
};

const UnaryCase kUnary[] = {
    {UnaryKind::neg, -100, 100, true},     {UnaryKind::abs, -100, 100, true},
    {UnaryKind::relu, -100, 100, true},    {UnaryKind::sqrt, 0, 1000, true},
    {UnaryKind::rsqrt, 0.001f, 1000, true}, {UnaryKind::exp, -20, 20, false},
    {UnaryKind::log, 0.001f, 1000, false}, {UnaryKind::tanh, -6, 6, false},
    {UnaryKind::sigmoid, -20, 20, false},  {UnaryKind::gelu, -6, 6, false},
    {UnaryKind::gelu_tanh, -6, 6, false},  {UnaryKind::silu, -20, 20, false},
};

TEST(CudaElementwise, UnaryMatchesCpuContiguousAndStrided) {
  HAL_REQUIRE_CUDA();
  for (DType t : kDtypes) {
    for (const UnaryCase& c : kUnary) {
      const std::string what = std::string(to_string(c.kind)) + " " + std::string(dtype_name(t));
      const Shape shape{37, 129};  // odd sizes: vector tail and strided path
      const HostTensor x = host_tensor(t, shape, c.lo, c.hi);
      const std::int64_t ulp = c.exact ? 0 : 2;
      const double abs_tol = (c.exact || t != DType::f32) ? 0.0 : 4e-7;
      expect_matches_cpu({x}, t, shape, [&](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
        ops::unary(s, c.kind, in[0], y);
      }, ulp, what + " contiguous", abs_tol);
      // Transposed view of x into a transposed y: the strided kernel.
      expect_matches_cpu({x}, t, Shape{129, 37}, [&](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
        ops::unary(s, c.kind, in[0].transposed(0, 1), y);
      }, ulp, what + " strided", abs_tol);
    }
  }
}

TEST(CudaElementwise, BinaryMatchesCpuWithBroadcasting) {
  HAL_REQUIRE_CUDA();
  const BinaryKind kinds[] = {BinaryKind::add, BinaryKind::sub, BinaryKind::mul,
                              BinaryKind::div, BinaryKind::maximum, BinaryKind::minimum};
  for (DType t : kDtypes) {
    for (BinaryKind k : kinds) {
      const std::string what = std::string(to_string(k)) + " " + std::string(dtype_name(t));
      const HostTensor a = host_tensor(t, Shape{5, 7, 131}, -50, 50);
      const HostTensor b = host_tensor(t, Shape{5, 7, 131}, -3, 3);
      expect_matches_cpu({a, b}, t, Shape{5, 7, 131}, [&](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
        ops::binary(s, k, in[0], in[1], y);
      }, 0, what + " same shape");
      const HostTensor row = host_tensor(t, Shape{1, 131}, -3, 3);
      expect_matches_cpu({a, row}, t, Shape{5, 7, 131}, [&](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
        ops::binary(s, k, in[0], in[1], y);
      }, 0, what + " broadcast row");
    }
  }
}

TEST(CudaElementwise, SwigluMatchesCpu) {
  HAL_REQUIRE_CUDA();
  for (DType t : kDtypes) {
    const HostTensor g = host_tensor(t, Shape{3, 1001}, -8, 8);
    const HostTensor u = host_tensor(t, Shape{3, 1001}, -4, 4);
    expect_matches_cpu({g, u}, t, Shape{3, 1001}, [&](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
      ops::swiglu(s, in[0], in[1], y);
    }, 2, std::string("swiglu ") + std::string(dtype_name(t)), t == DType::f32 ? 4e-7 : 0.0);
  }
}

}  // namespace
}  // namespace hal::cuda_test
