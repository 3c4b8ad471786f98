// ops::reduce over the last axis of [16384, 4096] (f32: 256 MiB, bf16: 128 MiB), each kind, best of 3, GB/s of x read.
// Build: g++ -O2 -std=c++20 -I<repo> reduce_rows.cpp <build>/libhal.a -ltbb -lfmt
#include "ops/ops.h"
#include "hal/registry.h"
#include "hal/stream.h"
#include "hal/buffer.h"
#include <chrono>
#include <cstdio>
using namespace hal;
int main() {
  Device& dev = device("cpu");
  Stream s(dev);
  for (DType t : {DType::f32, DType::bf16}) {
    const Shape sh{16384, 4096};
    Buffer bx = Buffer::for_tensor(dev, t, sh), by = Buffer::for_tensor(dev, t, {16384});
    Tensor x = bx.view(t, sh), y = by.view(t, {16384});
    ops::fill_random(s, x, {1, RandomDistribution::normal, 0.0f, 1.0f});
    const char* names[] = {"sum", "mean", "max", "min", "argmax"};
    for (int k = 0; k < 5; ++k) {
      Buffer bi = Buffer::for_tensor(dev, DType::i64, {16384});
      Tensor yi = bi.view(DType::i64, {16384});
      double best = 1e9;
      for (int r = 0; r < 3; ++r) { auto a = std::chrono::steady_clock::now(); ops::reduce(s, ReduceKind(k), x, k == 4 ? yi : y, {.axis = -1}); s.synchronize(); best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count()); }
      printf("%s %-7s %7.1f ms %6.1f GB/s\n", dtype_name(t).data(), names[k], best * 1e3, 16384.0 * 4096 * dtype_size(t) / best / 1e9);
    }
  }
}
