// The decode GEMM's split planner and its host emulation
// (backends/gpu/gemm_decode_plan.h), on the CPU: which calls qualify, that
// splits cover K exactly with 32-aligned ranges, that the emulated kernels
// (the documented mma.sync / MFMA fragment layouts, the lane maps of
// kernel_params/gemm_decode.h) count every (m, n, k) exactly once for every
// plan, and that pass 2's fixed split order gives the same bits every run.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "backends/gpu/gemm_decode_plan.h"
#include "backends/gpu/kernel_args.h"

namespace hal::gpu_test {

namespace kp = kernel_params;

static_assert(std::is_trivially_copyable_v<kp::GemmDecodeParams> && std::is_standard_layout_v<kp::GemmDecodeParams>);
static_assert(std::is_trivially_copyable_v<kp::GemmDecodeReduceParams> &&
              std::is_standard_layout_v<kp::GemmDecodeReduceParams>);

namespace {

// A plain decode call: op(A) [m, k] row-major, B stored [n, k] (trans_b), 16-byte aligned.
kp::GemmParams decode_call(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1) {
  kp::GemmParams p{};
  p.m = m;
  p.n = n;
  p.k = k;
  p.batch = batch;
  p.a_m_stride = k;
  p.a_k_stride = 1;
  p.a_batch_stride = batch > 1 ? m * k : 0;
  p.b_k_stride = 1;
  p.b_n_stride = k;
  p.b_batch_stride = 0;
  p.ab_type = 2;  // bf16
  p.c_type = 2;
  p.a_vec8 = p.b_vec8 = (k % 8 == 0) ? 1 : 0;
  p.alpha = 1.0f;
  return p;
}

// Small integers: every product and partial sum is exact in fp32, so any
// summation order gives the exact result and the emulation must equal it.
std::vector<float> small_ints(std::int64_t count, std::uint64_t seed) {
  std::vector<float> v(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>((i * 7 + seed * 13) % 9) - 4.0f;
  return v;
}

std::vector<double> reference(std::int64_t m, std::int64_t n, std::int64_t k, const std::vector<float>& a,
                              const std::vector<float>& b) {
  std::vector<double> c(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::int64_t x = 0; x < k; ++x) s += double{a[static_cast<std::size_t>(i * k + x)]} * b[static_cast<std::size_t>(j * k + x)];
      c[static_cast<std::size_t>(i * n + j)] = s;
    }
  return c;
}

}  // namespace

TEST(GpuGemmDecodePlan, QualifiesOnlySmallMWithAlignedKContiguousHalfOperands) {
  EXPECT_TRUE(gpu::plan_decode_gemm(decode_call(1, 4096, 4096), 132, kp::kDecodeCudaTileM, 8).ok);
  EXPECT_TRUE(gpu::plan_decode_gemm(decode_call(64, 4096, 4096), 132, kp::kDecodeCudaTileM, 8).ok);
  const gpu::DecodeGemmPlan big = gpu::plan_decode_gemm(decode_call(65, 4096, 4096), 132, kp::kDecodeCudaTileM, 8);
  EXPECT_FALSE(big.ok);
  EXPECT_NE(big.why.find("m = 65"), std::string::npos) << big.why;
  kp::GemmParams p = decode_call(16, 512, 512);
  p.b_vec8 = 0;  // B stored [K, N]
  EXPECT_NE(gpu::plan_decode_gemm(p, 132, 8, 8).why.find("op(B)"), std::string::npos);
  p = decode_call(16, 512, 512);
  p.ab_type = 0;  // f32
  EXPECT_FALSE(gpu::plan_decode_gemm(p, 132, 8, 8).ok);
  EXPECT_FALSE(gpu::plan_decode_gemm(decode_call(4, 64, 12), 132, 8, 8).ok);  // K % 8 != 0
}

TEST(GpuGemmDecodePlan, TakesModelWeightsStoredNByKFromARealCall) {
  // The packing of ops::gemm's call (kernel_args.cpp) decides the vec8 flags
  // the plan reads: A [4, 64] with B stored [32, 64] (trans_b) qualifies,
  // B stored [64, 32] (N-contiguous) and an unaligned A do not.
  alignas(16) static std::uint16_t a_storage[4 * 64 + 8], b_storage[32 * 64];
  GemmCall c;
  c.a = Tensor::contiguous(a_storage, nullptr, DType::bf16, Shape{4, 64});
  c.b = Tensor::contiguous(b_storage, nullptr, DType::bf16, Shape{32, 64});
  c.c = Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{4, 32});
  c.trans_b = true;
  EXPECT_TRUE(gpu::plan_decode_gemm(gpu::gemm_params(c), 132, 8, 8).ok);
  c.a.offset = 1;
  EXPECT_FALSE(gpu::plan_decode_gemm(gpu::gemm_params(c), 132, 8, 8).ok);
  c.a.offset = 0;
  c.b = Tensor::contiguous(b_storage, nullptr, DType::bf16, Shape{64, 32});
  c.trans_b = false;
  EXPECT_FALSE(gpu::plan_decode_gemm(gpu::gemm_params(c), 132, 8, 8).ok);
}

TEST(GpuGemmDecodePlan, VariantIsThePowerOfTwoOfMTiles) {
  const auto tiles = [](std::int64_t m, int tile_m, int max) {
    return gpu::plan_decode_gemm(decode_call(m, 256, 256), 132, tile_m, max).m_tiles;
  };
  EXPECT_EQ(tiles(1, 8, 8), 1);
  EXPECT_EQ(tiles(8, 8, 8), 1);
  EXPECT_EQ(tiles(9, 8, 8), 2);
  EXPECT_EQ(tiles(17, 8, 8), 4);
  EXPECT_EQ(tiles(33, 8, 8), 8);
  EXPECT_EQ(tiles(16, 16, 4), 1);
  EXPECT_EQ(tiles(17, 16, 4), 2);
  EXPECT_EQ(tiles(64, 16, 4), 4);
  EXPECT_FALSE(gpu::plan_decode_gemm(decode_call(33, 256, 256), 132, 8, 4).ok);
}

TEST(GpuGemmDecodePlan, SplitsCoverKExactlyAndFillTheDevice) {
  for (int sms : {1, 8, 108, 132, 304})
    for (std::int64_t n : {16, 1000, 4096, 14336})
      for (std::int64_t k : {8, 256, 1000, 4096, 14336}) {
        const gpu::DecodeGemmPlan plan = gpu::plan_decode_gemm(decode_call(1, n, k), sms, 8, 8);
        ASSERT_TRUE(plan.ok) << plan.why;
        EXPECT_EQ(plan.k_per_split % kp::kDecodeBlockK, 0);
        EXPECT_GE(plan.splits * plan.k_per_split, k);                 // covers K
        EXPECT_LT((plan.splits - 1) * plan.k_per_split, k);           // no empty split
        EXPECT_EQ(plan.units, plan.n_tiles * plan.splits);
        EXPECT_EQ(plan.ctas * kp::kDecodeWarpsPerCta >= plan.units, true);
        EXPECT_EQ(plan.workspace_floats, plan.splits * n);
        // Enough units for the device, unless K is too short to split further.
        if (plan.units < std::int64_t{sms} * 16) {
          EXPECT_LT(plan.k_per_split, 2 * 8 * kp::kDecodeBlockK) << "n " << n << " k " << k << " sms " << sms;
        }
      }
  // The H200 case of issue 24: M = 1, N = K = 4096 on 132 SMs.
  const gpu::DecodeGemmPlan h200 = gpu::plan_decode_gemm(decode_call(1, 4096, 4096), 132, 8, 8);
  EXPECT_EQ(h200.n_tiles, 256);
  EXPECT_EQ(h200.splits, 9);  // ceil(2112 / 256) = 9 splits of ceil(128 / 9) = 15 blocks
  EXPECT_EQ(h200.k_per_split, 15 * 32);
}

TEST(GpuGemmDecodePlan, EmulatedKernelsCountEveryProductOnceForEveryPlan) {
  struct Shape {
    std::int64_t m, n, k;
  };
  for (bool cuda : {true, false})
    for (Shape s : {Shape{1, 17, 40}, Shape{5, 33, 264}, Shape{16, 16, 8}, Shape{9, 40, 520}, Shape{64, 20, 72},
                    Shape{33, 7, 1032}})
      for (int sms : {1, 3, 132}) {
        const int tile_m = cuda ? kp::kDecodeCudaTileM : kp::kDecodeHipTileM;
        gpu::DecodeGemmTuning tune;
        tune.min_blocks_per_split = 1;  // many splits even for short K
        const gpu::DecodeGemmPlan plan =
            gpu::plan_decode_gemm(decode_call(s.m, s.n, s.k), sms, tile_m, cuda ? 8 : 4, tune);
        ASSERT_TRUE(plan.ok) << plan.why;
        const auto a = small_ints(s.m * s.k, 1), b = small_ints(s.n * s.k, 2);
        const std::vector<double> want = reference(s.m, s.n, s.k, a, b);
        std::vector<float> partial;
        const std::vector<float> got = gpu::emulate_decode_gemm(plan, cuda, s.m, s.n, s.k, a, b, &partial);
        for (std::size_t i = 0; i < got.size(); ++i)
          ASSERT_EQ(double{got[i]}, want[i]) << (cuda ? "cuda" : "hip") << " m " << s.m << " n " << s.n << " k "
                                             << s.k << " splits " << plan.splits << " at " << i;
        for (float v : partial) ASSERT_FALSE(std::isnan(v)) << "a partial the kernel never writes";
      }
}

TEST(GpuGemmDecodePlan, FixedSplitOrderIsBitwiseStableAndWithinTheBound) {
  const std::int64_t m = 3, n = 48, k = 4096;
  std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(n * k));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(std::sin(0.37 * double(i)));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(std::cos(0.11 * double(i)));
  const std::vector<double> want = reference(m, n, k, a, b);
  for (int sms : {1, 132}) {
    const gpu::DecodeGemmPlan plan = gpu::plan_decode_gemm(decode_call(m, n, k), sms, 8, 8);
    ASSERT_TRUE(plan.ok);
    const std::vector<float> first = gpu::emulate_decode_gemm(plan, true, m, n, k, a, b);
    const std::vector<float> again = gpu::emulate_decode_gemm(plan, true, m, n, k, a, b);
    for (std::size_t i = 0; i < first.size(); ++i) {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(first[i]), std::bit_cast<std::uint32_t>(again[i]));
      // Higham's gamma_K bound on sum |a||b| (|a|, |b| <= 1): K * u * K.
      EXPECT_LE(std::abs(double{first[i]} - want[i]), double(k) * 0x1p-24 * double(k)) << i;
    }
  }
}

}  // namespace hal::gpu_test
