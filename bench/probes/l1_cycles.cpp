// Per-element cost of hal's CPU vector kernels with the data in L1: one
// thread, 4096 elements, best of 3000 calls, TSC cycles per element (the
// TSC runs at 2.45 GHz on the VM; the cores at about 1.2x that).
// Build: g++ -O2 -std=c++20 -I<repo> l1_cycles.cpp <build>/libhal.a -ltbb -lfmt
#include <x86intrin.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "cpu_ref/unary_table16.h"
#include "cpu_ref/vector_kernels.h"

using hal::DType;
using hal::cpu_ref::FusedOp;

int main() {
  constexpr int n = 4096;
  std::vector<float> x(n), z(n), y(n), w(n, 1.1f), b(n, 0.1f);
  std::vector<std::uint16_t> xb(n), yb(n);
  std::mt19937 gen(1);
  std::normal_distribution<float> normal;
  for (int i = 0; i < n; ++i) {
    x[i] = normal(gen);
    std::uint32_t u;
    std::memcpy(&u, &x[i], 4);
    xb[i] = static_cast<std::uint16_t>(u >> 16);
  }
  const auto& k = hal::cpu_ref::vector_kernels();
  volatile float sink = 0;
  const auto run = [&](const char* name, auto f) {
    double best = 1e30;
    for (int r = 0; r < 3000; ++r) {
      const auto t0 = __rdtsc();
      f();
      best = std::min(best, static_cast<double>(__rdtsc() - t0) / n);
    }
    std::printf("%-34s %.3f\n", name, best);
  };
  std::printf("kernel table: %s\n%-34s TSC cycles / element\n", k.name, "step");
  const std::pair<const char*, FusedOp> unary[] = {{"exp", FusedOp::exp},   {"silu", FusedOp::silu},
                                                   {"gelu", FusedOp::gelu}, {"gelu_tanh", FusedOp::gelu_tanh},
                                                   {"tanh", FusedOp::tanh}, {"relu", FusedOp::relu}};
  for (const auto& [name, op] : unary) {
    run((std::string("f32 ") + name + " (map1_fused)").c_str(), [&] { k.map1_fused(op, x.data(), DType::f32, y.data(), n, false); });
  }
  std::vector<std::uint16_t> table(65536);
  for (int i = 0; i < 65536; ++i) table[i] = static_cast<std::uint16_t>(i * 7);
  run("bf16 unary op (lookup16)", [&] { hal::cpu_ref::lookup16(table.data(), xb.data(), yb.data(), n, false); });
  run("bf16 add (map2_fused)", [&] { k.map2_fused(FusedOp::add, xb.data(), xb.data(), DType::bf16, yb.data(), n, false); });
  // softmax's three passes
  run("f32 widen_scale_max", [&] { sink = k.widen_scale_max(x.data(), DType::f32, n, 1.0f, z.data()).max; });
  run("bf16 widen_scale_max", [&] { sink = k.widen_scale_max(xb.data(), DType::bf16, n, 1.0f, z.data()).max; });
  run("exp_shifted_sum", [&] { sink = k.exp_shifted_sum(z.data(), 3.0f, z.data(), n, 5.0f, {}); });
  run("f32 scale_narrow", [&] { k.scale_narrow(z.data(), 0.5f, y.data(), DType::f32, n, false); });
  run("bf16 scale_narrow", [&] { k.scale_narrow(z.data(), 0.5f, yb.data(), DType::bf16, n, false); });
  // layernorm's three passes
  run("bf16 widen_sum", [&] { sink = k.widen_sum(xb.data(), DType::bf16, n, z.data()); });
  run("sum_squared_deviations", [&] { sink = k.sum_squared_deviations(z.data(), 0.1f, n); });
  run("bf16 layer_apply_narrow", [&] {
    k.layer_apply_narrow(z.data(), 0.1f, 1.2f, w.data(), b.data(), yb.data(), DType::bf16, n, false, {});
  });
  run("bf16 narrow (round to bf16)", [&] { k.narrow(yb.data(), DType::bf16, n, z.data()); });
}
