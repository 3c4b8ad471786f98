// CPU reference: embedding (cpu_ref/embedding.cpp) and fill_random
// (cpu_ref/fill_random.cpp).
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "hal/dtype.h"
#include "hal/error.h"
#include "hal/philox.h"
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

// table[r][c] = 10 r + c
std::vector<float> numbered_table(int rows, int cols) {
  std::vector<float> t(rows * cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) t[r * cols + c] = static_cast<float>(10 * r + c);
  return t;
}

TEST(CpuEmbeddingRandomEmbedding, GathersRowsForAnyIdsShape) {
  hal::Stream s(cpu());
  auto table = numbered_table(5, 3);
  std::vector<std::int32_t> ids{4, 0, 2, 4};
  std::vector<float> y(12, -1.0f);
  hal::ops::embedding(s, view_of(table, DType::f32, {5, 3}), view_of(ids, DType::i32, {2, 2}),
                      view_of(y, DType::f32, {2, 2, 3}));
  EXPECT_EQ(y, (std::vector<float>{40, 41, 42, 0, 1, 2, 20, 21, 22, 40, 41, 42}));
}

TEST(CpuEmbeddingRandomEmbedding, I64IdsBf16TableAndStridedViews) {
  hal::Stream s(cpu());
  // The table is the first 2 columns of a [6, 4] buffer; ids are a transposed view.
  std::vector<std::uint16_t> store(24);
  for (int i = 0; i < 24; ++i) store[i] = hal::f32_to_bf16(static_cast<float>(i) + 0.5f);
  Tensor table = view_of(store, DType::bf16, {6, 4});
  table.shape = {6, 2};
  std::vector<std::int64_t> ids_store{5, 1, 3, 0, 2, 5};  // [2, 3]
  const Tensor ids = view_of(ids_store, DType::i64, {2, 3}).transposed(0, 1);  // [3, 2]: 5 0 / 1 2 / 3 5
  std::vector<std::uint16_t> y(3 * 2 * 2, 0);
  hal::ops::embedding(s, table, ids, view_of(y, DType::bf16, {3, 2, 2}));
  const std::int64_t order[] = {5, 0, 1, 2, 3, 5};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(y[2 * i], store[order[i] * 4]) << i;
    EXPECT_EQ(y[2 * i + 1], store[order[i] * 4 + 1]) << i;
  }
}

TEST(CpuEmbeddingRandomEmbedding, OutOfRangeIdThrowsBeforeWritingAnything) {
  hal::Stream s(cpu());
  auto table = numbered_table(5, 3);
  for (const auto& [ids, bad] : {std::pair{std::vector<std::int32_t>{1, 2, 5, 0}, std::string("5 at position 2")},
                                 std::pair{std::vector<std::int32_t>{0, -1, 1, 7}, std::string("-1 at position 1")}}) {
    auto ids_copy = ids;
    std::vector<float> y(12, -1.0f);
    try {
      hal::ops::embedding(s, view_of(table, DType::f32, {5, 3}), view_of(ids_copy, DType::i32, {4}),
                          view_of(y, DType::f32, {4, 3}));
      ADD_FAILURE() << "no error for " << bad;
    } catch (const hal::Error& e) {
      EXPECT_EQ(e.code(), hal::ErrorCode::invalid_argument);
      const std::string what = e.what();
      EXPECT_NE(what.find("embedding"), std::string::npos) << what;
      EXPECT_NE(what.find(bad), std::string::npos) << what;
    }
    EXPECT_EQ(y, std::vector<float>(12, -1.0f)) << "y written before the error";
  }
}

TEST(CpuEmbeddingRandomEmbedding, LargeI64IdsBeyondInt32Vocab) {
  // An i64 id above 2^32 must not wrap into range.
  hal::Stream s(cpu());
  auto table = numbered_table(3, 2);
  std::vector<std::int64_t> ids{(std::int64_t{1} << 32) + 1};
  std::vector<float> y(2, -1.0f);
  EXPECT_THROW(hal::ops::embedding(s, view_of(table, DType::f32, {3, 2}), view_of(ids, DType::i64, {1}),
                                   view_of(y, DType::f32, {1, 2})),
               hal::Error);
  EXPECT_EQ(y, (std::vector<float>{-1.0f, -1.0f}));
}

TEST(CpuEmbeddingRandomEmbedding, EmptyIdsWriteNothing) {
  hal::Stream s(cpu());
  auto table = numbered_table(3, 2);
  std::vector<std::int32_t> ids{0};
  std::vector<float> y{-1.0f};
  hal::ops::embedding(s, view_of(table, DType::f32, {3, 2}), view_of(ids, DType::i32, {2, 0}),
                      view_of(y, DType::f32, {2, 0, 2}));
  EXPECT_EQ(y[0], -1.0f);
}

TEST(CpuEmbeddingRandomFill, ValuesAreThePhiloxContract) {
  hal::Stream s(cpu());
  constexpr std::int64_t n = 5003;
  std::vector<float> u(n), z(n);
  hal::ops::fill_random(s, view_of(u, DType::f32, {n}), {.seed = 42, .a = -2.0f, .b = 3.0f});
  hal::ops::fill_random(s, view_of(z, DType::f32, {n}),
                        {.seed = 42, .distribution = hal::RandomDistribution::normal, .a = 1.0f, .b = 0.5f});
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(u[i], hal::philox_uniform(42, static_cast<std::uint64_t>(i), -2.0f, 3.0f)) << i;
    ASSERT_EQ(z[i], hal::philox_normal(42, static_cast<std::uint64_t>(i), 1.0f, 0.5f)) << i;
    ASSERT_GE(u[i], -2.0f);
    ASSERT_LT(u[i], 3.0f);
  }
}

TEST(CpuEmbeddingRandomFill, SameSeedSameBitsOtherSeedOtherBits) {
  hal::Stream s(cpu());
  constexpr std::int64_t n = 4099;
  std::vector<float> a(n), b(n), c(n);
  hal::ops::fill_random(s, view_of(a, DType::f32, {n}), {.seed = 7});
  hal::ops::fill_random(s, view_of(b, DType::f32, {n}), {.seed = 7});
  hal::ops::fill_random(s, view_of(c, DType::f32, {n}), {.seed = 8});
  EXPECT_EQ(std::memcmp(a.data(), b.data(), n * sizeof(float)), 0);
  int same = 0;
  for (std::int64_t i = 0; i < n; ++i) same += a[i] == c[i];
  EXPECT_LT(same, 5);
}

TEST(CpuEmbeddingRandomFill, NormalHasTheRequestedMoments) {
  hal::Stream s(cpu());
  constexpr std::int64_t n = 200000;
  std::vector<float> z(n);
  hal::ops::fill_random(s, view_of(z, DType::f32, {n}),
                        {.seed = 3, .distribution = hal::RandomDistribution::normal, .a = 2.0f, .b = 3.0f});
  double sum = 0, sum_sq = 0;
  for (float v : z) {
    sum += v;
    sum_sq += static_cast<double>(v) * v;
  }
  const double mean = sum / n;
  const double stddev = std::sqrt(sum_sq / n - mean * mean);
  EXPECT_NEAR(mean, 2.0, 0.03);  // standard error 3 / sqrt(2e5) ~ 0.0067
  EXPECT_NEAR(stddev, 3.0, 0.03);
}

TEST(CpuEmbeddingRandomFill, NarrowAndWideFillsAgreeWithF32) {
  hal::Stream s(cpu());
  constexpr std::int64_t n = 3001;
  const hal::ops::RandomOptions options{.seed = 99, .distribution = hal::RandomDistribution::normal};
  std::vector<float> f(n);
  std::vector<std::uint16_t> bf(n), h(n);
  std::vector<double> d(n);
  hal::ops::fill_random(s, view_of(f, DType::f32, {n}), options);
  hal::ops::fill_random(s, view_of(bf, DType::bf16, {n}), options);
  hal::ops::fill_random(s, view_of(h, DType::f16, {n}), options);
  hal::ops::fill_random(s, view_of(d, DType::f64, {n}), options);
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(bf[i], hal::f32_to_bf16(f[i])) << i;
    ASSERT_EQ(h[i], hal::f32_to_f16(f[i])) << i;
    ASSERT_EQ(d[i], static_cast<double>(f[i])) << i;
  }
}

TEST(CpuEmbeddingRandomFill, StridedOutputUsesLogicalIndex) {
  hal::Stream s(cpu());
  constexpr int R = 3, C = 4;
  std::vector<float> store(R * C + 1, -5.0f);  // one sentinel past the end
  // A transposed view: logical [R, C] element (r, c) lives at c * R + r.
  const Tensor y = view_of(store, DType::f32, {C, R}).transposed(0, 1);
  hal::ops::fill_random(s, y, {.seed = 11});
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c)
      EXPECT_EQ(store[c * R + r], hal::philox_uniform(11, static_cast<std::uint64_t>(r * C + c), 0.0f, 1.0f));
  EXPECT_EQ(store[R * C], -5.0f);
}

TEST(CpuEmbeddingRandomDeterminism, SameBitsForOneAndManyThreads) {
  constexpr std::int64_t n = 120007, dim = 16, vocab = 1000;
  std::vector<float> table(vocab * dim);
  for (std::int64_t i = 0; i < vocab * dim; ++i) table[i] = static_cast<float>(i % 977) * 0.25f;
  std::vector<std::int32_t> ids(n / dim);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int32_t>((i * 7919) % vocab);
  auto run = [&](int threads) {
    std::vector<std::uint16_t> noise(n);
    std::vector<float> rows(ids.size() * dim);
    tbb::task_arena arena(threads);
    arena.execute([&] {
      hal::Stream s(cpu());
      hal::ops::fill_random(s, view_of(noise, DType::bf16, {n}),
                            {.seed = 5, .distribution = hal::RandomDistribution::normal});
      hal::ops::embedding(s, view_of(table, DType::f32, {vocab, dim}),
                          view_of(ids, DType::i32, {static_cast<std::int64_t>(ids.size())}),
                          view_of(rows, DType::f32, {static_cast<std::int64_t>(ids.size()), dim}));
    });
    return std::make_pair(noise, rows);
  };
  const auto one = run(1);
  EXPECT_TRUE(one == run(4));
  EXPECT_TRUE(one == run(tbb::task_arena::automatic));
  // And the rows are the right ones.
  for (std::size_t i = 0; i < ids.size(); ++i) ASSERT_EQ(one.second[i * dim + 3], table[ids[i] * dim + 3]) << i;
}

}  // namespace
