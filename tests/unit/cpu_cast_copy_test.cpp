// CPU reference: cast (cpu_ref/cast.cpp) and copy (cpu_ref/copy.cpp).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "cpu_ref/kernels.h"
#include "hal/dtype.h"
#include "hal/registry.h"
#include "hal/stream.h"
#include "ops/ops.h"
#include "unit/test_helpers.h"

namespace {

using hal::test::cpu;
using hal::test::view_of;

using hal::DType;
using hal::Shape;
using hal::Tensor;

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(CpuCastCopyCast, F32ToF8E4M3SaturatesToLargestFinite) {
  hal::Stream s(cpu());
  std::vector<float> x{1000.0f, -1000.0f, 448.0f, 1.0f, kInf, -kInf, std::numeric_limits<float>::quiet_NaN(), 0.3f};
  std::vector<std::uint8_t> y(x.size(), 0xAA);
  hal::ops::cast(s, view_of(x, DType::f32, {8}), view_of(y, DType::f8e4m3, {8}));
  EXPECT_EQ(hal::f8e4m3_to_f32(y[0]), 448.0f);
  EXPECT_EQ(hal::f8e4m3_to_f32(y[1]), -448.0f);
  EXPECT_EQ(hal::f8e4m3_to_f32(y[2]), 448.0f);
  EXPECT_EQ(hal::f8e4m3_to_f32(y[3]), 1.0f);
  EXPECT_EQ(hal::f8e4m3_to_f32(y[4]), 448.0f);
  EXPECT_EQ(hal::f8e4m3_to_f32(y[5]), -448.0f);
  EXPECT_TRUE(std::isnan(hal::f8e4m3_to_f32(y[6])));
  // 0.3 lies between 0.28125 and 0.3125 (spacing 2^-5 in [0.25, 0.5)): nearest is 0.3125.
  EXPECT_EQ(hal::f8e4m3_to_f32(y[7]), 0.3125f);
}

TEST(CpuCastCopyCast, ScaleIsAppliedBeforeRounding) {
  hal::Stream s(cpu());
  std::vector<float> x{1.0f, 2.0f, 3.0f, 40000.0f};
  std::vector<std::uint16_t> y(4);
  hal::ops::cast(s, view_of(x, DType::f32, {4}), view_of(y, DType::bf16, {4}), {.scale = 0.5f});
  EXPECT_EQ(hal::bf16_to_f32(y[0]), 0.5f);
  EXPECT_EQ(hal::bf16_to_f32(y[1]), 1.0f);
  EXPECT_EQ(hal::bf16_to_f32(y[2]), 1.5f);
  EXPECT_EQ(hal::bf16_to_f32(y[3]), 19968.0f);  // 20000: spacing 128 in [16384, 32768), 156.25 -> 156
  // f16 overflows to infinity (IEEE): 40000 * 2 > 65504.
  hal::ops::cast(s, view_of(x, DType::f32, {4}), view_of(y, DType::f16, {4}), {.scale = 2.0f});
  EXPECT_EQ(hal::f16_to_f32(y[0]), 2.0f);
  EXPECT_EQ(hal::f16_to_f32(y[3]), kInf);
  // fp8 with a quantisation scale: 1000 * 0.25 = 250; e4m3 spacing in [128, 256) is 16, so 256 is nearest.
  std::vector<float> big{1000.0f, -8.0f};
  std::vector<std::uint8_t> q(2);
  hal::ops::cast(s, view_of(big, DType::f32, {2}), view_of(q, DType::f8e4m3, {2}), {.scale = 0.25f});
  EXPECT_EQ(hal::f8e4m3_to_f32(q[0]), 256.0f);
  EXPECT_EQ(hal::f8e4m3_to_f32(q[1]), -2.0f);
}

TEST(CpuCastCopyCast, F32ToBf16RoundsToNearestEvenAndBackIsExact) {
  hal::Stream s(cpu());
  std::vector<float> x{1.0f + 0x1p-8f, 1.0f + 0x1p-7f + 0x1p-8f, 1.0f + 0x1p-8f + 0x1p-20f, -0.0f};
  std::vector<std::uint16_t> y(4);
  hal::ops::cast(s, view_of(x, DType::f32, {4}), view_of(y, DType::bf16, {4}));
  EXPECT_EQ(hal::bf16_to_f32(y[0]), 1.0f);               // tie -> even
  EXPECT_EQ(hal::bf16_to_f32(y[1]), 1.0f + 0x1p-6f);     // tie -> even
  EXPECT_EQ(hal::bf16_to_f32(y[2]), 1.0f + 0x1p-7f);     // above the tie
  EXPECT_EQ(y[3], 0x8000u);                              // -0 kept
  std::vector<float> back(4);
  hal::ops::cast(s, view_of(y, DType::bf16, {4}), view_of(back, DType::f32, {4}));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(std::bit_cast<std::uint32_t>(back[i]), std::uint32_t{y[i]} << 16) << i;
}

// The vectorised bf16 path of the kernels must agree with hal's scalar
// converters on every kind of input: sampled bit patterns cover normals,
// subnormals, ties, overflow to infinity and NaNs with payloads.
TEST(CpuCastCopyCast, ContiguousConversionsAgreeWithScalarConverters) {
  hal::Stream s(cpu());
  std::vector<std::uint32_t> bits;
  for (std::uint64_t u = 0; u <= 0xffffffffu; u += 65521) bits.push_back(static_cast<std::uint32_t>(u));
  for (std::uint32_t special : {0x7f7fffffu, 0x7f7f8000u, 0x7f800000u, 0x7fc00000u, 0x7f800001u, 0xffc00001u,
                                0x00000001u, 0x80008000u, 0x3f808000u, 0x3f818000u, 0x477fefffu, 0x477ff000u})
    bits.push_back(special);
  const auto n = static_cast<std::int64_t>(bits.size());
  std::vector<float> x(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) x[i] = std::bit_cast<float>(bits[i]);
  std::vector<std::uint16_t> bf(bits.size()), h(bits.size());
  hal::ops::cast(s, view_of(x, DType::f32, {n}), view_of(bf, DType::bf16, {n}));
  hal::ops::cast(s, view_of(x, DType::f32, {n}), view_of(h, DType::f16, {n}));
  std::vector<float> back_bf(bits.size()), back_h(bits.size());
  hal::ops::cast(s, view_of(bf, DType::bf16, {n}), view_of(back_bf, DType::f32, {n}));
  hal::ops::cast(s, view_of(h, DType::f16, {n}), view_of(back_h, DType::f32, {n}));
  for (std::size_t i = 0; i < bits.size(); ++i) {
    ASSERT_EQ(bf[i], hal::f32_to_bf16(x[i])) << std::hex << bits[i];
    ASSERT_EQ(h[i], hal::f32_to_f16(x[i])) << std::hex << bits[i];
    ASSERT_EQ(std::bit_cast<std::uint32_t>(back_bf[i]), std::bit_cast<std::uint32_t>(hal::bf16_to_f32(bf[i])));
    ASSERT_EQ(std::bit_cast<std::uint32_t>(back_h[i]), std::bit_cast<std::uint32_t>(hal::f16_to_f32(h[i])));
  }
}

// Contiguous f32/bf16/f16 casts take a one-pass path on the vector kernels;
// a strided source takes the general gather/convert/scatter path. Both must
// give the same bits for every pair of dtypes, both scales, specials (NaN
// payloads, infinities, subnormals), odd lengths, and a streamed output.
TEST(CpuCastCopyCast, ContiguousPathMatchesStridedPathBitForBit) {
  hal::Stream s(cpu());
  const auto esize = [](DType t) { return t == DType::f32 ? 4 : 2; };
  const std::uint32_t specials[] = {0x7fc00001u, 0xff800000u, 0x00000003u, 0x80000000u, 0x7f7fffffu, 0x7c01u, 0xfc00u};
  for (DType from : {DType::f32, DType::bf16, DType::f16}) {
    for (DType to : {DType::f32, DType::bf16, DType::f16}) {
      for (float scale : {1.0f, 0.5f}) {
        for (std::int64_t n : {std::int64_t{1}, std::int64_t{7}, std::int64_t{2049}, std::int64_t{5003},
                               (std::int64_t{17} << 20) / 4 + 5}) {
          if (n > 5003 && !(from == DType::bf16 && to == DType::f32 && scale == 1.0f)) continue;  // one streamed case
          SCOPED_TRACE(testing::Message() << hal::dtype_name(from) << " -> " << hal::dtype_name(to) << " scale "
                                          << scale << " n " << n);
          std::vector<std::uint32_t> dense(static_cast<std::size_t>(n)), strided(2 * dense.size());
          std::uint32_t state = 12345;
          for (std::int64_t i = 0; i < n; ++i) {
            state = state * 1664525u + 1013904223u;
            std::uint32_t b = i % 11 == 0 ? specials[(i / 11) % std::size(specials)] : state;
            if (esize(from) == 2) b &= 0xffffu;
            dense[static_cast<std::size_t>(i)] = b;
          }
          // Elements of the source's dtype: 16-bit ones packed two per word.
          std::vector<std::uint16_t> d16(dense.size()), s16(2 * dense.size());
          for (std::int64_t i = 0; i < n; ++i) {
            d16[static_cast<std::size_t>(i)] = static_cast<std::uint16_t>(dense[static_cast<std::size_t>(i)]);
            s16[static_cast<std::size_t>(2 * i)] = d16[static_cast<std::size_t>(i)];
            strided[static_cast<std::size_t>(2 * i)] = dense[static_cast<std::size_t>(i)];
          }
          void* dense_data = esize(from) == 4 ? static_cast<void*>(dense.data()) : static_cast<void*>(d16.data());
          void* strided_data = esize(from) == 4 ? static_cast<void*>(strided.data()) : static_cast<void*>(s16.data());
          const Tensor x_dense = Tensor::contiguous(dense_data, &cpu(), from, {n});
          Tensor x_strided = Tensor::contiguous(strided_data, &cpu(), from, {n});
          x_strided.strides = hal::Strides{2};
          std::vector<std::uint32_t> y1(dense.size()), y2(dense.size());
          for (const auto* v : {&dense, &strided, &y1, &y2}) hal::test::register_host_memory(*v);
          for (const auto* v : {&d16, &s16}) hal::test::register_host_memory(*v);
          hal::ops::cast(s, x_dense, Tensor::contiguous(y1.data(), &cpu(), to, {n}), {.scale = scale});
          hal::ops::cast(s, x_strided, Tensor::contiguous(y2.data(), &cpu(), to, {n}), {.scale = scale});
          ASSERT_EQ(0, std::memcmp(y1.data(), y2.data(), static_cast<std::size_t>(n * esize(to))));
        }
      }
    }
  }
}

// An f64 source is rounded once to bf16, not first to f32 (which would land on
// a tie and round to even, the wrong way).
TEST(CpuCastCopyCast, F64ToBf16RoundsOnce) {
  hal::Stream s(cpu());
  std::vector<double> x{1.0 + 0x1p-8 + 0x1p-40, 1.0 + 0x1p-8 - 0x1p-40};
  std::vector<std::uint16_t> y(2);
  hal::ops::cast(s, view_of(x, DType::f64, {2}), view_of(y, DType::bf16, {2}));
  EXPECT_EQ(hal::bf16_to_f32(y[0]), 1.0f + 0x1p-7f);
  EXPECT_EQ(hal::bf16_to_f32(y[1]), 1.0f);
}

TEST(CpuCastCopyCast, StridedSourceIntoF64) {
  hal::Stream s(cpu());
  std::vector<float> x{1.5f, -2.25f, 3.0f, 0.1f, 5.0f, 6.0f};
  std::vector<double> y(6);
  hal::ops::cast(s, view_of(x, DType::f32, {2, 3}).transposed(0, 1), view_of(y, DType::f64, {3, 2}), {.scale = 3.0f});
  const std::vector<double> expected{4.5, 0.1f * 3.0, -6.75, 15.0, 9.0, 18.0};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y[i], expected[i]) << i;
}

TEST(CpuCastCopyCopy, PermutedI64IsExact) {
  hal::Stream s(cpu());
  constexpr int A = 3, B = 4, C = 5;
  std::vector<std::int64_t> x(A * B * C), y(A * B * C, 0);
  for (int i = 0; i < A * B * C; ++i) x[i] = (std::int64_t{1} << 62) + i * 1000003 + 1;  // beyond 2^53
  const Tensor xp = view_of(x, DType::i64, {A, B, C}).permuted({2, 0, 1});  // shape [C, A, B]
  hal::ops::copy(s, xp, view_of(y, DType::i64, {C, A, B}));
  for (int c = 0; c < C; ++c)
    for (int a = 0; a < A; ++a)
      for (int b = 0; b < B; ++b) ASSERT_EQ(y[(c * A + a) * B + b], x[(a * B + b) * C + c]) << c << a << b;
}

TEST(CpuCastCopyCopy, KeepsBitsOfEveryDtypeAndLeavesGapsAlone) {
  hal::Stream s(cpu());
  // NaN payload and -0 survive a same-dtype copy (no float conversion).
  std::vector<std::uint32_t> x{0x7fc12345u, 0x80000000u, 0xff800001u, 0x3f800000u};
  std::vector<std::uint32_t> y(8, 0xdeadbeefu);
  Tensor yv = view_of(y, DType::f32, {4, 2});
  yv.shape = {4};
  yv.strides = {2};  // every other element
  hal::ops::copy(s, view_of(x, DType::f32, {4}), yv);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(y[2 * i], x[i]) << i;
    EXPECT_EQ(y[2 * i + 1], 0xdeadbeefu) << "gap written at " << i;
  }
  std::vector<std::uint8_t> flags{1, 0, 1, 1, 0, 0}, flags_t(6);
  hal::ops::copy(s, view_of(flags, DType::boolean, {2, 3}).transposed(0, 1), view_of(flags_t, DType::boolean, {3, 2}));
  EXPECT_EQ(flags_t, (std::vector<std::uint8_t>{1, 1, 0, 0, 1, 0}));
  std::vector<std::uint16_t> h{0x7e01, 0xfc00, 0x0001}, h2(3);
  hal::ops::copy(s, view_of(h, DType::f16, {3}), view_of(h2, DType::f16, {3}));
  EXPECT_EQ(h2, h);
}

TEST(CpuCastCopyCopy, LargeContiguousAndEmpty) {
  hal::Stream s(cpu());
  constexpr std::int64_t n = 100003;
  std::vector<std::int32_t> x(n), y(n, -1);
  for (std::int64_t i = 0; i < n; ++i) x[i] = static_cast<std::int32_t>(i * 7919 - 50000);
  hal::ops::copy(s, view_of(x, DType::i32, {n}), view_of(y, DType::i32, {n}));
  EXPECT_EQ(y, x);
  std::vector<std::int32_t> sentinel{42};
  hal::ops::copy(s, view_of(x, DType::i32, {0}), view_of(sentinel, DType::i32, {0}));
  EXPECT_EQ(sentinel[0], 42);
}

// An output of 16 MiB or more is written with streaming stores: the same
// bytes, at an odd element offset (unaligned head) and length (tail).
TEST(CpuCastCopyCopy, StreamingLargeOutputKeepsEveryByte) {
  hal::Stream s(cpu());
  constexpr std::int64_t n = (std::int64_t{17} << 20) / 2 + 3;  // just over 17 MiB of 16-bit elements
  std::vector<std::uint16_t> x(n + 1), y(n + 2, 0xABCD);
  for (std::int64_t i = 0; i <= n; ++i) x[i] = static_cast<std::uint16_t>(i * 40503u + 17u);
  hal::test::register_host_memory(x);
  hal::test::register_host_memory(y);
  hal::ops::copy(s, Tensor::contiguous(x.data() + 1, &cpu(), DType::bf16, {n}),
                 Tensor::contiguous(y.data() + 1, &cpu(), DType::bf16, {n}));
  EXPECT_EQ(y[0], 0xABCD);
  EXPECT_EQ(y[n + 1], 0xABCD);
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i + 1], x[i + 1]) << i;
}

// Different dtypes (when the op layer allows it) convert through fp64: exact
// for i32 -> f64.
TEST(CpuCastCopyCopy, ConvertsBetweenDtypesExactly) {
  std::vector<std::int32_t> x{-2147483647 - 1, 2147483647, 0, -5};
  std::vector<double> y(4);
  hal::cpu_ref::copy({view_of(x, DType::i32, {4}), view_of(y, DType::f64, {4})});
  EXPECT_EQ(y, (std::vector<double>{-2147483648.0, 2147483647.0, 0.0, -5.0}));
}

}  // namespace
