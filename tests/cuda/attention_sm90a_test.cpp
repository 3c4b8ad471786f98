// cuda:0: the unverified sm_90a attention kernel (attention_sm90a.cu, TMA +
// wgmma, FlashAttention-3 style) against the verified tensor-core kernel
// (attention_flash.cu) and the cpu device, f16/bf16, d in {64, 128}:
// grouped-query heads, causal and not, sq != sk both ways (sq > sk causal:
// rows with no visible key are zeros), decode (sq = 1), more work items than
// SMs (the persistent loop wraps, the mbarrier ring's parities flip many
// times), q/k/v as strided views of one packed buffer, bitwise run-to-run
// determinism, and launch counters proving which kernel produced each
// answer. HAL_GPU_UNVERIFIED=1 is set around the sm_90a runs only. Skips
// without a GPU, and on a GPU without sm_90a code or with the path disabled
// (HAL_CUDA_DISABLE=wgmma_attention).
//
// Bound: both kernels and the cpu compute in fp32 and differ in summation
// order; the sm_90a kernel splits P into the same 16-bit parts as the flash
// kernel. Each is within attention_flash_test.cpp's bound
// 4u(2 d^2 scale + 2 sk + 64) max|v| (+ one output ulp) of the cpu, so the
// two are within twice that (+ two ulps) of each other; the cpu check uses
// the single bound. A fragment-layout, swizzle or descriptor mistake gives
// errors of order 0.1, a single 16-bit P 2^-9 relative: both far outside.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "backends/cuda/cuda_attention_sm90a.h"
#include "backends/cuda/cuda_paths.h"
#include "backends/gpu/unverified.h"
#include "attention_test_inputs.h"
#include "kern_test_util.h"
#include "ops/ops.h"
#include "tests/unverified_switch.h"

namespace hal::cuda {
std::uint64_t attention_flash_launch_count() noexcept;  // cuda_attention.cpp
}  // namespace hal::cuda

namespace hal::cuda_test {
namespace {

using test::UnverifiedSwitch;

bool sm90a_device() {
  const auto& f = cuda_device()->info().features;
  return std::find(f.begin(), f.end(), "wgmma") != f.end() && cuda::path_enabled("wgmma_attention");
}

#define HAL_REQUIRE_SM90A_ATTENTION()                                                                   \
  do {                                                                                                  \
    HAL_REQUIRE_CUDA();                                                                                 \
    if (!sm90a_device()) GTEST_SKIP() << "no sm_90a device, or HAL_CUDA_DISABLE=wgmma_attention";       \
    if (!cuda::path_enabled("flash")) GTEST_SKIP() << "the reference flash kernel is disabled";         \
  } while (0)

using Case = AttentionCase;  // attention_test_inputs.h

// Counts elements of `got` farther than tol (+ `ulps` output ulps) from `want`.
std::size_t compare(DType t, const std::vector<unsigned char>& got, const std::vector<unsigned char>& want,
                    double tol, double ulps, const std::string& what) {
  EXPECT_EQ(got.size(), want.size()) << what;
  const std::size_t n = std::min(got.size(), want.size()) / dtype_size(t);
  std::size_t bad = 0;
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double g = load_element(got.data(), t, static_cast<std::int64_t>(i));
    const double w = load_element(want.data(), t, static_cast<std::int64_t>(i));
    const double err = std::fabs(g - w);
    worst = std::max(worst, err);
    if (!(err <= tol + ulps * ulp_at(t, std::max(std::fabs(g), std::fabs(w)))) && bad++ < 5)
      ADD_FAILURE() << what << ": element " << i << ": got " << g << " want " << w << " (tol " << tol << ")";
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " elements out of bound; worst error " << worst;
  return bad;
}

// The sm_90a output (checked against the flash kernel and the cpu).
std::vector<unsigned char> check(DType t, const Case& c, bool with_cpu = true) {
  const std::string what = describe(t, c);
  const AttentionInputs in = make_inputs(t, c, 71);
  const Shape yshape{c.b, c.sq, c.hq, c.d};
  std::vector<unsigned char> got, again, flash;
  {
    UnverifiedSwitch on("1");
    const std::uint64_t before = cuda::attention_sm90a_launch_count();
    got = run_on(*cuda_device(), in.tensors, t, yshape, in.op);
    again = run_on(*cuda_device(), in.tensors, t, yshape, in.op);
    EXPECT_EQ(cuda::attention_sm90a_launch_count(), before + 2) << what << ": the sm_90a kernel did not run";
  }
  {
    UnverifiedSwitch off(nullptr);
    const std::uint64_t before = cuda::attention_flash_launch_count();
    flash = run_on(*cuda_device(), in.tensors, t, yshape, in.op);
    EXPECT_EQ(cuda::attention_flash_launch_count(), before + 1) << what << ": the flash kernel did not run";
  }
  EXPECT_TRUE(got.size() == again.size() && std::memcmp(got.data(), again.data(), got.size()) == 0)
      << what << ": two runs differ";
  const double vmax = c.packed ? max_abs(t, in.tensors[0]) : max_abs(t, in.tensors[2]);
  const double dd = static_cast<double>(c.d), scale = 1.0 / std::sqrt(dd);
  const double tol = 4.0 * kU32 * (2.0 * dd * dd * scale + 2.0 * static_cast<double>(c.sk) + 64.0) * vmax;
  compare(t, got, flash, 2.0 * tol, 2.0, what + " vs flash");
  if (with_cpu) compare(t, got, run_on(device("cpu"), in.tensors, t, yshape, in.op), tol, 1.0, what + " vs cpu");
  return got;
}

TEST(CudaAttentionSm90a, GroupedQuerySquare) {
  HAL_REQUIRE_SM90A_ATTENTION();
  for (DType t : {DType::f16, DType::bf16})
    for (std::int64_t d : {64, 128})
      for (bool causal : {false, true}) check(t, {2, 256, 256, 8, 2, d, causal});
}

TEST(CudaAttentionSm90a, RaggedTiles) {
  HAL_REQUIRE_SM90A_ATTENTION();
  for (DType t : {DType::f16, DType::bf16})
    for (std::int64_t d : {64, 128})
      for (bool causal : {false, true}) {
        check(t, {1, 300, 515, 4, 4, d, causal});  // sq < sk: the diagonal shifts by 215
        check(t, {1, 130, 129, 2, 1, d, causal});  // one query and one key past a tile
      }
}

TEST(CudaAttentionSm90a, Decode) {
  HAL_REQUIRE_SM90A_ATTENTION();
  for (DType t : {DType::f16, DType::bf16}) {
    check(t, {1, 1, 1000, 8, 2, 128, true});
    check(t, {2, 1, 1000, 4, 1, 64, false});
  }
}

TEST(CudaAttentionSm90a, MoreQueriesThanKeysCausalGivesZeroRows) {
  HAL_REQUIRE_SM90A_ATTENTION();
  const Case c{1, 300, 70, 2, 1, 64, true};  // query i sees keys j <= i - 230: the first tile sees none
  for (DType t : {DType::f16, DType::bf16}) {
    const auto got = check(t, c);
    for (std::int64_t i = 0; i < 230; ++i)
      for (std::int64_t e = 0; e < c.hq * c.d; ++e) {
        const double y = load_element(got.data(), t, i * c.hq * c.d + e);
        ASSERT_EQ(y, 0.0) << describe(t, c) << ": query " << i << " sees no key, got " << y;
      }
  }
}

// 16 query tiles x 16 heads x 2 = 512 items: several per CTA on any Hopper,
// longest first, each CTA's ring wrapping hundreds of times.
TEST(CudaAttentionSm90a, PersistentLoopManyItems) {
  HAL_REQUIRE_SM90A_ATTENTION();
  for (DType t : {DType::f16, DType::bf16})
    for (bool causal : {true, false}) check(t, {2, 2048, 2048, 16, 4, 128, causal}, /*with_cpu=*/false);
  check(DType::bf16, {1, 1500, 1500, 32, 8, 64, true}, /*with_cpu=*/false);
}

TEST(CudaAttentionSm90a, StridedViewsOfPackedQkv) {
  HAL_REQUIRE_SM90A_ATTENTION();
  for (DType t : {DType::f16, DType::bf16}) {
    check(t, {2, 197, 197, 4, 2, 64, true, true});
    check(t, {1, 170, 170, 2, 1, 128, false, true});
  }
}

// Off by default: without HAL_GPU_UNVERIFIED=1 the flash kernel answers.
TEST(CudaAttentionSm90a, OffWithoutTheUnverifiedSwitch) {
  HAL_REQUIRE_CUDA();
  UnverifiedSwitch off(nullptr);
  EXPECT_FALSE(cuda::attention_sm90a_switched_on());
  const std::uint64_t before = cuda::attention_sm90a_launch_count();
  const AttentionInputs in = make_inputs(DType::bf16, {1, 64, 64, 2, 2, 64, true}, 71);
  (void)run_on(*cuda_device(), in.tensors, DType::bf16, Shape{1, 64, 2, 64}, in.op);
  EXPECT_EQ(cuda::attention_sm90a_launch_count(), before);
}

}  // namespace
}  // namespace hal::cuda_test
