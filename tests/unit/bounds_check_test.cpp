// The validation layer (hal/allocations.h, hal/bounds_check.h): every op and
// copy refuses a view outside one live allocation, naming op and argument,
// and writes nothing; external registrations; thread safety.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "hal/allocations.h"
#include "hal/bounds_check.h"
#include "hal/buffer.h"
#include "hal/error.h"
#include "hal/stream.h"
#include "ops/ops.h"
#include "unit/test_helpers.h"

namespace {

using hal::test::contains;
using hal::test::cpu;
using hal::test::error_of;

using hal::Buffer;
using hal::DType;
using hal::Shape;
using hal::Strides;
using hal::Tensor;

constexpr float kSentinel = -7.25f;

// Only this test's allocations are live (the views of host vectors that other
// tests registered are dropped), and the checks are on.
class BoundsCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    hal::test::forget_host_memory();
    hal::set_bounds_checks(true);
  }
  void TearDown() override { hal::set_bounds_checks(true); }

  // A buffer of n floats 0, 1, 2, ... (or all `fill`).
  Buffer floats(std::int64_t n, std::optional<float> fill = std::nullopt) {
    Buffer b(cpu(), static_cast<std::size_t>(n) * sizeof(float));
    auto* p = static_cast<float*>(b.data());
    for (std::int64_t i = 0; i < n; ++i) p[i] = fill ? *fill : static_cast<float>(i) - 3.0f;
    return b;
  }
  static const float* at(const Buffer& b) { return static_cast<const float*>(b.data()); }
  static bool all_sentinel(const Buffer& b) {
    for (std::size_t i = 0; i < b.size() / sizeof(float); ++i)
      if (at(b)[i] != kSentinel) return false;
    return true;
  }

  hal::Stream s{cpu()};
};

// The message's head: op, argument, and what was expected.
std::string head(const std::string& op, const std::string& arg) {
  return op + ": argument '" + arg + "': expected a view inside one live allocation of cpu, given ";
}

TEST_F(BoundsCheck, OffsetPastTheEndIsRefusedAndNothingIsWritten) {
  Buffer x = floats(16), y = floats(16, kSentinel);
  Tensor xv = x.view(DType::f32, Shape{16});
  xv.offset = 1;  // the last element is one past the buffer
  const std::string msg = error_of([&] { hal::ops::relu(s, xv, y.view(DType::f32, Shape{16})); });
  EXPECT_EQ(msg.rfind(head("relu", "x"), 0), 0u) << msg;
  EXPECT_TRUE(contains(msg, "offset 1")) << msg;
  EXPECT_TRUE(contains(msg, "run 4 bytes past the end of 64 bytes at")) << msg;
  EXPECT_TRUE(contains(msg, "(a hal buffer)")) << msg;
  EXPECT_TRUE(all_sentinel(y));

  xv.offset = 0;  // the same call inside the buffer runs
  hal::ops::relu(s, xv, y.view(DType::f32, Shape{16}));
  EXPECT_EQ(at(y)[0], 0.0f);
  EXPECT_EQ(at(y)[15], 12.0f);
}

TEST_F(BoundsCheck, StrideReachingPastTheEndIsRefused) {
  Buffer x = floats(16), y = floats(16, kSentinel);
  Tensor yv = y.view(DType::f32, Shape{4, 4});
  yv.strides = Strides{5, 1};  // row 3 ends at element 19 of 16
  const std::string msg = error_of([&] { hal::ops::neg(s, x.view(DType::f32, Shape{4, 4}), yv); });
  EXPECT_EQ(msg.rfind(head("neg", "y"), 0), 0u) << msg;
  EXPECT_TRUE(contains(msg, "strides [5, 1]")) << msg;
  EXPECT_TRUE(contains(msg, "run 12 bytes past the end of 64 bytes")) << msg;
  EXPECT_TRUE(all_sentinel(y));
}

TEST_F(BoundsCheck, TheArgumentAtFaultIsNamed) {
  Buffer a = floats(6), b = floats(12), c = floats(8, kSentinel), small = floats(3);
  const Tensor av = a.view(DType::f32, Shape{2, 3}), cv = c.view(DType::f32, Shape{2, 4});
  Tensor bv = b.view(DType::f32, Shape{3, 4});
  bv.offset = 1;
  std::string msg = error_of([&] { hal::ops::gemm(s, av, bv, cv); });
  EXPECT_EQ(msg.rfind(head("gemm", "b"), 0), 0u) << msg;
  // The optional bias is named too.
  Tensor bias = small.view(DType::f32, Shape{3});
  bias.shape = Shape{4};
  msg = error_of([&] { hal::ops::gemm(s, av, b.view(DType::f32, Shape{3, 4}), cv, {.bias = bias}); });
  EXPECT_EQ(msg.rfind(head("gemm", "bias"), 0), 0u) << msg;
  EXPECT_TRUE(all_sentinel(c));
}

TEST_F(BoundsCheck, ViewOfAFreedBufferIsRefused) {
  Buffer y = floats(8, kSentinel);
  Buffer x = floats(8);
  const Tensor stale = x.view(DType::f32, Shape{8});
  Buffer scratch = floats(8);
  hal::ops::abs(s, stale, scratch.view(DType::f32, Shape{8}));  // accepted while x lives
  EXPECT_EQ(at(scratch)[0], 3.0f);
  x = Buffer();  // frees it
  const std::string msg = error_of([&] { hal::ops::abs(s, stale, y.view(DType::f32, Shape{8})); });
  EXPECT_EQ(msg.rfind(head("abs", "x"), 0), 0u) << msg;
  EXPECT_TRUE(contains(msg, "no live allocation of cpu holds byte")) << msg;
  EXPECT_TRUE(contains(msg, "Device::register_external")) << msg;
  EXPECT_TRUE(all_sentinel(y));
  // Nor may a copy read it.
  std::vector<float> host(8);
  error_of([&] { s.download(host.data(), stale); });
}

TEST_F(BoundsCheck, UnregisteredMemoryIsRefusedUntilRegisteredAndAgainAfterRelease) {
  std::vector<float> xs = {-1, 2, -3, 4}, ys(4, kSentinel);
  const Tensor x = Tensor::contiguous(xs.data(), &cpu(), DType::f32, Shape{4});
  const Tensor y = Tensor::contiguous(ys.data(), &cpu(), DType::f32, Shape{4});
  std::string msg = error_of([&] { hal::ops::relu(s, x, y); });
  EXPECT_EQ(msg.rfind(head("relu", "x"), 0), 0u) << msg;

  hal::ExternalAllocation rx = cpu().register_external(xs.data(), xs.size() * sizeof(float));
  msg = error_of([&] { hal::ops::relu(s, x, y); });  // y is still unknown
  EXPECT_EQ(msg.rfind(head("relu", "y"), 0), 0u) << msg;
  EXPECT_EQ(ys[0], kSentinel);
  {
    const hal::ExternalAllocation ry = cpu().register_external(ys.data(), ys.size() * sizeof(float));
    hal::ops::relu(s, x, y);
    EXPECT_EQ(ys, (std::vector<float>{0, 2, 0, 4}));
  }  // ry's destructor releases y
  ys.assign(4, kSentinel);
  msg = error_of([&] { hal::ops::relu(s, x, y); });
  EXPECT_EQ(msg.rfind(head("relu", "y"), 0), 0u) << msg;
  EXPECT_TRUE(contains(msg, "no live allocation of cpu holds byte")) << msg;

  rx.release();
  EXPECT_FALSE(rx.active());
  msg = error_of([&] { hal::ops::relu(s, x, y); });
  EXPECT_EQ(msg.rfind(head("relu", "x"), 0), 0u) << msg;
  EXPECT_EQ(xs, (std::vector<float>{-1, 2, -3, 4}));
}

TEST_F(BoundsCheck, ExternalRegistrationIsMovableAndChecksItsArguments) {
  std::vector<float> xs(4, 1.0f);
  const std::size_t before = cpu().allocations().size();
  hal::ExternalAllocation a = cpu().register_external(xs.data(), 16);
  EXPECT_EQ(cpu().allocations().size(), before + 1);
  hal::ExternalAllocation b = std::move(a);
  EXPECT_FALSE(a.active());
  EXPECT_TRUE(b.active());
  EXPECT_EQ(cpu().allocations().size(), before + 1);
  b = hal::ExternalAllocation();  // releases
  EXPECT_EQ(cpu().allocations().size(), before);

  const std::string msg = error_of([&] { (void)cpu().register_external(nullptr, 16); });
  EXPECT_EQ(msg.rfind("Device::register_external: argument 'ptr'", 0), 0u) << msg;
  EXPECT_FALSE(cpu().register_external(nullptr, 0).active());  // nothing to record
}

TEST_F(BoundsCheck, AViewSpanningTwoAdjacentAllocationsIsRefused) {
  std::vector<float> xs = {1, 2, 3, 4, 5, 6, 7, 8}, ys(8, kSentinel);
  const hal::ExternalAllocation lo = cpu().register_external(xs.data(), 16);
  const hal::ExternalAllocation hi = cpu().register_external(xs.data() + 4, 16);
  const hal::ExternalAllocation out = cpu().register_external(ys.data(), 32);
  const Tensor y = Tensor::contiguous(ys.data(), &cpu(), DType::f32, Shape{8});
  const std::string msg =
      error_of([&] { hal::ops::copy(s, Tensor::contiguous(xs.data(), &cpu(), DType::f32, Shape{8}), y); });
  EXPECT_EQ(msg.rfind(head("copy", "x"), 0), 0u) << msg;
  EXPECT_TRUE(contains(msg, "run 16 bytes past the end of 16 bytes at")) << msg;
  EXPECT_EQ(ys[0], kSentinel);
  // Each half alone is inside one allocation.
  Tensor half = Tensor::contiguous(xs.data(), &cpu(), DType::f32, Shape{4});
  Tensor y_half = Tensor::contiguous(ys.data(), &cpu(), DType::f32, Shape{4});
  hal::ops::copy(s, half, y_half);
  half.offset = 4;
  y_half.offset = 4;
  hal::ops::copy(s, half, y_half);
  EXPECT_EQ(ys, xs);
}

TEST_F(BoundsCheck, NestedExtentsAcceptWhatTheOuterOneHolds) {
  // An import of a buffer's memory (as a DLPack round trip makes) nests in it;
  // a view inside the buffer but past the import is still inside the buffer.
  Buffer x = floats(16), y = floats(16, kSentinel);
  const hal::ExternalAllocation inner = cpu().register_external(static_cast<float*>(x.data()) + 2, 8);
  Tensor xv = x.view(DType::f32, Shape{8});
  xv.offset = 2;
  hal::ops::copy(s, xv, y.view(DType::f32, Shape{8}));
  EXPECT_EQ(at(y)[0], at(x)[2]);
  EXPECT_EQ(at(y)[7], at(x)[9]);
}

TEST_F(BoundsCheck, EmptyTensorsTouchNothingAndAreAccepted) {
  const Tensor none_x = Tensor::contiguous(nullptr, &cpu(), DType::f32, Shape{0, 4});
  const Tensor none_y = Tensor::contiguous(nullptr, &cpu(), DType::f32, Shape{0, 4});
  hal::ops::relu(s, none_x, none_y);
  Buffer x = floats(4);
  Tensor stale = x.view(DType::f32, Shape{0});
  x = Buffer();  // an empty view of freed memory, far past its end
  stale.offset = 1000;
  hal::ops::copy(s, stale, Tensor::contiguous(nullptr, &cpu(), DType::f32, Shape{0}));
  s.memset(nullptr, 0, 0);
  s.copy_from_host(nullptr, nullptr, 0);
  s.copy_to_host(nullptr, nullptr, 0);
  s.upload(none_y, nullptr);
  SUCCEED();
}

TEST_F(BoundsCheck, CopiesAndMemsetsAreChecked) {
  Buffer b = floats(4, kSentinel);
  std::vector<float> host = {1, 2, 3, 4, 5};
  auto* p = static_cast<char*>(b.data());
  std::string msg = error_of([&] { s.copy_from_host(p, host.data(), 20); });
  EXPECT_EQ(msg.rfind("Stream::copy_from_host: argument 'device_dst': expected a range inside one live allocation of cpu",
                      0),
            0u)
      << msg;
  EXPECT_TRUE(contains(msg, "run 4 bytes past the end of 16 bytes")) << msg;
  msg = error_of([&] { s.memset(p + 4, 0, 13); });
  EXPECT_EQ(msg.rfind("Stream::memset: argument 'device_dst'", 0), 0u) << msg;
  msg = error_of([&] { s.memset(nullptr, 0, 4); });
  EXPECT_EQ(msg.rfind("Stream::memset: argument 'device_dst'", 0), 0u) << msg;
  msg = error_of([&] { s.copy_to_host(host.data(), p + 8, 12); });
  EXPECT_EQ(msg.rfind("Stream::copy_to_host: argument 'device_src'", 0), 0u) << msg;
  msg = error_of([&] { s.copy_on_device(p, p + 4, 16); });
  EXPECT_EQ(msg.rfind("Stream::copy_on_device: argument 'device_src'", 0), 0u) << msg;
  msg = error_of([&] { s.copy_on_device(p + 4, p, 16); });
  EXPECT_EQ(msg.rfind("Stream::copy_on_device: argument 'device_dst'", 0), 0u) << msg;
  Tensor t = b.view(DType::f32, Shape{4});
  t.offset = 2;
  msg = error_of([&] { s.upload(t, host.data()); });
  EXPECT_EQ(msg.rfind(std::string("Stream::upload: argument 'dst': expected a view inside"), 0), 0u) << msg;
  msg = error_of([&] { s.download(host.data(), t); });
  EXPECT_EQ(msg.rfind(std::string("Stream::download: argument 'src': expected a view inside"), 0), 0u) << msg;
  EXPECT_TRUE(all_sentinel(b));
  EXPECT_EQ(host, (std::vector<float>{1, 2, 3, 4, 5}));

  // The same copies inside the buffer run.
  s.copy_from_host(p + 4, host.data(), 12);
  s.memset(p, 0, 4);
  s.copy_on_device(p, p + 8, 8);
  EXPECT_EQ(at(b)[0], 2.0f);
  EXPECT_EQ(at(b)[1], 3.0f);
  EXPECT_EQ(at(b)[3], 3.0f);
}

TEST_F(BoundsCheck, ViewsOutsideTheAddressSpaceAreRefused) {
  Buffer x = floats(4);
  Tensor t = x.view(DType::f32, Shape{2});
  t.strides = Strides{std::int64_t{1} << 62};
  std::string msg = error_of([&] { hal::check_tensor_bounds("f", "t", t); });
  EXPECT_TRUE(contains(msg, "outside the address space")) << msg;
  t = x.view(DType::f32, Shape{2});
  t.offset = -1;  // the element before the buffer
  msg = error_of([&] { hal::check_tensor_bounds("f", "t", t); });
  EXPECT_EQ(msg.rfind("f: argument 't': expected a view inside one live allocation of cpu", 0), 0u) << msg;
}

TEST_F(BoundsCheck, SwitchedOffTheViewsAreNotChecked) {
  std::vector<float> xs = {-1, 2}, ys(2, kSentinel);
  const Tensor x = Tensor::contiguous(xs.data(), &cpu(), DType::f32, Shape{2});
  const Tensor y = Tensor::contiguous(ys.data(), &cpu(), DType::f32, Shape{2});
  hal::set_bounds_checks(false);
  EXPECT_FALSE(hal::bounds_checks_enabled());
  hal::ops::relu(s, x, y);
  EXPECT_EQ(ys, (std::vector<float>{0, 2}));
  hal::set_bounds_checks(true);
  error_of([&] { hal::ops::relu(s, x, y); });
}

TEST(AllocationTable, ExtentsAreFoundRemovedByIdAndMayShareABeginning) {
  hal::AllocationTable table;
  alignas(16) static char memory[64];
  const auto base = reinterpret_cast<std::uintptr_t>(memory);
  const std::uint64_t whole = table.add(memory, 64, hal::AllocationKind::owned);
  const std::uint64_t front = table.add(memory, 16, hal::AllocationKind::external);
  EXPECT_NE(whole, front);
  EXPECT_TRUE(table.find(base, base + 64).inside);
  EXPECT_TRUE(table.find(base + 8, base + 40).inside);
  EXPECT_FALSE(table.find(base + 8, base + 65).inside);
  EXPECT_EQ(table.find(base + 8, base + 65).nearest->end, base + 64);
  table.remove(memory, whole);  // the one with the same beginning stays
  EXPECT_EQ(table.size(), 1u);
  EXPECT_TRUE(table.find(base, base + 16).inside);
  EXPECT_FALSE(table.find(base, base + 17).inside);
  table.remove(memory, whole);  // unknown now: ignored
  EXPECT_EQ(table.size(), 1u);
  table.remove(memory, front);
  EXPECT_FALSE(table.find(base, base + 1).inside);
  EXPECT_FALSE(table.find(base, base + 1).nearest.has_value());
  error_of([&] { (void)table.add(nullptr, 4, hal::AllocationKind::owned); });
}

// Host threads allocate, run ops on their own streams, register external
// memory and free, all at once: no view of a live allocation is ever refused
// and every result is right.
TEST_F(BoundsCheck, ThreadsAllocatingAndRunningConcurrentlySeeNoFalseRefusals) {
  constexpr int kThreads = 6, kRounds = 150;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      hal::Stream stream(cpu());
      for (int r = 0; r < kRounds; ++r) {
        const std::int64_t n = 1 + (t * 7 + r * 13) % 61;
        try {
          Buffer x(cpu(), static_cast<std::size_t>(n) * sizeof(float));
          std::vector<float> host(static_cast<std::size_t>(n));
          for (std::int64_t i = 0; i < n; ++i) host[static_cast<std::size_t>(i)] = static_cast<float>(i - r);
          const hal::ExternalAllocation reg = cpu().register_external(host.data(), host.size() * sizeof(float));
          const Tensor hv = Tensor::contiguous(host.data(), &cpu(), DType::f32, Shape{n});
          stream.upload(x.view(DType::f32, Shape{n}), host.data());
          hal::ops::relu(stream, x.view(DType::f32, Shape{n}), hv);  // into the registered host memory
          for (std::int64_t i = 0; i < n; ++i)
            if (host[static_cast<std::size_t>(i)] != std::max(0.0f, static_cast<float>(i - r))) ++failures;
        } catch (const hal::Error& e) {
          ADD_FAILURE() << e.what();
          ++failures;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
