// Green-context partitions on a GPU (backends/cuda/cuda_partition.cpp). They
// have never run: skipped without a cuda device, and the GEMM test turns on
// HAL_GPU_UNVERIFIED=1 itself (the next GPU run verifies them). A GEMM on the
// compute partition's stream (its grid sized from the partition's SMs) must
// agree with the same GEMM on a plain stream, while a copy runs on the other.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda_test_util.h"
#include "hal/buffer.h"
#include "hal/error.h"
#include "hal/partition.h"
#include "ops/ops.h"

using namespace hal;

namespace {

struct ScopedUnverified {
  ScopedUnverified() { setenv("HAL_GPU_UNVERIFIED", "1", 1); }
  ~ScopedUnverified() { unsetenv("HAL_GPU_UNVERIFIED"); }
};

std::vector<float> gemm_bf16(Device& d, Stream& s, std::int64_t n) {
  Buffer a = Buffer::for_tensor(d, DType::bf16, Shape{n, n}), b = Buffer::for_tensor(d, DType::bf16, Shape{n, n});
  Buffer c = Buffer::for_tensor(d, DType::f32, Shape{n, n});
  const Tensor ta = Tensor::contiguous(a.data(), &d, DType::bf16, Shape{n, n});
  const Tensor tb = Tensor::contiguous(b.data(), &d, DType::bf16, Shape{n, n});
  const Tensor tc = Tensor::contiguous(c.data(), &d, DType::f32, Shape{n, n});
  ops::RandomOptions ra, rb;
  ra.seed = 1;
  rb.seed = 2;
  ops::fill_random(s, ta, ra);
  ops::fill_random(s, tb, rb);
  ops::gemm(s, ta, tb, tc);
  std::vector<float> host(static_cast<std::size_t>(n * n), -1.0f);
  s.download(host.data(), tc);
  s.synchronize();
  return host;
}

}  // namespace

TEST(CudaPartition, SupportIsReportedWithTheSwitchNamed) {
  HAL_REQUIRE_CUDA();
  unsetenv("HAL_GPU_UNVERIFIED");
  const PartitionSupport s = cuda_test::cuda_device()->partition_support();
  EXPECT_EQ(s.unit, "SMs");
  EXPECT_FALSE(s.supported);
  // Either the driver lacks green contexts, or they are declined until verified.
  EXPECT_TRUE(s.reason.find("HAL_GPU_UNVERIFIED=1") != std::string::npos ||
              s.reason.find("12.4+") != std::string::npos)
      << s.reason;
}

TEST(CudaPartition, SplitOffTheGranularityIsRefusedByName) {
  HAL_REQUIRE_CUDA();
  ScopedUnverified on;
  Device& d = *cuda_test::cuda_device();
  const PartitionSupport s = d.partition_support();
  if (!s.supported) GTEST_SKIP() << s.reason;
  try {
    partition(d, {s.max_units - s.granularity - 1, s.granularity + 1});
    FAIL() << "a count off the granularity was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("multiples of " + std::to_string(s.granularity)), std::string::npos)
        << e.what();
  }
}

TEST(CudaPartition, GemmOnComputePartitionMatchesPlainStreamBesideACopy) {
  HAL_REQUIRE_CUDA();
  ScopedUnverified on;
  Device& d = *cuda_test::cuda_device();
  const PartitionSupport s = d.partition_support();
  if (!s.supported) GTEST_SKIP() << s.reason;
  const int comm_units = 4 * s.granularity;  // 32 of 132 on an H100/H200
  const int compute_units = (s.max_units - comm_units) / s.granularity * s.granularity;
  std::vector<Partition> parts = partition(d, {compute_units, comm_units});
  EXPECT_EQ(parts[0].compute_units(), compute_units);
  EXPECT_EQ(parts[1].compute_units(), comm_units);
  Stream plain(d);
  const std::int64_t n = 1024;
  const std::vector<float> want = gemm_bf16(d, plain, n);
  Stream compute = parts[0].stream(), comm = parts[1].stream();
  // The copy on the communication partition, queued before the GEMM.
  Buffer x = Buffer::for_tensor(d, DType::f32, Shape{1 << 24}), y = Buffer::for_tensor(d, DType::f32, Shape{1 << 24});
  ops::copy(comm, Tensor::contiguous(x.data(), &d, DType::f32, Shape{1 << 24}),
            Tensor::contiguous(y.data(), &d, DType::f32, Shape{1 << 24}));
  const std::vector<float> got = gemm_bf16(d, compute, n);
  comm.synchronize();
  ASSERT_EQ(got.size(), want.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= 1e-3f * (1.0f + std::fabs(want[i])))) ++differ;
  EXPECT_EQ(differ, 0u) << "elements of the partition's GEMM off the plain stream's";
}
