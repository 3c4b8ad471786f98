// The oracle on an accumulated output with holes: gemm's C with beta != 0
// and a padded row stride. Found by tests/fuzz/op_fuzzer (the CPU result was
// right; the oracle started C from the bytes at C's start, holes included).
#include <gtest/gtest.h>

#include <vector>

#include "conformance/oracle.h"
#include "hal/registry.h"

namespace {

TEST(Oracle, AccumulatedOutputWithAPaddedRowStrideStartsFromItsElements) {
  hal::Device& cpu = hal::device("cpu");
  constexpr int m = 4, k = 2, n = 1, ld = 3;
  std::vector<float> a = {1, 2, 3, 4, 5, 6, 7, 8};  // [m, k]
  std::vector<float> b = {10, -1};                  // [k, n]
  std::vector<float> c(m * ld, 100.0f);             // holes hold 100
  for (int i = 0; i < m; ++i) c[i * ld] = 0.5f * static_cast<float>(i);
  hal::GemmCall g;
  g.a = hal::Tensor::contiguous(a.data(), &cpu, hal::DType::f32, {m, k});
  g.b = hal::Tensor::contiguous(b.data(), &cpu, hal::DType::f32, {k, n});
  g.c = hal::Tensor::contiguous(c.data(), &cpu, hal::DType::f32, {m, n});
  g.c.strides = hal::Strides{ld, 1};
  g.beta = 1.0f;
  const hal::conformance::Reference ref = hal::conformance::compute_reference(g);
  ASSERT_EQ(ref.values.size(), static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i) {
    const double want = a[i * k] * 10.0 - a[i * k + 1] + 0.5 * i;
    EXPECT_EQ(ref.values[static_cast<std::size_t>(i)], want) << "row " << i;
  }
}

}  // namespace
