// What does the validation layer (hal/bounds_check.h) cost per op? One process
// times the same tiny ops with the checks on and off in turn (set_bounds_checks),
// 9 rounds of 20000 calls each, and prints the median ns per call of each and
// their difference:
//   the check of an add call alone (3 tensors; off: the enabled test only),
//   add f32 [1, 64] (3 tensors), gemm f32 8x8x8 (3 tensors), a 64-byte memset;
//   with 3 live allocations, then with 2000 more live (a model's weights);
//   then the add on 2 host threads at once (the shared lock's cache line).
// Build (from build/cpu):
//   g++ -O2 -std=c++20 -I../.. ../../bench/probes/validation_cost.cpp libhal.a -lfmt -ltbb -ldl -pthread
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

#include "hal/bounds_check.h"
#include "hal/buffer.h"
#include "hal/registry.h"
#include "hal/stream.h"
#include "ops/ops.h"

namespace {

constexpr int kRounds = 9, kCalls = 20000;

double ns_per_call(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kCalls; ++i) f();
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / kCalls;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// `threads` copies of f (each its own), on and off in turn; medians of the rounds.
void measure(const char* name, int threads, const std::function<std::function<void()>(int)>& make) {
  std::vector<double> on, off;
  for (int r = 0; r < kRounds; ++r) {
    for (bool enabled : {true, false}) {
      hal::set_bounds_checks(enabled);
      std::vector<double> per(static_cast<std::size_t>(threads));
      std::vector<std::thread> ts;
      for (int t = 0; t < threads; ++t)
        ts.emplace_back([&, t] { per[static_cast<std::size_t>(t)] = ns_per_call(make(t)); });
      for (auto& th : ts) th.join();
      (enabled ? on : off).push_back(*std::max_element(per.begin(), per.end()));
    }
  }
  hal::set_bounds_checks(true);
  const double a = median(on), b = median(off);
  std::printf("%-44s on %8.1f ns  off %8.1f ns  cost %6.1f ns (%5.1f%%)\n", name, a, b, a - b, 100.0 * (a - b) / b);
}

}  // namespace

int main() {
  hal::Device& dev = hal::device("cpu");
  struct Operands {
    hal::Stream s;
    hal::Buffer x, w, y, m;
    explicit Operands(hal::Device& d)
        : s(d), x(d, 256), w(d, 256), y(d, 256), m(d, 64) {}
  };
  std::vector<std::unique_ptr<Operands>> ops;
  for (int t = 0; t < 2; ++t) ops.push_back(std::make_unique<Operands>(dev));
  const auto add = [&](int t) -> std::function<void()> {
    Operands& o = *ops[static_cast<std::size_t>(t)];
    const hal::Tensor x = o.x.view(hal::DType::f32, {1, 64}), y = o.y.view(hal::DType::f32, {1, 64});
    return [&o, x, y] { hal::ops::add(o.s, x, x, y); };
  };
  const auto gemm = [&](int t) -> std::function<void()> {
    Operands& o = *ops[static_cast<std::size_t>(t)];
    const hal::Tensor a = o.x.view(hal::DType::f32, {8, 8}), b = o.w.view(hal::DType::f32, {8, 8}),
                      c = o.y.view(hal::DType::f32, {8, 8});
    return [&o, a, b, c] { hal::ops::gemm(o.s, a, b, c); };
  };
  const auto memset = [&](int t) -> std::function<void()> {
    Operands& o = *ops[static_cast<std::size_t>(t)];
    return [&o] { o.s.memset(o.m.data(), 0, 64); };
  };
  // The check alone, without the op: what the layer adds to any op of 3 tensors.
  const auto check_only = [&](int t) -> std::function<void()> {
    Operands& o = *ops[static_cast<std::size_t>(t)];
    const hal::Tensor x = o.x.view(hal::DType::f32, {1, 64}), y = o.y.view(hal::DType::f32, {1, 64});
    const hal::OpCall call = hal::BinaryCall{hal::BinaryKind::add, x, x, y};
    return [call] { hal::validate_op_bounds(call); };
  };
  measure("the check of an add call alone", 1, check_only);
  measure("add f32 [1, 64]", 1, add);
  measure("gemm f32 8x8x8", 1, gemm);
  measure("memset 64 B", 1, memset);
  std::vector<hal::Buffer> weights;
  for (int i = 0; i < 2000; ++i) weights.emplace_back(dev, 4096);
  measure("the check alone, 2000 more live buffers", 1, check_only);
  measure("add f32 [1, 64], 2000 more live buffers", 1, add);
  measure("gemm f32 8x8x8, 2000 more live buffers", 1, gemm);
  measure("the check alone, 2 threads at once", 2, check_only);
  measure("add f32 [1, 64], 2 threads at once", 2, add);
  return 0;
}
