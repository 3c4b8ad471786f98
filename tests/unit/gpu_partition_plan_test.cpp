// GPU partitions' host logic (backends/gpu/partition_plan.h), on the CPU: the
// "driver lacks the symbol -> unsupported" path with fake entry-point tables,
// the SM granularity by architecture, and HIP's CU masks across XCDs.
#include <gtest/gtest.h>

#include <cstdlib>

#include <string>
#include <vector>

#include "backends/gpu/partition_plan.h"
#include "hal/error.h"

using namespace hal;
using namespace hal::gpu;

namespace {

int dummy_fn = 0;
const void* present = &dummy_fn;

EntryPoints green_table(const void* create) {
  return {{"cuDeviceGetDevResource", present}, {"cuDevSmResourceSplitByCount", present},
          {"cuDevResourceGenerateDesc", present}, {"cuGreenCtxCreate", create},
          {"cuGreenCtxStreamCreate", present}, {"cuGreenCtxDestroy", present}};
}

int popcount(const std::vector<std::uint32_t>& m) {
  int n = 0;
  for (std::uint32_t w : m) n += __builtin_popcount(w);
  return n;
}

}  // namespace

TEST(GpuPartitionPlan, DriverWithoutGreenContextsIsUnsupportedNamingTheSymbol) {
  const PartitionSupport s = green_context_support(green_table(nullptr), 12020, 9, 132);
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("12.4+"), std::string::npos) << s.reason;
  EXPECT_NE(s.reason.find("(12.2) lacks cuGreenCtxCreate"), std::string::npos) << s.reason;
  EXPECT_EQ(s.unit, "SMs");
}

TEST(GpuPartitionPlan, GreenContextGranularityFollowsTheArchitecture) {
  const PartitionSupport h100 = green_context_support(green_table(present), 13000, 9, 132);
  EXPECT_TRUE(h100.supported) << h100.reason;
  EXPECT_EQ(h100.granularity, 8);
  EXPECT_EQ(h100.max_units, 132);
  const PartitionSupport a100 = green_context_support(green_table(present), 12040, 8, 108);
  EXPECT_TRUE(a100.supported);
  EXPECT_EQ(a100.granularity, 4);
  const PartitionSupport v100 = green_context_support(green_table(present), 12040, 7, 80);
  EXPECT_FALSE(v100.supported);
  EXPECT_NE(v100.reason.find("sm_80 or later"), std::string::npos) << v100.reason;
}

TEST(GpuPartitionPlan, XcdCountOfMi300xAndSingleDieParts) {
  EXPECT_EQ(xcd_count("gfx942", 304), 8);   // MI300X
  EXPECT_EQ(xcd_count("gfx942", 228), 6);   // MI300A
  EXPECT_EQ(xcd_count("gfx90a", 110), 1);   // one MI250X GCD
  EXPECT_EQ(xcd_count("gfx942", 80), 1);    // not a whole number of 38-CU XCDs: no spreading assumed
}

TEST(GpuPartitionPlan, CuMaskSupportGranularityIsTheXcdCount) {
  const PartitionSupport s = cu_mask_support({{"hipExtStreamCreateWithCUMask", present}}, "gfx942", 304);
  EXPECT_TRUE(s.supported);
  EXPECT_EQ(s.granularity, 8);
  EXPECT_EQ(s.max_units, 304);
  const PartitionSupport none = cu_mask_support({{"hipExtStreamCreateWithCUMask", nullptr}}, "gfx942", 304);
  EXPECT_FALSE(none.supported);
  EXPECT_NE(none.reason.find("lacks hipExtStreamCreateWithCUMask"), std::string::npos) << none.reason;
}

TEST(GpuPartitionPlan, CuMasksAreDisjointAndSpreadEvenlyOverXcds) {
  // MI300X: 304 CUs on 8 XCDs; 272 for compute, 32 for communication.
  const auto masks = build_cu_masks({272, 32}, 304, 8);
  ASSERT_EQ(masks.size(), 2u);
  ASSERT_EQ(masks[0].size(), 10u);  // ceil(304 / 32) words
  EXPECT_EQ(popcount(masks[0]), 272);
  EXPECT_EQ(popcount(masks[1]), 32);
  for (std::size_t w = 0; w < masks[0].size(); ++w) EXPECT_EQ(masks[0][w] & masks[1][w], 0u) << "word " << w;
  for (int xcd = 0; xcd < 8; ++xcd) {
    EXPECT_EQ(cus_on_xcd(masks[0], 8, xcd), 34) << "xcd " << xcd;
    EXPECT_EQ(cus_on_xcd(masks[1], 8, xcd), 4) << "xcd " << xcd;
  }
  // No bit beyond the device's CUs.
  EXPECT_EQ(masks[0][9] >> 16, 0u);
  EXPECT_EQ(masks[1][9] >> 16, 0u);
}

TEST(GpuPartitionPlan, CuMaskRefusalsNameExpectedAndGiven) {
  const auto message = [](const std::vector<int>& units) {
    try {
      build_cu_masks(units, 304, 8);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      return std::string(e.what());
    }
    return std::string();
  };
  std::string e = message({284, 20});  // DeepSeek's 20 is not a multiple of 8 XCDs
  EXPECT_NE(e.find("multiples of 8"), std::string::npos) << e;
  EXPECT_NE(e.find("[284, 20]"), std::string::npos) << e;
  e = message({296, 16});
  EXPECT_NE(e.find("at most 304 CUs"), std::string::npos) << e;
  EXPECT_NE(e.find("sum 312"), std::string::npos) << e;
  EXPECT_NE(message({}).find("at least one partition"), std::string::npos);
  EXPECT_NE(message({0, 8}).find("positive"), std::string::npos);
}

TEST(GpuPartitionPlan, NeverRunPartitionsAreDeclinedUnlessTheSwitchIsOn) {
  const char* old = std::getenv("HAL_GPU_UNVERIFIED");
  const std::string saved = old ? old : "";
  const PartitionSupport s = green_context_support(green_table(present), 13000, 9, 132);
  ASSERT_TRUE(s.supported);
  unsetenv("HAL_GPU_UNVERIFIED");
  const PartitionSupport off = unless_unverified_enabled(s);
  EXPECT_FALSE(off.supported);
  EXPECT_NE(off.reason.find("never run on a GPU, set HAL_GPU_UNVERIFIED=1"), std::string::npos) << off.reason;
  EXPECT_EQ(off.granularity, 8);  // still reported by `hal devices`
  setenv("HAL_GPU_UNVERIFIED", "1", 1);
  const PartitionSupport on = unless_unverified_enabled(s);
  EXPECT_TRUE(on.supported);
  EXPECT_EQ(on.reason, s.reason);
  // An unsupported answer stays unsupported with its own reason.
  const PartitionSupport none = unless_unverified_enabled(green_context_support(green_table(nullptr), 12020, 9, 132));
  EXPECT_FALSE(none.supported);
  EXPECT_NE(none.reason.find("lacks cuGreenCtxCreate"), std::string::npos);
  if (old) setenv("HAL_GPU_UNVERIFIED", saved.c_str(), 1);
  else unsetenv("HAL_GPU_UNVERIFIED");
}
