// The fp8 GEMM contract's block-sum precision per backend
// (conformance/fp8_accumulator.h, docs/accuracy.md "Scaled FP8"): the
// closed forms, which device gets which, and the fused-adder bound checked
// against a simulation of the accumulator it models (FP8 wgmma as DeepSeek-V3
// describes it: terms aligned to the largest exponent and truncated to 14
// bits, the sum truncated to 14 significant bits, 32 products per
// instruction, the accumulator carried over the block's 4 instructions).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <random>
#include <vector>

#include "conformance/fp8_accumulator.h"
#include "conformance/oracle.h"
#include "conformance/registry.h"
#include "hal/registry.h"
#include "hal/dtype.h"

namespace hal::conformance {
void register_builtin_backend_entries();  // backends_builtin.cpp: re-registering replaces the entries
}  // namespace hal::conformance

namespace {

using hal::conformance::Fp8BlockSumModel;
using hal::conformance::fp8_block_sum_model;
using hal::conformance::kFp8BlockSumFp32;
using hal::conformance::kFp8BlockSumWgmma;

TEST(Fp8BlockSumModel, ClosedForms) {
  const double u32 = 0x1p-24, uw = 0x1p-13;
  EXPECT_DOUBLE_EQ(kFp8BlockSumFp32.block_gamma(128), 128 * u32 / (1 - 128 * u32));
  // 128 products in 4 instructions: 128 + 2 * 4 - 1 = 135 unit errors.
  EXPECT_DOUBLE_EQ(kFp8BlockSumWgmma.block_gamma(128), 135 * uw / (1 - 135 * uw));
  // A ragged last block of 44: 2 instructions, 44 + 3 = 47.
  EXPECT_DOUBLE_EQ(kFp8BlockSumWgmma.block_gamma(44), 47 * uw / (1 - 47 * uw));
  EXPECT_GT(kFp8BlockSumWgmma.block_gamma(128), 1000 * kFp8BlockSumFp32.block_gamma(128));
  EXPECT_LT(kFp8BlockSumWgmma.block_gamma(128), 0.02);
}

TEST(Fp8BlockSumModel, EachBackendGetsItsOwn) {
  EXPECT_EQ(fp8_block_sum_model("cpu").u, kFp8BlockSumFp32.u);
  EXPECT_EQ(fp8_block_sum_model("cuda:0").u, kFp8BlockSumWgmma.u);
  EXPECT_EQ(fp8_block_sum_model("cuda:0").products_per_step, 32);
  EXPECT_EQ(fp8_block_sum_model("hip:1").u, 0x1p-13);
  EXPECT_EQ(fp8_block_sum_model("cpu").products_per_step, 0);
}

// Truncation toward zero to a multiple of 2^e.
double truncate_to(double v, int e) { return std::trunc(std::ldexp(v, -e)) * std::ldexp(1.0, e); }
int exponent_of(double v) { return std::ilogb(v); }

// One block through the modelled accumulator (kept bits = 14).
double simulated_block(const std::vector<double>& products) {
  constexpr int kKept = 14;
  double acc = 0.0;
  for (std::size_t i0 = 0; i0 < products.size(); i0 += 32) {
    std::vector<double> terms(products.begin() + static_cast<long>(i0),
                              products.begin() + static_cast<long>(std::min(products.size(), i0 + 32)));
    if (i0 > 0) terms.push_back(acc);  // scale_d = 0 for the first instruction
    double biggest = 0;
    for (double t : terms) biggest = std::max(biggest, std::fabs(t));
    if (biggest == 0) {
      acc = 0;
      continue;
    }
    const int e = exponent_of(biggest) - (kKept - 1);
    double sum = 0;
    for (double t : terms) sum += truncate_to(t, e);  // exact in double (few bits)
    acc = sum == 0 ? 0 : truncate_to(sum, exponent_of(std::fabs(sum)) - (kKept - 1));
  }
  return acc;
}

TEST(Fp8BlockSumModel, FusedBoundHoldsForTheSimulatedWgmmaAccumulator) {
  std::mt19937 rng(7);
  std::vector<double> e4m3;
  for (int b = 0; b < 256; ++b) {
    const double v = hal::f8e4m3_to_f32(static_cast<std::uint8_t>(b));
    if (std::isfinite(v)) e4m3.push_back(v);
  }
  std::uniform_int_distribution<std::size_t> pick(0, e4m3.size() - 1);
  double worst = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const std::size_t l = trial % 4 == 0 ? 44 : 128;
    std::vector<double> products(l);
    for (std::size_t k = 0; k < l; ++k) products[k] = e4m3[pick(rng)] * e4m3[pick(rng)];
    if (trial % 3 == 0) products[trial % l] = 448.0 * 448.0;  // one huge term truncates all the others
    if (trial % 5 == 0)
      for (std::size_t k = 0; k < l; ++k) products[k] = std::fabs(products[k]);  // no cancellation
    double exact = 0, abs_sum = 0;
    for (double p : products) exact += p, abs_sum += std::fabs(p);  // exact: few bits, wide range fits f64
    const double err = std::fabs(simulated_block(products) - exact);
    const double bound = kFp8BlockSumWgmma.block_gamma(static_cast<std::int64_t>(l)) * abs_sum;
    ASSERT_LE(err, bound) << "trial " << trial;
    worst = std::max(worst, err / bound);
  }
  // The bound is not vacuous: the simulation comes within a factor of ~20 of it.
  EXPECT_GT(worst, 0.05);
}

// The GPU backends' fp8 cases are listed unsupported unless the unverified
// switch is on, and then run (the suite reads the switch when it registers).
TEST(Fp8GpuCases, UnsupportedOnlyWhileTheUnverifiedSwitchIsOff) {
  const char* v = std::getenv("HAL_GPU_UNVERIFIED");
  const std::optional<std::string> saved = v ? std::optional<std::string>(v) : std::nullopt;
  const auto listed = [](const char* device, const char* case_name) {
    const auto* entry = hal::conformance::backend_entry_for(device);
    return entry != nullptr ? hal::conformance::match_case(entry->unsupported, case_name) : nullptr;
  };
  unsetenv("HAL_GPU_UNVERIFIED");
  hal::conformance::register_builtin_backend_entries();
  for (const char* dev : {"cuda:0", "hip:0"}) {
    const auto* why = listed(dev, "gemm_fp8/f8e4m3/m1");
    ASSERT_NE(why, nullptr) << dev;
    EXPECT_NE(why->reason.find("HAL_GPU_UNVERIFIED=1"), std::string::npos) << why->reason;
    EXPECT_NE(listed(dev, "gemm_fp8_grouped/f8e4m3fnuz/empty"), nullptr);
    EXPECT_NE(listed(dev, "quantize_fp8/f8e4m3/tensor"), nullptr);
  }
  setenv("HAL_GPU_UNVERIFIED", "1", 1);
  hal::conformance::register_builtin_backend_entries();
  for (const char* dev : {"cuda:0", "hip:0"}) {
    EXPECT_EQ(listed(dev, "gemm_fp8/f8e4m3/m1"), nullptr) << dev;
    EXPECT_EQ(listed(dev, "dequantize_fp8/f8e5m2/1x128"), nullptr) << dev;
    EXPECT_NE(listed(dev, "cast/f8e4m3fnuz/x"), nullptr) << dev;  // FNUZ casts still have no GPU kernel
  }
  if (saved) setenv("HAL_GPU_UNVERIFIED", saved->c_str(), 1);
  else unsetenv("HAL_GPU_UNVERIFIED");
  hal::conformance::register_builtin_backend_entries();
}

// The device's model reaches the gemm_fp8 bound: the same call scored for a
// cuda device gets the wgmma bound, 2 * gamma_blk(128) * sum|a b| when the
// output rounding is negligible (f32 C).
TEST(Fp8BlockSumModel, ReferencesCarryTheDevicesBound) {
  hal::Device& cpu = hal::device("cpu");
  constexpr int k = 128;
  std::vector<std::uint8_t> a(k, hal::f32_to_f8e4m3(1.0f)), b(k, hal::f32_to_f8e4m3(-2.0f));
  std::vector<float> sa = {0.5f}, sb = {0.25f}, c(1);
  hal::GemmFp8Call g;
  g.a = hal::Tensor::contiguous(a.data(), &cpu, hal::DType::f8e4m3, {1, k});
  g.b = hal::Tensor::contiguous(b.data(), &cpu, hal::DType::f8e4m3, {1, k});
  g.a_scales = hal::Tensor::contiguous(sa.data(), &cpu, hal::DType::f32, {1, 1});
  g.b_scales = hal::Tensor::contiguous(sb.data(), &cpu, hal::DType::f32, {1, 1});
  g.c = hal::Tensor::contiguous(c.data(), &cpu, hal::DType::f32, {1, 1});
  const auto cpu_ref = hal::conformance::compute_references(g);
  const auto gpu_ref = hal::conformance::compute_references(g, fp8_block_sum_model("cuda:0"));
  ASSERT_EQ(gpu_ref.at(0).values.at(0), 0.5 * 0.25 * -2.0 * k);  // the oracle is the same
  const double s = 0.5 * 0.25 * 2.0 * k;                          // sum of |scaled products|
  EXPECT_NEAR(gpu_ref[0].bounds[0], 2 * kFp8BlockSumWgmma.block_gamma(k) * s, 0.01 * gpu_ref[0].bounds[0]);
  EXPECT_GT(gpu_ref[0].bounds[0], 1000 * cpu_ref.at(0).bounds.at(0));
}

}  // namespace
