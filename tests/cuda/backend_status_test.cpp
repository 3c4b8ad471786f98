// Runs without a GPU: the cuda backend is compiled in and, on a machine
// without a driver or device, reports itself unavailable with a reason.
#include <gtest/gtest.h>

#include "cuda_test_util.h"

namespace hal::cuda_test {

TEST(CudaBackend, ReportsWhyItIsUnavailableWithoutAGpu) {
  if (cuda_device() != nullptr) GTEST_SKIP() << "a cuda device is present";
  bool found = false;
  for (const BackendStatus& b : backends()) {
    if (b.name != "cuda") continue;
    found = true;
    EXPECT_FALSE(b.available);
    EXPECT_FALSE(b.reason.empty());
    EXPECT_EQ(b.device_count, 0);
  }
  EXPECT_TRUE(found) << "the cuda backend is not listed by hal::backends()";
  for (Device* d : devices()) EXPECT_NE(d->info().backend, "cuda");
}

TEST(CudaBackend, DescribesTheDevice) {
  HAL_REQUIRE_CUDA();
  const DeviceInfo& info = cuda_device()->info();
  EXPECT_EQ(info.backend, "cuda");
  EXPECT_EQ(info.warp_size, 32);
  EXPECT_GT(info.compute_units, 0);
  EXPECT_GT(info.memory_bytes, 0u);
  EXPECT_EQ(info.arch.rfind("sm_", 0), 0u) << info.arch;
  EXPECT_FALSE(info.model.empty());
  EXPECT_GT(info.peak_fp32_tflops, 0.0);
  EXPECT_GT(info.peak_bandwidth_gbps, 0.0);
}

}  // namespace hal::cuda_test
