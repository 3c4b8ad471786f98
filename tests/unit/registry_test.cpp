// hal/registry.h: lookups, the HAL_DEVICE default and run-time registration.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "hal/error.h"
#include "hal/registry.h"
#include "unit/test_helpers.h"

namespace {

using hal::test::error_of;
using hal::test::contains;
using hal::test::InertDevice;

// Sets HAL_DEVICE for one scope and restores the previous value.
class ScopedHalDevice {
 public:
  explicit ScopedHalDevice(const char* value) {
    if (const char* old = std::getenv("HAL_DEVICE")) old_ = old;
    if (value) setenv("HAL_DEVICE", value, 1);
    else unsetenv("HAL_DEVICE");
  }
  ~ScopedHalDevice() {
    if (old_) setenv("HAL_DEVICE", old_->c_str(), 1);
    else unsetenv("HAL_DEVICE");
  }

 private:
  std::optional<std::string> old_;
};

// Registered once per process (the registry keeps devices until exit).
hal::Device& test_device() {
  static hal::Device& d = hal::register_device(std::make_unique<InertDevice>("regtest:0", "registry_test"), "regtest");
  return d;
}

TEST(Registry, CpuIsFirstAndFoundByName) {
  const auto devs = hal::devices();
  ASSERT_FALSE(devs.empty());
  hal::Device& cpu = hal::device("cpu");
  EXPECT_EQ(devs.front(), &cpu);
  EXPECT_EQ(cpu.name(), "cpu");
  EXPECT_EQ(cpu.info().backend, "cpu");
  EXPECT_TRUE(cpu.host_accessible());
  const auto statuses = hal::backends();
  ASSERT_FALSE(statuses.empty());
  EXPECT_EQ(statuses.front().name, "cpu");
  EXPECT_TRUE(statuses.front().available);
  EXPECT_GE(statuses.front().device_count, 1);
  // Each backend that is unavailable says why.
  for (const hal::BackendStatus& s : statuses) {
    if (!s.available) {
      EXPECT_FALSE(s.reason.empty()) << s.name;
    }
  }
}

TEST(Registry, UnknownNameListsAvailableDevices) {
  test_device();
  const std::string msg = error_of([] { hal::device("tpu:3"); });
  EXPECT_EQ(msg.rfind("hal::device: argument 'name'", 0), 0u) << msg;
  EXPECT_TRUE(contains(msg, "'tpu:3'")) << msg;
  EXPECT_TRUE(contains(msg, "cpu")) << msg;
  EXPECT_TRUE(contains(msg, "regtest:0")) << msg;
  error_of([] { hal::device(""); });
  error_of([] { hal::device("CPU"); });  // names are case-sensitive
}

TEST(Registry, RegisterDeviceAndDuplicates) {
  hal::Device& d = test_device();
  EXPECT_EQ(&hal::device("regtest:0"), &d);
  bool listed = false;
  for (hal::Device* p : hal::devices()) listed = listed || p == &d;
  EXPECT_TRUE(listed);
  bool backend_listed = false;
  for (const hal::BackendStatus& s : hal::backends()) {
    if (s.name == "regtest") {
      backend_listed = true;
      EXPECT_TRUE(s.available);
      EXPECT_GE(s.device_count, 1);
    }
  }
  EXPECT_TRUE(backend_listed);

  std::string msg =
      error_of([] { hal::register_device(std::make_unique<InertDevice>("regtest:0", "registry_test"), "regtest"); });
  EXPECT_EQ(msg.rfind("hal::register_device: argument 'device'", 0), 0u) << msg;
  EXPECT_TRUE(contains(msg, "regtest:0")) << msg;
  msg = error_of([] { hal::register_device(std::make_unique<InertDevice>("cpu", "registry_test"), "other"); });
  EXPECT_TRUE(contains(msg, "cpu")) << msg;
  error_of([] { hal::register_device(nullptr, "regtest"); });
  EXPECT_EQ(&hal::device("cpu"), hal::devices().front());  // the failed calls changed nothing
}

TEST(Registry, DefaultDeviceFollowsHalDeviceEnv) {
  hal::Device& reg = test_device();
  {
    ScopedHalDevice env(nullptr);
    EXPECT_EQ(&hal::default_device(), &hal::device("cpu"));
  }
  {
    ScopedHalDevice env("");
    EXPECT_EQ(&hal::default_device(), &hal::device("cpu"));
  }
  {
    ScopedHalDevice env("regtest:0");
    EXPECT_EQ(&hal::default_device(), &reg);
  }
  {
    ScopedHalDevice env("cuda:7");
    const std::string msg = error_of([] { hal::default_device(); });
    EXPECT_TRUE(contains(msg, "'cuda:7'")) << msg;
  }
}

TEST(Registry, ErrorCodeNames) {
  EXPECT_EQ(hal::error_code_name(hal::ErrorCode::invalid_argument), "invalid argument");
  EXPECT_EQ(hal::error_code_name(hal::ErrorCode::unsupported), "unsupported");
  try {
    hal::throw_unsupported("cuda", "softmax", "f8e4m3");
    FAIL() << "no throw";
  } catch (const hal::Error& e) {
    EXPECT_EQ(e.code(), hal::ErrorCode::unsupported);
    EXPECT_STREQ(e.what(), "cuda: softmax is not supported for f8e4m3");
  }
}

}  // namespace
