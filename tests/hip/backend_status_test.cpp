// Runs without a GPU: the hip backend is compiled in and, on a machine
// without the runtime or a device, reports itself unavailable with a reason.
#include <gtest/gtest.h>

#include "backends/hip/hip_driver.h"
#include "hip_test_util.h"

namespace hal::hip_test {

TEST(HipHost, ReportsWhyItIsUnavailableWithoutAGpu) {
  if (hip_device() != nullptr) GTEST_SKIP() << "a hip device is present";
  bool found = false;
  for (const BackendStatus& b : backends()) {
    if (b.name != "hip") continue;
    found = true;
    EXPECT_FALSE(b.available);
    EXPECT_FALSE(b.reason.empty());
    EXPECT_EQ(b.device_count, 0);
  }
  EXPECT_TRUE(found) << "the hip backend is not listed by hal::backends()";
  for (Device* d : devices()) EXPECT_NE(d->info().backend, "hip");
}

TEST(HipHost, MissingRuntimeLibraryNamesEveryLibraryTried) {
  hip::Driver d{};
  std::string error;
  EXPECT_FALSE(hip::load_driver({"libhal_no_such_runtime.so", "libhal_no_such_runtime.so.6"}, d, error));
  EXPECT_NE(error.find("libhal_no_such_runtime.so:"), std::string::npos) << error;
  EXPECT_NE(error.find("libhal_no_such_runtime.so.6"), std::string::npos) << error;
  EXPECT_EQ(d.hipInit, nullptr);
}

TEST(HipHost, LibraryWithoutTheApiIsRejectedNamingTheMissingEntryPoint) {
  // libm is always present and exports none of the HIP entry points.
  hip::Driver d{};
  std::string error;
  EXPECT_FALSE(hip::load_driver({"libm.so.6"}, d, error));
  EXPECT_NE(error.find("libm.so.6 lacks hipInit"), std::string::npos) << error;
}

TEST(HipDevice, DescribesTheDevice) {
  HAL_REQUIRE_HIP();
  const DeviceInfo& info = hip_device()->info();
  EXPECT_EQ(info.backend, "hip");
  EXPECT_EQ(info.warp_size, 64);
  EXPECT_GT(info.compute_units, 0);
  EXPECT_GT(info.memory_bytes, 0u);
  EXPECT_EQ(info.arch.rfind("gfx", 0), 0u) << info.arch;
  EXPECT_FALSE(info.model.empty());
}

}  // namespace hal::hip_test
