// Host-side tests of hip_status.cpp (hipError_t -> hal::Error, target IDs)
// and of the target-ID helpers of hip_device.cpp. No GPU needed.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "backends/hip/hip_device.h"
#include "backends/hip/hip_status.h"
#include "hal/error.h"

namespace hal::hip_test {

namespace {
Error thrown(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no hal::Error thrown";
  return Error(ErrorCode::io_error, "none");
}
}  // namespace

TEST(HipHost, SuccessDoesNotThrow) { EXPECT_NO_THROW(hip::check(hipSuccess, "hip:0", "hipMalloc(1 bytes)")); }

TEST(HipHost, OutOfMemoryBecomesOutOfMemoryNamingDeviceAndCall) {
  const Error e = thrown([] { hip::check(hipErrorOutOfMemory, "hip:3", "hipMalloc(1024 bytes)"); });
  EXPECT_EQ(e.code(), ErrorCode::out_of_memory);
  const std::string m = e.what();
  EXPECT_EQ(m.rfind("hip:3: hipMalloc(1024 bytes) failed: ", 0), 0u) << m;
}

TEST(HipHost, OtherFailuresBecomeDeviceErrors) {
  EXPECT_EQ(hip::error_code_for(hipErrorInvalidValue), ErrorCode::device_error);
  EXPECT_EQ(hip::error_code_for(hipErrorLaunchFailure), ErrorCode::device_error);
  EXPECT_EQ(hip::error_code_for(hipErrorNoBinaryForGpu), ErrorCode::unsupported);
  const Error e = thrown([] { hip::check(hipErrorLaunchFailure, "hip:0", "hipStreamSynchronize"); });
  EXPECT_EQ(e.code(), ErrorCode::device_error);
}

TEST(HipHost, ModuleLoadFailureNamesDeviceTargetAndBundleTargets) {
  const Error e = thrown([] {
    hip::check_module_load(hipErrorNoBinaryForGpu, "hip:0", "gemm_mfma", "gfx942:sramecc+:xnack-", "gfx90a,gfx940");
  });
  const std::string m = e.what();
  EXPECT_EQ(e.code(), ErrorCode::unsupported);
  EXPECT_NE(m.find("gemm_mfma.hipfb"), std::string::npos) << m;
  EXPECT_NE(m.find("gfx942:sramecc+:xnack-"), std::string::npos) << m;
  EXPECT_NE(m.find("[gfx90a,gfx940]"), std::string::npos) << m;
}

TEST(HipHost, TargetIdCompatibility) {
  EXPECT_TRUE(hip::target_compatible("gfx942:sramecc+:xnack-", "gfx942"));
  EXPECT_TRUE(hip::target_compatible("gfx942:sramecc+:xnack-", "gfx942:xnack-"));
  EXPECT_FALSE(hip::target_compatible("gfx942:sramecc+:xnack-", "gfx942:xnack+"));
  EXPECT_FALSE(hip::target_compatible("gfx942:sramecc+:xnack-", "gfx940"));  // different processor
  EXPECT_FALSE(hip::target_compatible("gfx90a:sramecc+:xnack-", "gfx908"));
  EXPECT_TRUE(hip::target_compatible("gfx90a", "gfx90a"));
}

TEST(HipHost, MissingCodeObjectReasonNamesBothSides) {
  EXPECT_EQ(hip::missing_code_object_reason("gfx940:sramecc+:xnack-", "gfx90a,gfx940"), "");
  const std::string r = hip::missing_code_object_reason("gfx942:sramecc+:xnack-", "gfx90a,gfx940");
  EXPECT_NE(r.find("gfx942:sramecc+:xnack-"), std::string::npos) << r;
  EXPECT_NE(r.find("gfx90a,gfx940"), std::string::npos) << r;
}

TEST(HipHost, TargetIdIsFoundInPropertiesOfUnknownLayout) {
  std::string props(1024, '\0');
  props.replace(0, 19, "AMD Instinct MI300X");
  props.replace(600, 22, "gfx942:sramecc+:xnack-");
  EXPECT_EQ(hip::extract_target_id(props), "gfx942:sramecc+:xnack-");
  std::string none(256, '\0');
  none.replace(10, 9, "xgfx90a12");  // not at the start of a string
  EXPECT_EQ(hip::extract_target_id(none), "");
}

}  // namespace hal::hip_test
