// Memory safety of the op interface on the CPU device (issue 17): calls that
// used to read or write out of bounds, or form null + offset (undefined
// behaviour that the ASan+UBSan build of these tests aborts on), and values
// outside an enum that validation used to let through.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "hal/stream.h"
#include "ops/ops.h"
#include "test_helpers.h"

namespace hal {
namespace {

using test::contains;
using test::cpu;
using test::error_of;
using test::view_of;

constexpr float kGuard = -12345.0f;

// An empty view with null data and a non-zero offset and strides: valid (it
// has no element), and what a kernel must not turn into null + offset.
Tensor empty_null_view(DType dtype, const Shape& shape) {
  Tensor t = Tensor::contiguous(nullptr, &cpu(), dtype, shape);
  t.offset = 1000;
  for (int i = 0; i < t.rank(); ++i) t.strides[i] = 7 + i;
  return t;
}

bool all_equal(const std::vector<float>& v, float x) {
  for (float e : v)
    if (e != x) return false;
  return true;
}

// Zero query heads with one kv head passed validation and then sized the
// blocked path's tasks from hq / hkv = 0 (heap corruption). Now it is a
// valid empty call: nothing is written, nothing outside y is touched.
TEST(ReliabilityMemory, AttentionWithZeroQueryHeadsWritesNothing) {
  Stream s(cpu());
  for (const std::int64_t sq : {1, 5, 300}) {
    const std::int64_t sk = 7, d = 16;
    std::vector<float> q(8, kGuard), k(static_cast<std::size_t>(sk * d), 0.5f), v(k.size(), 0.25f), y(64, kGuard);
    // q and y: [1, sq, 0, d], views into guard-filled buffers.
    ops::attention(s, view_of(q, DType::f32, {1, sq, 0, d}), view_of(k, DType::f32, {1, sk, 1, d}),
                   view_of(v, DType::f32, {1, sk, 1, d}), view_of(y, DType::f32, {1, sq, 0, d}));
    EXPECT_TRUE(all_equal(y, kGuard)) << "sq " << sq;
    EXPECT_TRUE(all_equal(q, kGuard)) << "sq " << sq;
    for (const bool causal : {false, true}) {
      ops::AttentionOptions o;
      o.causal = causal;
      ops::attention(s, view_of(q, DType::f32, {2, sq, 0, d}), view_of(k, DType::f32, {2, 3, 1, d}),
                     view_of(v, DType::f32, {2, 3, 1, d}), view_of(y, DType::f32, {2, sq, 0, d}), o);
      EXPECT_TRUE(all_equal(y, kGuard));
    }
  }
}

// Keys empty (sk = 0) with null data and an offset: every query sees no key,
// and its row is zeros (hal/op.h).
TEST(ReliabilityMemory, AttentionWithoutKeysGivesZerosFromNullViews) {
  Stream s(cpu());
  for (const DType t : {DType::f32, DType::f64}) {
    const std::int64_t n = 2 * 3 * 4;
    std::vector<double> q(static_cast<std::size_t>(n), 1.0), y(static_cast<std::size_t>(n), 99.0);
    ops::attention(s, view_of(q, t, {1, 2, 3, 4}), empty_null_view(t, {1, 0, 3, 4}), empty_null_view(t, {1, 0, 3, 4}),
                   view_of(y, t, {1, 2, 3, 4}));
    for (std::int64_t i = 0; i < n; ++i)
      EXPECT_EQ(load_element(y.data(), t, i), 0.0) << dtype_name(t) << " element " << i;
  }
  // Empty queries and outputs, null and offset, too.
  ops::attention(s, empty_null_view(DType::f32, {1, 0, 2, 4}), empty_null_view(DType::f32, {1, 0, 1, 4}),
                 empty_null_view(DType::f32, {1, 0, 1, 4}), empty_null_view(DType::f32, {1, 0, 2, 4}));
}

// Every row op and element-wise op on empty null views with an offset.
TEST(ReliabilityMemory, EmptyNullViewsWithOffsetsRunEveryFamily) {
  Stream s(cpu());
  for (const DType t : {DType::f32, DType::bf16, DType::f64}) {
    SCOPED_TRACE(dtype_name(t));
    const Shape rows{3, 0};
    ops::softmax(s, empty_null_view(t, rows), empty_null_view(t, rows));
    ops::log_softmax(s, empty_null_view(t, rows), empty_null_view(t, rows), {.causal = true});
    ops::rmsnorm(s, empty_null_view(t, rows), empty_null_view(t, {0}), empty_null_view(t, rows));
    ops::layernorm(s, empty_null_view(t, rows), empty_null_view(t, {0}), empty_null_view(t, {0}),
                   empty_null_view(t, rows));
    ops::add(s, empty_null_view(t, {4, 0}), empty_null_view(t, {0}), empty_null_view(t, {4, 0}));
    std::vector<double> row(5, 1.0);
    ops::mul(s, empty_null_view(t, {0, 5}), view_of(row, t, {1, 5}), empty_null_view(t, {0, 5}));
    ops::exp(s, empty_null_view(t, {2, 0, 3}), empty_null_view(t, {2, 0, 3}));
    ops::swiglu(s, empty_null_view(t, {0, 3}), empty_null_view(t, {0, 3}), empty_null_view(t, {0, 3}));
    ops::copy(s, empty_null_view(t, {0, 3}), empty_null_view(t, {0, 3}));
    ops::cast(s, empty_null_view(t, {0, 3}), empty_null_view(DType::f32, {0, 3}));
    ops::fill_random(s, empty_null_view(t, {0, 3}));
    ops::max(s, empty_null_view(t, {0, 3}), empty_null_view(t, {0}), {.axis = 1});

    // A reduction over an empty axis of a null view writes its identity.
    std::vector<double> y(3, 42.0);
    ops::sum(s, empty_null_view(t, rows), view_of(y, t, {3}));
    for (std::int64_t i = 0; i < 3; ++i) EXPECT_EQ(load_element(y.data(), t, i), 0.0);
  }
  // gemm with K = 0 from null views: C = beta * C (+ bias).
  std::vector<float> c(6, 2.0f), bias{1, 2, 3};
  ops::gemm(s, empty_null_view(DType::f32, {2, 0}), empty_null_view(DType::f32, {0, 3}), view_of(c, DType::f32, {2, 3}),
            {.beta = 0.5f, .bias = view_of(bias, DType::f32, {3})});
  EXPECT_EQ(c, (std::vector<float>{2, 3, 4, 2, 3, 4}));
  // Embedding with no ids, and rope with no tokens.
  std::vector<float> table(8, 1.0f);
  ops::embedding(s, view_of(table, DType::f32, {2, 4}), empty_null_view(DType::i32, {0}),
                 empty_null_view(DType::f32, {0, 4}));
  ops::rope(s, empty_null_view(DType::f32, {1, 0, 2, 4}), empty_null_view(DType::i32, {0}),
            empty_null_view(DType::f32, {1, 0, 2, 4}));
}

// An out-of-range DType has element size 0: the alignment check divided by it.
TEST(ReliabilityMemory, InvalidDTypeValueIsRefused) {
  std::vector<float> x(4), y(4);
  Stream s(cpu());
  Tensor bad = view_of(x, DType::f32, {4});
  bad.dtype = static_cast<DType>(200);
  const std::string msg = error_of([&] { ops::exp(s, bad, view_of(y, DType::f32, {4})); });
  EXPECT_TRUE(contains(msg, "exp: argument 'x'")) << msg;
  EXPECT_TRUE(contains(msg, "DType value 200")) << msg;
  EXPECT_TRUE(contains(error_of([&] { ops::copy(s, view_of(x, DType::f32, {4}), bad); }), "argument 'y'"));
}

// Kinds outside their enums reached the kernels (the bf16 table path wrote
// past a static array).
TEST(ReliabilityMemory, InvalidOpKindsAreRefused) {
  std::vector<std::uint16_t> x(4, 0x3f80), y(4, 0xdead);
  std::vector<float> xf(4, 1.0f), yf(4, kGuard);
  Stream s(cpu());
  const Tensor xb = view_of(x, DType::bf16, {4}), yb = view_of(y, DType::bf16, {4});
  for (const int kind : {12, 255, -1}) {
    const std::string u = error_of([&] { ops::unary(s, static_cast<UnaryKind>(kind), xb, yb); });
    EXPECT_TRUE(contains(u, "unary: argument 'kind'")) << u;
    EXPECT_TRUE(contains(u, "UnaryKind value " + std::to_string(kind))) << u;
  }
  const std::string b = error_of([&] { ops::binary(s, static_cast<BinaryKind>(6), xb, xb, yb); });
  EXPECT_TRUE(contains(b, "binary: argument 'kind'")) << b;
  const std::string r = error_of([&] {
    ops::reduce(s, static_cast<ReduceKind>(9), view_of(xf, DType::f32, {4}), view_of(yf, DType::f32, {}));
  });
  EXPECT_TRUE(contains(r, "reduce: argument 'kind'")) << r;
  EXPECT_EQ(y, std::vector<std::uint16_t>(4, 0xdead));  // nothing written
  EXPECT_TRUE(all_equal(yf, kGuard));
}

// Null host or device addresses with a size: an error naming the argument,
// not a crash in memmove / memset. Zero bytes stay a no-op.
TEST(ReliabilityMemory, StreamCopiesRefuseNullAddresses) {
  Stream s(cpu());
  std::vector<float> host(4, 1.0f), dev(4, 0.0f);
  const Tensor t = view_of(dev, DType::f32, {4});
  EXPECT_TRUE(contains(error_of([&] { s.upload(t, nullptr); }), "Stream::upload: argument 'host_src'"));
  EXPECT_TRUE(contains(error_of([&] { s.download(nullptr, t); }), "Stream::download: argument 'host_dst'"));
  EXPECT_TRUE(contains(error_of([&] { s.memset(nullptr, 0, 16); }), "Stream::memset: argument 'device_dst'"));
  EXPECT_TRUE(contains(error_of([&] { s.copy_from_host(dev.data(), nullptr, 16); }), "'host_src'"));
  EXPECT_TRUE(contains(error_of([&] { s.copy_to_host(nullptr, dev.data(), 16); }), "'host_dst'"));
  EXPECT_TRUE(contains(error_of([&] { s.copy_on_device(nullptr, dev.data(), 16); }), "'device_dst'"));
  Tensor null_dst = t;
  null_dst.data = nullptr;
  EXPECT_TRUE(contains(error_of([&] { s.upload(null_dst, host.data()); }), "argument 'dst'"));
  s.memset(nullptr, 0, 0);
  s.upload(empty_null_view(DType::f32, {0}), nullptr);
  s.copy_from_host(nullptr, nullptr, 0);
  // The stream is still usable after the errors.
  s.upload(t, host.data());
  s.synchronize();
  EXPECT_EQ(dev, host);
}

// The error contract (README): after a refused call the stream, the device
// and every other tensor stay usable, and the refused call wrote nothing.
TEST(ReliabilityMemory, StreamStaysUsableAfterEachKindOfError) {
  Stream s(cpu());
  std::vector<float> x{1, 2, 3, 4}, y(4, kGuard), wrong(3, kGuard);
  const Tensor xv = view_of(x, DType::f32, {4}), yv = view_of(y, DType::f32, {4});
  Tensor bad_dtype = xv;
  bad_dtype.dtype = static_cast<DType>(99);
  const std::vector<std::function<void()>> refused = {
      [&] { ops::exp(s, xv, view_of(wrong, DType::f32, {3})); },
      [&] { ops::exp(s, bad_dtype, yv); },
      [&] { ops::unary(s, static_cast<UnaryKind>(77), xv, yv); },
      [&] { ops::fill_random(s, yv, {.a = -3e38f, .b = 3e38f}); },
      [&] { s.upload(yv, nullptr); },
      [&] { ops::exp(s, xv, xv); },  // y overlaps x
  };
  for (const auto& call : refused) {
    error_of(call);
    EXPECT_TRUE(all_equal(y, kGuard));
    EXPECT_TRUE(all_equal(wrong, kGuard));
    EXPECT_EQ(x, (std::vector<float>{1, 2, 3, 4}));
  }
  ops::neg(s, xv, yv);
  s.synchronize();
  EXPECT_EQ(y, (std::vector<float>{-1, -2, -3, -4}));
}

}  // namespace
}  // namespace hal
