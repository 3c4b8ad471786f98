// Runs without a GPU: the cuda backend is compiled in and, on a machine
// without a driver or device, reports itself unavailable with a reason.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "backends/cuda/cuda_fatbins.h"
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

// The kernel names scanned from each source are what ModuleCache looks in
// first; a source whose kernels escape the scan (a name pasted together in a
// macro) makes every lookup of them load every fatbin.
TEST(CudaBackend, EveryKernelFileIsEmbeddedWithTheKernelsItDeclares) {
  const auto fatbins = cuda::embedded_fatbins();
  ASSERT_GE(fatbins.size(), 10u);
  bool has_gemm = false;
  for (const auto& f : fatbins) {
    SCOPED_TRACE(f.file);
    EXPECT_GT(f.size, 0u);
    EXPECT_NE(f.kernels[0], nullptr) << "no extern \"C\" kernel found in the source";
    if (std::string(f.file) == "gemm_sm80") has_gemm = true;
  }
  EXPECT_TRUE(has_gemm);
}

}  // namespace hal::cuda_test
