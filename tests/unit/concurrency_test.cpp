// Several host threads using hal at once: each on its own stream, all on one
// shared stream, the first use of the lazily built 16-bit unary tables from
// many threads at once, and the device registry. Every thread's results must
// have the bits of the same work run serially. Part of the unit tests, and the
// whole of hal_tsan_tests (preset tsan), where ThreadSanitizer watches these
// threads and, through the std::thread stand-in for oneTBB, the helper threads
// of every parallel loop inside the ops.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <tbb/task_arena.h>

#include "hal/registry.h"
#include "hal/stream.h"
#include "ops/ops.h"
#include "test_helpers.h"

namespace {

using hal::DType;
using hal::test::cpu;
using hal::test::view_of;

constexpr int kThreads = 8;

// Deterministic inputs in [-1, 1), different for each seed.
std::vector<float> values(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>((static_cast<std::uint32_t>(i) * 2654435761u + seed * 40503u) % 2048u) / 1024.0f - 1.0f;
  return v;
}

std::vector<std::uint16_t> bf16_values(std::size_t n, std::uint32_t seed) {
  std::vector<std::uint16_t> v(n);
  const std::vector<float> f = values(n, seed);
  for (std::size_t i = 0; i < n; ++i) v[i] = hal::f32_to_bf16(4.0f * f[i]);
  return v;
}

// One thread's work: the ops whose CPU kernels run parallel loops or use
// lazily built state (gemm, attention, softmax, rmsnorm, a reduction, a
// broadcast binary op, a bf16 unary op through its table, embedding). Sizes
// are large enough for the loops to split.
struct Workload {
  static constexpr int M = 48, K = 40, N = 36;
  static constexpr int S = 24, H = 4, D = 16;
  explicit Workload(std::uint32_t seed)
      : a(values(M * K, seed)), b(values(K * N, seed + 1)), c(M * N),
        q(values(S * H * D, seed + 2)), k(values(S * H * D, seed + 3)), v(values(S * H * D, seed + 4)),
        att(S * H * D), soft(M * N), biased(M * N), norm(M * N), weight(values(N, seed + 5)), sums(M),
        x16(bf16_values(4096, seed + 6)), y16(4096), ids{3, 0, 47, 12, 5, 5}, rows(ids.size() * K) {}

  void run(hal::Stream& s) {
    hal::ops::gemm(s, view_of(a, DType::f32, {M, K}), view_of(b, DType::f32, {K, N}), view_of(c, DType::f32, {M, N}));
    hal::ops::attention(s, view_of(q, DType::f32, {1, S, H, D}), view_of(k, DType::f32, {1, S, H, D}),
                        view_of(v, DType::f32, {1, S, H, D}), view_of(att, DType::f32, {1, S, H, D}), {.causal = true});
    hal::ops::softmax(s, view_of(c, DType::f32, {M, N}), view_of(soft, DType::f32, {M, N}));
    hal::ops::rmsnorm(s, view_of(c, DType::f32, {M, N}), view_of(weight, DType::f32, {N}), view_of(norm, DType::f32, {M, N}));
    hal::ops::sum(s, view_of(norm, DType::f32, {M, N}), view_of(sums, DType::f32, {M}), {.axis = 1});
    hal::ops::add(s, view_of(soft, DType::f32, {M, N}), view_of(weight, DType::f32, {N}), view_of(biased, DType::f32, {M, N}));
    hal::ops::exp(s, view_of(x16, DType::bf16, {4096}), view_of(y16, DType::bf16, {4096}));
    hal::ops::embedding(s, view_of(a, DType::f32, {M, K}), view_of(ids, DType::i32, {static_cast<std::int64_t>(ids.size())}),
                        view_of(rows, DType::f32, {static_cast<std::int64_t>(ids.size()), K}));
    s.synchronize();
  }

  bool same_bits(const Workload& o) const {
    auto eq = [](const auto& x, const auto& y) {
      return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0;
    };
    return eq(c, o.c) && eq(att, o.att) && eq(soft, o.soft) && eq(biased, o.biased) && eq(norm, o.norm) && eq(sums, o.sums) &&
           eq(y16, o.y16) && eq(rows, o.rows);
  }

  std::vector<float> a, b, c, q, k, v, att, soft, biased, norm, weight, sums;
  std::vector<std::uint16_t> x16, y16;
  std::vector<std::int32_t> ids;
  std::vector<float> rows;
};

// Runs body(i) on kThreads threads released together.
template <class Body>
void on_threads(Body&& body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      body(i);
    });
  for (auto& t : threads) t.join();
}

std::vector<std::unique_ptr<Workload>> serial_results() {
  std::vector<std::unique_ptr<Workload>> serial;
  hal::Stream s(cpu());
  for (int i = 0; i < kThreads; ++i) {
    serial.push_back(std::make_unique<Workload>(100u * static_cast<std::uint32_t>(i)));
    tbb::task_arena one(1);
    one.execute([&] { serial.back()->run(s); });
  }
  return serial;
}

TEST(Concurrency, ThreadsOnSeparateStreamsGiveTheSerialBits) {
  const auto serial = serial_results();
  std::vector<std::unique_ptr<Workload>> parallel;
  for (int i = 0; i < kThreads; ++i) parallel.push_back(std::make_unique<Workload>(100u * static_cast<std::uint32_t>(i)));
  on_threads([&](int i) {
    hal::Stream s(cpu());
    for (int round = 0; round < 2; ++round) parallel[i]->run(s);
  });
  for (int i = 0; i < kThreads; ++i) EXPECT_TRUE(parallel[i]->same_bits(*serial[i])) << "thread " << i;
}

TEST(Concurrency, ThreadsOnOneStreamGiveTheSerialBits) {
  const auto serial = serial_results();
  std::vector<std::unique_ptr<Workload>> parallel;
  for (int i = 0; i < kThreads; ++i) parallel.push_back(std::make_unique<Workload>(100u * static_cast<std::uint32_t>(i)));
  hal::Stream shared(cpu());
  on_threads([&](int i) { parallel[i]->run(shared); });
  for (int i = 0; i < kThreads; ++i) EXPECT_TRUE(parallel[i]->same_bits(*serial[i])) << "thread " << i;
}

// The 16-bit unary tables are built on first use (a call_once per op and
// dtype). Run alone in a fresh process (ctest runs each test so) this is that
// first use, from every thread at once; the threads must agree with the
// element-wise definition the table was built from (the table's bits equal
// the general path's, cpu_unary tests), here checked between threads and
// against a table-free recomputation in f32.
TEST(Concurrency, FirstUseOfTheUnaryTablesFromManyThreads) {
  const std::vector<std::uint16_t> x = bf16_values(1 << 12, 7);
  std::vector<std::vector<std::uint16_t>> y(kThreads, std::vector<std::uint16_t>(x.size()));
  std::vector<std::vector<std::uint16_t>> yh(kThreads, std::vector<std::uint16_t>(x.size()));
  std::vector<std::uint16_t> xh(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) xh[i] = hal::f32_to_f16(hal::bf16_to_f32(x[i]));
  on_threads([&](int i) {
    hal::Stream s(cpu());
    auto xv = view_of(const_cast<std::vector<std::uint16_t>&>(x), DType::bf16, {static_cast<std::int64_t>(x.size())});
    hal::ops::neg(s, xv, view_of(y[i], DType::bf16, {static_cast<std::int64_t>(x.size())}));
    hal::ops::tanh(s, view_of(xh, DType::f16, {static_cast<std::int64_t>(x.size())}),
                   view_of(yh[i], DType::f16, {static_cast<std::int64_t>(x.size())}));
  });
  for (int i = 1; i < kThreads; ++i) {
    EXPECT_EQ(y[i], y[0]) << "thread " << i;
    EXPECT_EQ(yh[i], yh[0]) << "thread " << i;
  }
  // neg is exact: the sign bit flips and nothing else.
  for (std::size_t j = 0; j < x.size(); ++j) ASSERT_EQ(y[0][j], static_cast<std::uint16_t>(x[j] ^ 0x8000u)) << j;
  // tanh within a few f16 ulps of the f32 formula (a garbage or half-built
  // table would be far off).
  for (std::size_t j = 0; j < x.size(); ++j) {
    const float want = std::tanh(hal::f16_to_f32(xh[j]));
    ASSERT_NEAR(hal::f16_to_f32(yh[0][j]), want, 2e-3f * std::max(1.0f, std::fabs(want))) << j;
  }
}

// Lookups and registrations from many threads: every lookup of "cpu" is the
// same device, and every registered device is found under its name.
TEST(Concurrency, DeviceRegistryFromManyThreads) {
  std::vector<hal::Device*> seen(kThreads);
  std::vector<hal::Device*> registered(kThreads);
  const std::string prefix = "concurrency-test-" + std::to_string(reinterpret_cast<std::uintptr_t>(&seen)) + "-";
  on_threads([&](int i) {
    seen[i] = &hal::device("cpu");
    registered[i] = &hal::register_device(std::make_unique<hal::test::InertDevice>(prefix + std::to_string(i)), "test");
    (void)hal::devices();
    (void)hal::backends();
    EXPECT_EQ(&hal::device(prefix + std::to_string(i)), registered[i]);
  });
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_EQ(seen[i], &cpu());
    EXPECT_EQ(&hal::device(prefix + std::to_string(i)), registered[i]);
  }
}

// One op's parallel loop at several thread counts: the same bits (the
// reductions' order does not depend on the split). Under TSan this is where
// races between the chunks of one loop would show.
TEST(Concurrency, EveryThreadCountGivesTheSameBits) {
  Workload reference(5);
  {
    hal::Stream s(cpu());
    tbb::task_arena one(1);
    one.execute([&] { reference.run(s); });
  }
  for (int threads : {2, 3, 4}) {
    Workload w(5);
    hal::Stream s(cpu());
    tbb::task_arena arena(threads);
    arena.execute([&] { w.run(s); });
    EXPECT_TRUE(w.same_bits(reference)) << threads << " threads";
  }
}

}  // namespace
