// Host-side tests of the HIP launch geometry (hip_kernel_args.h) and of the
// embedded code-object table. No GPU. The argument packing both backends
// share is tested in tests/unit/gpu_kernel_args_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "backends/hip/hip_code_objects.h"
#include "backends/hip/hip_kernel_args.h"

namespace hal::hip_test {

TEST(HipHost, GridStrideShapeCoversWorkWithinEightWorkgroupsPerCu) {
  const hip::LaunchShape small = hip::grid_stride_shape(1000, 304);
  EXPECT_EQ(small.block[0], 256u);
  EXPECT_EQ(small.grid[0], 4u);  // ceil(1000 / 256)
  const hip::LaunchShape big = hip::grid_stride_shape(std::int64_t{1} << 30, 304);
  EXPECT_EQ(big.grid[0], 304u * 8u);
  EXPECT_EQ(hip::grid_stride_shape(0, 304).grid[0], 1u);
}

TEST(HipHost, EveryKernelFileIsEmbeddedForEveryBuiltTarget) {
  const auto objects = hip::embedded_code_objects();
  ASSERT_GE(objects.size(), 10u);
  bool has_gemm = false;
  for (const auto& o : objects) {
    SCOPED_TRACE(o.file);
    ASSERT_GT(o.size, 24u);
    EXPECT_EQ(std::memcmp(o.data, "__CLANG_OFFLOAD_BUNDLE__", 24), 0);
    EXPECT_NE(o.kernels[0], nullptr) << "no extern \"C\" kernel found in the source";
    // Every CMAKE_HIP_ARCHITECTURES entry (HAL_HIP_ARCHS, comma-separated) is in the bundle.
    const std::string built = HAL_HIP_ARCHS, held = std::string(",") + o.targets + ",";
    for (std::size_t start = 0; start < built.size();) {
      const std::size_t end = std::min(built.find(',', start), built.size());
      std::string needle(1, ',');  // ",gfx940," (built with append: GCC 12 warns falsely on "," + s)
      needle.append(built, start, end - start).push_back(',');
      EXPECT_NE(held.find(needle), std::string::npos) << o.targets;
      start = end + 1;
    }
    if (std::string(o.file) == "gemm_mfma") has_gemm = true;
  }
  EXPECT_TRUE(has_gemm);
}

}  // namespace hal::hip_test
