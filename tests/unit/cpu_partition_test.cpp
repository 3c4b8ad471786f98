// CPU partitions (hal/partition.h): task arenas of the requested threads,
// ops on a partition's stream give the bits of the default stream, two
// partitions run at once from two threads, and the refusals.
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <thread>
#include <vector>

#include "backends/cpu/cpu_stream.h"
#include "hal/error.h"
#include "hal/partition.h"
#include "hal/registry.h"
#include "ops/ops.h"

using namespace hal;

namespace {

std::vector<float> gemm_on(Stream& s, int m, int n, int k) {
  Device& cpu = s.device();
  std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n)),
      c(static_cast<std::size_t>(m * n), -1.0f);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 7 % 13)) / 13.0f - 0.5f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 5 % 11)) / 11.0f - 0.5f;
  // Host vectors are memory hal did not allocate: registered for the validation layer.
  const ExternalAllocation ra = cpu.register_external(a.data(), a.size() * sizeof(float));
  const ExternalAllocation rb = cpu.register_external(b.data(), b.size() * sizeof(float));
  const ExternalAllocation rc = cpu.register_external(c.data(), c.size() * sizeof(float));
  ops::gemm(s, Tensor::contiguous(a.data(), &cpu, DType::f32, Shape{m, k}),
            Tensor::contiguous(b.data(), &cpu, DType::f32, Shape{k, n}),
            Tensor::contiguous(c.data(), &cpu, DType::f32, Shape{m, n}));
  return c;
}

class NoPartitions final : public Device {
 public:
  NoPartitions() { info_.name = info_.backend = "fake"; }
  const DeviceInfo& info() const override { return info_; }
  void* allocate(std::size_t) override { return nullptr; }
  void deallocate(void*) noexcept override {}
  std::unique_ptr<StreamImpl> create_stream() override { return nullptr; }
  std::unique_ptr<EventImpl> create_event() override { return nullptr; }
  void execute(StreamImpl&, const OpCall&) override {}

 private:
  DeviceInfo info_;
};

}  // namespace

TEST(CpuPartition, ArenasHaveTheRequestedThreads) {
  Device& cpu = device("cpu");
  const PartitionSupport s = cpu.partition_support();
  ASSERT_TRUE(s.supported);
  EXPECT_EQ(s.unit, "threads");
  EXPECT_EQ(s.max_units, cpu.info().compute_units);
  if (s.max_units < 2) GTEST_SKIP() << "one hardware thread";
  auto parts = partition(cpu, {s.max_units - 1, 1});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].compute_units(), s.max_units - 1);
  EXPECT_EQ(parts[1].compute_units(), 1);
  for (const Partition& p : parts) {
    Stream st = p.stream();
    auto* impl = dynamic_cast<cpu::CpuStream*>(&st.impl());
    ASSERT_NE(impl, nullptr);
    ASSERT_NE(impl->arena(), nullptr);
    int seen = 0;
    impl->arena()->execute([&] { seen = tbb::this_task_arena::max_concurrency(); });
    EXPECT_EQ(seen, p.compute_units());
  }
}

TEST(CpuPartition, OpsOnPartitionsGiveTheDefaultStreamsBits) {
  Device& cpu = device("cpu");
  Stream plain(cpu);
  const std::vector<float> expected = gemm_on(plain, 67, 45, 129);
  auto parts = partition(cpu, {1});
  Stream one = parts[0].stream();
  EXPECT_EQ(gemm_on(one, 67, 45, 129), expected);
  if (cpu.info().compute_units < 2) return;
  // Two partitions, each driven by its own thread, at the same time.
  auto two = partition(cpu, {1, 1});
  std::vector<float> r0, r1;
  std::thread t0([&] {
    Stream s = two[0].stream();
    r0 = gemm_on(s, 67, 45, 129);
  });
  std::thread t1([&] {
    Stream s = two[1].stream();
    r1 = gemm_on(s, 67, 45, 129);
  });
  t0.join();
  t1.join();
  EXPECT_EQ(r0, expected);
  EXPECT_EQ(r1, expected);
}

TEST(CpuPartition, RefusesBadCountsByName) {
  Device& cpu = device("cpu");
  const int max = cpu.partition_support().max_units;
  for (const std::vector<int>& bad : {std::vector<int>{}, {0}, {-1}, {max, 1}}) {
    try {
      partition(cpu, bad);
      ADD_FAILURE() << "accepted " << bad.size() << " counts";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("partition: argument 'units'"), std::string::npos) << e.what();
    }
  }
}

TEST(CpuPartition, DevicesWithoutPartitionsSayWhy) {
  NoPartitions fake;
  EXPECT_FALSE(fake.partition_support().supported);
  try {
    partition(fake, {1});
    ADD_FAILURE() << "a device without partitions accepted one";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
    EXPECT_NE(std::string(e.what()).find("fake"), std::string::npos) << e.what();
  }
}
