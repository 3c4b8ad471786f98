// cuda:0 against the cpu device for the tensor-core attention kernel
// (attention_flash.cu, f16/bf16, d == dv in {64, 128}): grouped-query heads,
// causal and not, sq != sk both ways (sq > sk causal: rows with no visible key
// are zeros), decode (sq = 1), q/k/v as strided views of one packed buffer,
// run-to-run bitwise determinism, and a launch counter proving the flash
// kernel (not the general fallback) produced each checked answer.
//
// Error bound (inputs in [-1, 1], scale = 1/sqrt(d), u = 2^-24): both sides
// compute in fp32 and differ only in summation order. A score's error is at
// most d*u*scale*sum|q_c k_c| <= d^2*scale*u; as the output is a convex
// combination of V rows, a score error e moves it by at most 2e*max|v|. The
// softmax sum and the P V sums of length sk add about 2*sk*u*max|v|. The
// kernel splits P into 16-bit parts of 22 (f16) / 24 (bf16) bits in total,
// adding <= 2^-22 relative. Per element: |cuda - cpu| <= 4u(2 d^2 scale +
// 2 sk + 64) max|v| + one ulp of the output (either side may round its fp32
// value to a different neighbour). A 16-bit P without the split (2^-9 for
// bf16) or any fragment-layout mistake (errors ~0.1) exceeds it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backends/cuda/cuda_paths.h"
#include "attention_test_inputs.h"
#include "kern_test_util.h"
#include "ops/ops.h"
#include "tests/unverified_switch.h"

namespace hal::cuda {
// Defined in backends/cuda/cuda_attention.cpp: flash kernel launches so far.
std::uint64_t attention_flash_launch_count() noexcept;
}  // namespace hal::cuda

namespace hal::cuda_test {
namespace {

using FlashCase = AttentionCase;  // attention_test_inputs.h


// Runs the case on cpu and cuda (twice), checks the bound, determinism and
// that the flash kernel ran. Returns the cuda output.
std::vector<unsigned char> check_flash(DType t, const FlashCase& c) {
  // HAL_GPU_UNVERIFIED unset here: with it set, an sm_90 device would answer
  // through the unverified sm_90a kernel (attention_sm90a_test.cpp checks
  // that one) instead of the flash kernel.
  const test::UnverifiedSwitch verified_only(nullptr);
  const std::string what = describe(t, c);
  const AttentionInputs in = make_inputs(t, c, 51);
  const Shape yshape{c.b, c.sq, c.hq, c.d};
  const auto want = run_on(device("cpu"), in.tensors, t, yshape, in.op);
  const std::uint64_t before = cuda::attention_flash_launch_count();
  const auto got = run_on(*cuda_device(), in.tensors, t, yshape, in.op);
  EXPECT_EQ(cuda::attention_flash_launch_count(), before + 1) << what << ": the flash kernel did not run";
  const auto again = run_on(*cuda_device(), in.tensors, t, yshape, in.op);
  EXPECT_TRUE(got.size() == again.size() && std::memcmp(got.data(), again.data(), got.size()) == 0)
      << what << ": two runs differ";

  const double vmax = c.packed ? max_abs(t, in.tensors[0]) : max_abs(t, in.tensors[2]);
  const double u = kU32, dd = static_cast<double>(c.d), scale = 1.0 / std::sqrt(dd);
  const double tol = 4.0 * u * (2.0 * dd * dd * scale + 2.0 * static_cast<double>(c.sk) + 64.0) * vmax;
  EXPECT_EQ(want.size(), got.size());
  const std::size_t n = want.size() / dtype_size(t);
  std::size_t bad = 0;
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double g = load_element(got.data(), t, static_cast<std::int64_t>(i));
    const double w = load_element(want.data(), t, static_cast<std::int64_t>(i));
    const double err = std::fabs(g - w);
    worst = std::max(worst, err);
    if (!(err <= tol + ulp_at(t, std::max(std::fabs(g), std::fabs(w)))) && bad++ < 5)
      ADD_FAILURE() << what << ": element " << i << ": cuda " << g << " cpu " << w << " (tol " << tol << ")";
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " elements out of bound; worst error " << worst;
  return got;
}

bool flash_enabled() { return cuda::path_enabled("flash"); }

#define HAL_REQUIRE_FLASH()                                                              \
  do {                                                                                   \
    HAL_REQUIRE_CUDA();                                                                  \
    if (!flash_enabled()) GTEST_SKIP() << "flash path disabled through HAL_CUDA_DISABLE"; \
  } while (0)

TEST(CudaAttentionFlash, GroupedQuerySquare) {
  HAL_REQUIRE_FLASH();
  for (DType t : {DType::f16, DType::bf16})
    for (bool causal : {false, true}) check_flash(t, {2, 128, 128, 8, 2, 64, causal});
}

TEST(CudaAttentionFlash, RaggedTilesD128) {
  HAL_REQUIRE_FLASH();
  for (DType t : {DType::f16, DType::bf16})
    for (bool causal : {false, true}) check_flash(t, {1, 300, 515, 4, 4, 128, causal});
}

TEST(CudaAttentionFlash, Decode) {
  HAL_REQUIRE_FLASH();
  for (DType t : {DType::f16, DType::bf16}) {
    check_flash(t, {1, 1, 1000, 8, 2, 128, true});
    check_flash(t, {2, 1, 1000, 4, 1, 64, false});
  }
}

TEST(CudaAttentionFlash, MoreQueriesThanKeysCausalGivesZeroRows) {
  HAL_REQUIRE_FLASH();
  const FlashCase c{1, 150, 70, 2, 1, 64, true};  // query i sees keys j <= i - 80
  for (DType t : {DType::f16, DType::bf16}) {
    const auto got = check_flash(t, c);
    for (std::int64_t i = 0; i < 80; ++i)
      for (std::int64_t e = 0; e < c.hq * c.d; ++e) {
        const double y = load_element(got.data(), t, i * c.hq * c.d + e);
        ASSERT_EQ(y, 0.0) << describe(t, c) << ": query " << i << " sees no key, got " << y;
      }
    // Query 80 sees only key 0: its output is V row 0 of its kv head (a nonzero row).
    bool any_nonzero = false;
    for (std::int64_t e = 0; e < c.d; ++e) any_nonzero |= load_element(got.data(), t, 80 * c.hq * c.d + e) != 0.0;
    EXPECT_TRUE(any_nonzero) << describe(t, c) << ": first visible query is all zeros";
  }
}

TEST(CudaAttentionFlash, StridedViewsOfPackedQkv) {
  HAL_REQUIRE_FLASH();
  for (DType t : {DType::f16, DType::bf16}) {
    check_flash(t, {2, 97, 97, 4, 2, 64, true, true});
    check_flash(t, {1, 70, 70, 2, 1, 128, false, true});
  }
}

TEST(CudaAttentionFlash, UnsupportedShapesUseTheGeneralKernel) {
  HAL_REQUIRE_CUDA();
  // d = 96 and f32 are not flash shapes: the answer must come from the general kernel.
  const std::uint64_t before = cuda::attention_flash_launch_count();
  for (DType t : {DType::bf16, DType::f32}) {
    const std::int64_t d = t == DType::f32 ? 64 : 96;
    const HostTensor q = random_tensor(t, Shape{1, 9, 2, d}, -1, 1, 61);
    const HostTensor k = random_tensor(t, Shape{1, 11, 2, d}, -1, 1, 62);
    const HostTensor v = random_tensor(t, Shape{1, 11, 2, d}, -1, 1, 63);
    expect_matches_cpu({q, k, v}, t, Shape{1, 9, 2, d},
                       [](Stream& s, const std::vector<Tensor>& in, const Tensor& y) {
                         ops::attention(s, in[0], in[1], in[2], y, {.scale = 0.0f, .causal = true});
                       },
                       output_ulps(t), std::string(dtype_name(t)) + " fallback", 8.0 * (d + 11) * kU32 * 4.0 + 1e-6);
  }
  EXPECT_EQ(cuda::attention_flash_launch_count(), before);
}

}  // namespace
}  // namespace hal::cuda_test
