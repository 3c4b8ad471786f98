// Memory, streams and events of the cuda device.
#include <gtest/gtest.h>

#include "cuda_test_util.h"
#include "hal/error.h"

namespace hal::cuda_test {

TEST(CudaRuntime, CopiesRoundTripAndMemsetStaysInBounds) {
  HAL_REQUIRE_CUDA();
  Device& dev = *cuda_device();
  Stream s(dev);
  const std::size_t n = 100003;  // not a multiple of anything
  std::vector<unsigned char> src(n);
  for (std::size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i * 7 + 3);
  Buffer a(dev, n), b(dev, n + 64);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % 256, 0u);
  s.copy_from_host(a.data(), src.data(), n);
  s.memset(b.data(), 0x5A, n + 64);
  s.copy_on_device(b.data(), a.data(), n);
  s.memset(static_cast<unsigned char*>(b.data()) + 10, 0, 5);
  std::vector<unsigned char> back(n + 64);
  s.copy_to_host(back.data(), b.data(), n + 64);
  s.synchronize();
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char want = (i >= 10 && i < 15) ? 0 : src[i];
    ASSERT_EQ(back[i], want) << "byte " << i;
  }
  for (std::size_t i = n; i < n + 64; ++i) ASSERT_EQ(back[i], 0x5A) << "guard byte " << i - n;
}

TEST(CudaRuntime, ZeroByteAllocationsAreDistinct) {
  HAL_REQUIRE_CUDA();
  Buffer a(*cuda_device(), 0), b(*cuda_device(), 0);
  EXPECT_NE(a.data(), nullptr);
  EXPECT_NE(a.data(), b.data());
}

TEST(CudaRuntime, EventsOrderStreamsAndMeasureTime) {
  HAL_REQUIRE_CUDA();
  Device& dev = *cuda_device();
  Stream s1(dev), s2(dev);
  Event start(dev), done(dev);
  const std::size_t n = 1 << 24;
  Buffer a(dev, n), b(dev, n);
  s1.record(start);
  s1.memset(a.data(), 0x11, n);
  s1.record(done);
  s2.wait(done);  // s2's copy must see s1's memset
  s2.copy_on_device(b.data(), a.data(), n);
  std::vector<unsigned char> back(n);
  s2.copy_to_host(back.data(), b.data(), n);
  s2.synchronize();
  EXPECT_EQ(back[0], 0x11);
  EXPECT_EQ(back[n - 1], 0x11);
  done.synchronize();
  const double ms = done.elapsed_ms_since(start);
  EXPECT_GE(ms, 0.0);
  EXPECT_LT(ms, 10000.0);
}

TEST(CudaRuntime, HugeAllocationThrowsOutOfMemory) {
  HAL_REQUIRE_CUDA();
  try {
    Buffer huge(*cuda_device(), std::size_t{1} << 50);
    FAIL() << "allocating 1 PiB succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::out_of_memory) << e.what();
    EXPECT_NE(std::string(e.what()).find("cuMemAlloc"), std::string::npos) << e.what();
  }
}

}  // namespace hal::cuda_test
