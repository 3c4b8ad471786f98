// hal::Tensor views, hal::Buffer on the CPU device, hal::Stream and hal::Event.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "hal/buffer.h"
#include "hal/error.h"
#include "hal/registry.h"
#include "hal/stream.h"
#include "hal/tensor.h"
#include "unit/test_helpers.h"

namespace {

using hal::test::cpu;
using hal::test::error_of;
using hal::test::contains;

using hal::DType;
using hal::Shape;
using hal::Strides;
using hal::Tensor;

// A device that is not the CPU, for mismatch errors. Never registered.
class OtherEvent final : public hal::EventImpl {
 public:
  void synchronize() override {}
  double elapsed_ms(const hal::EventImpl&) const override { return 0.0; }
};
class OtherDevice final : public hal::Device {
 public:
  OtherDevice() { info_.name = "other:0"; }
  const hal::DeviceInfo& info() const override { return info_; }
  void* allocate(std::size_t) override { return nullptr; }
  void deallocate(void*) noexcept override {}
  std::unique_ptr<hal::StreamImpl> create_stream() override { return nullptr; }
  std::unique_ptr<hal::EventImpl> create_event() override { return std::make_unique<OtherEvent>(); }
  void execute(hal::StreamImpl&, const hal::OpCall&) override {}

 private:
  hal::DeviceInfo info_;
};

// ---------------------------------------------------------------------------
// Tensor

TEST(Tensor, ContiguousView) {
  float storage[24];
  const Tensor t = Tensor::contiguous(storage, &cpu(), DType::f32, Shape{2, 3, 4});
  EXPECT_EQ(t.rank(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.strides, (Strides{12, 4, 1}));
  EXPECT_EQ(t.offset, 0);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.first(), static_cast<void*>(storage));
  EXPECT_EQ(t.min_index(), 0);
  EXPECT_EQ(t.end_index(), 24);
  EXPECT_EQ(t.str(), "f32[2, 3, 4] strides [12, 4, 1] on cpu");
}

TEST(Tensor, FirstAndEndIndexHonourOffsetAndDType) {
  std::uint16_t storage[64];
  Tensor t = Tensor::contiguous(storage, &cpu(), DType::bf16, Shape{2, 3});
  t.offset = 5;
  EXPECT_EQ(t.first(), static_cast<void*>(storage + 5));  // elements, not bytes
  EXPECT_EQ(t.min_index(), 5);
  EXPECT_EQ(t.end_index(), 11);
  // Padded rows: last element is (1, 2) at 5 + 1*10 + 2.
  t.strides = Strides{10, 1};
  EXPECT_EQ(t.end_index(), 18);
  // Broadcast rows (stride 0) touch only one row.
  t.strides = Strides{0, 1};
  EXPECT_EQ(t.end_index(), 8);
  // Empty: touches nothing.
  t.shape = Shape{0, 3};
  EXPECT_EQ(t.end_index(), 5);
  EXPECT_EQ(t.min_index(), 5);
  EXPECT_EQ(Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{}).end_index(), 1);  // a scalar
}

TEST(Tensor, TransposedAndPermuted) {
  const Tensor t = Tensor::contiguous(nullptr, &cpu(), DType::f16, Shape{2, 3, 4});
  const Tensor tt = t.transposed(0, -1);
  EXPECT_EQ(tt.shape, (Shape{4, 3, 2}));
  EXPECT_EQ(tt.strides, (Strides{1, 4, 12}));
  EXPECT_FALSE(tt.is_contiguous());
  EXPECT_EQ(tt.end_index(), t.end_index());
  EXPECT_EQ(tt.dtype, DType::f16);

  const Tensor p = t.permuted(hal::Dims{2, 0, 1});
  EXPECT_EQ(p.shape, (Shape{4, 2, 3}));
  EXPECT_EQ(p.strides, (Strides{1, 12, 4}));
  EXPECT_EQ(p.permuted(hal::Dims{1, 2, 0}).shape, t.shape);  // inverse permutation
  EXPECT_EQ(p.permuted(hal::Dims{1, 2, 0}).strides, t.strides);

  std::string msg = error_of([&] { (void)t.transposed(0, 3); });
  EXPECT_EQ(msg.rfind("transposed: argument 'axis1'", 0), 0u) << msg;
  msg = error_of([&] { (void)t.transposed(-4, 0); });
  EXPECT_EQ(msg.rfind("transposed: argument 'axis0'", 0), 0u) << msg;
  msg = error_of([&] { (void)t.permuted(hal::Dims{0, 0, 1}); });
  EXPECT_EQ(msg.rfind("permuted: argument 'perm'", 0), 0u) << msg;
  EXPECT_TRUE(contains(msg, "[0, 0, 1]")) << msg;
  msg = error_of([&] { (void)t.permuted(hal::Dims{0, 1}); });
  EXPECT_TRUE(contains(msg, "3 axes")) << msg;
  error_of([&] { (void)t.permuted(hal::Dims{0, 1, 3}); });
  error_of([&] { (void)t.permuted(hal::Dims{0, -1, 1}); });
}

TEST(Tensor, NumelOverflowThrows) {
  const Tensor t = Tensor::contiguous(nullptr, nullptr, DType::f32, Shape{1 << 20, 1 << 20});
  EXPECT_EQ(t.numel(), std::int64_t{1} << 40);
  Tensor big = t;
  big.shape = Shape{std::int64_t{1} << 40, std::int64_t{1} << 40};
  std::string msg = error_of([&] { (void)big.numel(); });
  EXPECT_TRUE(contains(msg, "overflow")) << msg;
}

// ---------------------------------------------------------------------------
// Buffer

TEST(Buffer, AllocatesAligned) {
  for (std::size_t bytes : {0u, 1u, 255u, 256u, 257u, 4096u + 3u}) {
    hal::Buffer b(cpu(), bytes);
    EXPECT_EQ(b.size(), bytes);
    EXPECT_EQ(b.device(), &cpu());
    ASSERT_NE(b.data(), nullptr) << bytes;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % 256, 0u) << bytes;
    if (bytes) std::memset(b.data(), 0x5A, bytes);  // the whole size is writable
  }
  hal::Buffer a(cpu(), 8), c(cpu(), 8);
  EXPECT_NE(a.data(), c.data());
}

TEST(Buffer, ForTensorSizesAndOverflow) {
  hal::Buffer b = hal::Buffer::for_tensor(cpu(), DType::f16, Shape{3, 5});
  EXPECT_EQ(b.size(), 30u);
  EXPECT_EQ(hal::Buffer::for_tensor(cpu(), DType::f64, Shape{0, 7}).size(), 0u);
  std::string msg = error_of([] {
    hal::Buffer::for_tensor(cpu(), DType::f32, Shape{std::int64_t{1} << 40, std::int64_t{1} << 40});
  });
  EXPECT_EQ(msg.rfind("Buffer::for_tensor: ", 0), 0u) << msg;
  // The element count fits; the byte count does not.
  msg = error_of([] { hal::Buffer::for_tensor(cpu(), DType::f64, Shape{std::int64_t{1} << 61}); });
  EXPECT_EQ(msg.rfind("Buffer::for_tensor: ", 0), 0u) << msg;
  EXPECT_TRUE(contains(msg, "overflow")) << msg;
  error_of([] { hal::Buffer::for_tensor(cpu(), DType::f32, Shape{-2, 3}); });
}

TEST(Buffer, ViewBounds) {
  hal::Buffer b(cpu(), 40);
  const Tensor v = b.view(DType::f32, Shape{2, 5});
  EXPECT_EQ(v.data, b.data());
  EXPECT_EQ(v.device, &cpu());
  EXPECT_EQ(v.dtype, DType::f32);
  EXPECT_TRUE(v.is_contiguous());
  (void)b.view(DType::f8e4m3, Shape{40});
  (void)b.view(DType::f64, Shape{5});
  std::string msg = error_of([&] { (void)b.view(DType::f32, Shape{11}); });
  EXPECT_EQ(msg.rfind("Buffer::view: argument 'shape'", 0), 0u) << msg;
  EXPECT_TRUE(contains(msg, "40 bytes")) << msg;
  EXPECT_TRUE(contains(msg, "44")) << msg;
  error_of([&] { (void)b.view(DType::i64, Shape{6}); });
  error_of([&] { (void)b.view(DType::f32, Shape{std::int64_t{1} << 40, std::int64_t{1} << 40}); });
  hal::Buffer empty;
  EXPECT_EQ(empty.view(DType::f32, Shape{0}).numel(), 0);
  error_of([&] { (void)empty.view(DType::f32, Shape{1}); });
}

TEST(Buffer, MoveTransfersOwnership) {
  hal::Buffer a(cpu(), 64);
  void* p = a.data();
  hal::Buffer b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.size(), 64u);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): documented moved-from state
  EXPECT_EQ(a.size(), 0u);
  hal::Buffer c(cpu(), 8);
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(c.size(), 64u);
}

// ---------------------------------------------------------------------------
// Stream and Event

TEST(Stream, UploadDownloadRoundTrip) {
  hal::Stream s(cpu());
  EXPECT_EQ(&s.device(), &cpu());
  hal::Buffer b = hal::Buffer::for_tensor(cpu(), DType::i32, Shape{4, 7});
  const Tensor t = b.view(DType::i32, Shape{4, 7});
  std::vector<std::int32_t> in(28), out(28, -1);
  std::iota(in.begin(), in.end(), 100);
  s.upload(t, in.data());
  s.synchronize();
  s.download(out.data(), t);
  s.synchronize();
  EXPECT_EQ(out, in);

  // A view with an offset copies from its first element.
  Tensor row2 = Tensor::contiguous(b.data(), &cpu(), DType::i32, Shape{7});
  row2.offset = 14;
  std::vector<std::int32_t> row(7);
  s.download(row.data(), row2);
  EXPECT_EQ(row[0], 114);
  EXPECT_EQ(row[6], 120);

  // Raw copies and memset.
  hal::Buffer c(cpu(), 28 * 4);
  s.copy_on_device(c.data(), b.data(), 28 * 4);
  s.memset(b.data(), 0, 8);
  s.copy_to_host(out.data(), c.data(), 28 * 4);
  EXPECT_EQ(out, in);
  s.copy_to_host(out.data(), b.data(), 12);
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 0);
  EXPECT_EQ(out[2], 102);
}

TEST(Stream, RejectsNonContiguousAndForeignTensors) {
  hal::Stream s(cpu());
  hal::Buffer b = hal::Buffer::for_tensor(cpu(), DType::f32, Shape{3, 4});
  const Tensor t = b.view(DType::f32, Shape{3, 4});
  std::vector<float> host(12, 1.5f);
  std::memset(b.data(), 0, 48);

  std::string msg = error_of([&] { s.upload(t.transposed(0, 1), host.data()); });
  EXPECT_EQ(msg.rfind("Stream::upload: argument 'tensor'", 0), 0u) << msg;
  EXPECT_TRUE(contains(msg, "contiguous")) << msg;
  const std::vector<unsigned char> zeros(48, 0);
  EXPECT_EQ(std::memcmp(b.data(), zeros.data(), 48), 0) << "a rejected upload wrote data";

  msg = error_of([&] { s.download(host.data(), t.transposed(0, 1)); });
  EXPECT_EQ(msg.rfind("Stream::download: argument 'tensor'", 0), 0u) << msg;
  EXPECT_EQ(host[0], 1.5f);

  OtherDevice other;
  Tensor foreign = t;
  foreign.device = &other;
  msg = error_of([&] { s.upload(foreign, host.data()); });
  EXPECT_TRUE(contains(msg, "a tensor on cpu")) << msg;
  EXPECT_TRUE(contains(msg, "other:0")) << msg;

  // Empty tensors copy nothing, even with a null host pointer.
  s.upload(b.view(DType::f32, Shape{0, 4}), nullptr);
}

TEST(Stream, EventElapsed) {
  hal::Stream s(cpu());
  hal::Event start(cpu()), stop(cpu());
  s.record(start);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  s.record(stop);
  stop.synchronize();
  const double ms = stop.elapsed_ms_since(start);
  EXPECT_GE(ms, 19.0);
  EXPECT_LT(ms, 10000.0);
  EXPECT_LE(start.elapsed_ms_since(stop), 0.0);
  EXPECT_EQ(&start.device(), &cpu());

  hal::Event never(cpu());
  error_of([&] { (void)never.elapsed_ms_since(start); });

  OtherDevice other;
  hal::Event foreign(other);
  const std::string msg = error_of([&] { (void)stop.elapsed_ms_since(foreign); });
  EXPECT_EQ(msg.rfind("Event::elapsed_ms_since: argument 'start'", 0), 0u) << msg;
  EXPECT_TRUE(contains(msg, "other:0")) << msg;
}

}  // namespace
