// hal/shape.h: Dims, checked size arithmetic, strides, axes and broadcasting.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "hal/error.h"
#include "hal/shape.h"
#include "unit/test_helpers.h"

namespace {

using hal::test::error_of;

using hal::Dims;
using hal::Shape;
using hal::Strides;

constexpr std::int64_t kBig = std::int64_t{1} << 40;

TEST(Shape, DimsBasics) {
  const Dims d{2, 3, 4};
  EXPECT_EQ(d.rank(), 3);
  EXPECT_EQ(d[1], 3);
  EXPECT_EQ(d.back(), 4);
  EXPECT_EQ(d.str(), "[2, 3, 4]");
  EXPECT_EQ(Dims{}.str(), "[]");
  EXPECT_EQ(Dims{}.rank(), 0);
  EXPECT_TRUE((Dims{2, 3} == Dims{2, 3}));
  EXPECT_FALSE((Dims{2, 3} == Dims{2, 3, 1}));
  EXPECT_FALSE((Dims{2, 3} == Dims{3, 2}));

  Dims e{5, 6, 7};
  e.erase(1);
  EXPECT_EQ(e, (Dims{5, 7}));
  e.insert(0, 9);
  EXPECT_EQ(e, (Dims{9, 5, 7}));
  e.insert(3, 1);
  EXPECT_EQ(e, (Dims{9, 5, 7, 1}));
  e.push_back(2);
  EXPECT_EQ(e.rank(), 5);
}

TEST(Shape, RankLimitAndBadPositionsThrow) {
  Dims full{1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(full.rank(), hal::kMaxRank);
  std::string msg = error_of([&] { full.push_back(9); });
  EXPECT_NE(msg.find("rank"), std::string::npos) << msg;
  EXPECT_NE(msg.find("at most 8"), std::string::npos) << msg;
  error_of([&] { full.insert(0, 1); });
  error_of([] { Dims too_many{1, 2, 3, 4, 5, 6, 7, 8, 9}; });
  Dims d{1, 2};
  msg = error_of([&] { d.erase(2); });
  EXPECT_NE(msg.find("axis"), std::string::npos) << msg;
  error_of([&] { d.insert(3, 1); });
  error_of([&] { d.insert(-1, 1); });
  EXPECT_EQ(d, (Dims{1, 2}));  // unchanged by the failed calls
}

TEST(Shape, CheckedNumel) {
  EXPECT_EQ(hal::checked_numel(Shape{2, 3, 4}), 24);
  EXPECT_EQ(hal::checked_numel(Shape{}), 1);
  EXPECT_EQ(hal::checked_numel(Shape{5, 0, 3}), 0);
  // An empty tensor is empty even when the other dimensions multiply past int64.
  EXPECT_EQ(hal::checked_numel(Shape{kBig, kBig, 0}), 0);

  std::string msg = error_of([] { hal::checked_numel(Shape{kBig, kBig}, "my_op"); });
  EXPECT_EQ(msg.rfind("my_op: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("overflow"), std::string::npos) << msg;
  msg = error_of([] { hal::checked_numel(Shape{4, -1}, "reshape"); });
  EXPECT_EQ(msg.rfind("reshape: argument 'shape'", 0), 0u) << msg;
  EXPECT_NE(msg.find("[4, -1]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("non-negative"), std::string::npos) << msg;
}

TEST(Shape, CheckedMulAdd) {
  EXPECT_EQ(hal::checked_mul(kBig, 1 << 20, "x"), std::int64_t{1} << 60);
  EXPECT_EQ(hal::checked_add(INT64_MAX - 1, 1, "x"), INT64_MAX);
  std::string msg = error_of([] { hal::checked_mul(kBig, kBig, "gemm"); });
  EXPECT_EQ(msg.rfind("gemm: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("overflow"), std::string::npos) << msg;
  msg = error_of([] { hal::checked_add(INT64_MAX, 1, "concat"); });
  EXPECT_EQ(msg.rfind("concat: ", 0), 0u) << msg;
  error_of([] { hal::checked_mul(INT64_MIN, -1, "x"); });
}

TEST(Shape, ContiguousStrides) {
  EXPECT_EQ(hal::contiguous_strides(Shape{2, 3, 4}), (Strides{12, 4, 1}));
  EXPECT_EQ(hal::contiguous_strides(Shape{7}), (Strides{1}));
  EXPECT_EQ(hal::contiguous_strides(Shape{}), (Strides{}));
  EXPECT_EQ(hal::contiguous_strides(Shape{2, 0, 3}), (Strides{3, 3, 1}));

  EXPECT_TRUE(hal::is_contiguous(Shape{2, 3, 4}, Strides{12, 4, 1}));
  EXPECT_FALSE(hal::is_contiguous(Shape{2, 3}, Strides{1, 2}));   // transposed
  EXPECT_FALSE(hal::is_contiguous(Shape{2, 3}, Strides{4, 1}));   // padded rows
  EXPECT_FALSE(hal::is_contiguous(Shape{2, 3}, Strides{0, 1}));   // broadcast
  EXPECT_TRUE(hal::is_contiguous(Shape{2, 1, 3}, Strides{3, 99, 1}));  // size-1 stride is irrelevant
  EXPECT_TRUE(hal::is_contiguous(Shape{2, 0, 3}, Strides{5, 7, 9}));   // empty
  EXPECT_TRUE(hal::is_contiguous(Shape{}, Strides{}));
}

TEST(Shape, NormalizeAxis) {
  EXPECT_EQ(hal::normalize_axis(-1, 3, "softmax"), 2);
  EXPECT_EQ(hal::normalize_axis(-3, 3, "softmax"), 0);
  EXPECT_EQ(hal::normalize_axis(2, 3, "softmax"), 2);
  std::string msg = error_of([] { hal::normalize_axis(3, 3, "softmax"); });
  EXPECT_EQ(msg, "softmax: argument 'axis': expected an axis in [-3, 2], given 3");
  msg = error_of([] { hal::normalize_axis(-4, 3, "sum", "dim"); });
  EXPECT_EQ(msg.rfind("sum: argument 'dim'", 0), 0u) << msg;
  EXPECT_NE(msg.find("-4"), std::string::npos) << msg;
  error_of([] { hal::normalize_axis(0, 0, "sum"); });  // a scalar has no axis
}

TEST(Shape, BroadcastShapes) {
  EXPECT_EQ(hal::broadcast_shapes(Shape{4, 1, 3}, Shape{5, 1}, "add"), (Shape{4, 5, 3}));
  EXPECT_EQ(hal::broadcast_shapes(Shape{}, Shape{2, 3}, "add"), (Shape{2, 3}));
  EXPECT_EQ(hal::broadcast_shapes(Shape{2, 3}, Shape{}, "add"), (Shape{2, 3}));
  EXPECT_EQ(hal::broadcast_shapes(Shape{0, 3}, Shape{1, 3}, "add"), (Shape{0, 3}));
  EXPECT_EQ(hal::broadcast_shapes(Shape{1}, Shape{0}, "add"), (Shape{0}));
  std::string msg = error_of([] { hal::broadcast_shapes(Shape{2, 3}, Shape{4, 3}, "mul"); });
  EXPECT_EQ(msg.rfind("mul: argument 'b'", 0), 0u) << msg;
  EXPECT_NE(msg.find("[2, 3]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[4, 3]"), std::string::npos) << msg;
  error_of([] { hal::broadcast_shapes(Shape{2}, Shape{0}, "add"); });
}

TEST(Shape, BroadcastStrides) {
  // [3, 1] read as [2, 3, 4]: new leading dim and the size-1 dim get stride 0.
  EXPECT_EQ(hal::broadcast_strides(Shape{3, 1}, Strides{1, 1}, Shape{2, 3, 4}), (Strides{0, 1, 0}));
  EXPECT_EQ(hal::broadcast_strides(Shape{2, 3}, Strides{1, 2}, Shape{2, 3}), (Strides{1, 2}));
  EXPECT_EQ(hal::broadcast_strides(Shape{}, Strides{}, Shape{5}), (Strides{0}));
}

}  // namespace
