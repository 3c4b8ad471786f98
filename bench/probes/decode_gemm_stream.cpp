// Decode GEMMs (one row of bf16 activations times a row-major bf16 weight,
// the CPU model's layout) against what the memory gives, on 1 and 2 threads:
// each GEMM's weight GB/s, a read-only pass over 256 MiB (the rate a decode
// step could reach), and a copy of 256 MiB counted as `hal model bench`'s
// ceiling counts it (bytes read + written). The best of `reps` timings of
// each: on a shared machine the fastest repetition is the one that ran
// undisturbed. Build (from the repository root, after the cpu preset):
//   g++ -std=c++20 -O2 -mavx2 -I. bench/probes/decode_gemm_stream.cpp build/cpu/libhal.a -ltbb -lfmt -ldl \
//     -o /tmp/decode_gemm_stream
// Run: /tmp/decode_gemm_stream [reps]
#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "hal/buffer.h"
#include "hal/registry.h"
#include "hal/stream.h"
#include "ops/ops.h"

using namespace hal;

double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

// The best wall time of `reps` runs; `cpu` gets the process CPU time of that
// run divided by the thread count (the time the threads ran: on a machine
// shared with busy neighbours, the rate per CPU time is what the code itself
// reaches, the wall time mostly what the scheduler gave it).
double g_cpu_ms = 0;
template <class F> double best_ms(int reps, F&& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double c0 = cpu_ms();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (ms < best) best = ms, g_cpu_ms = cpu_ms() - c0;
  }
  return best;
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  Device& dev = hal::device("cpu");
  Stream s(dev);
  struct Shape3 { std::int64_t k, n; const char* what; };
  // The synthetic 150 MB Llama's weights (hidden 1024, kv 256, ffn 2816, vocab 8192), a 4096^2 one, and
  // the model's fused q/k/v and gate/up weights.
  const std::vector<Shape3> shapes{{1024, 1024, "q/o"}, {1024, 256, "k/v"}, {1024, 2816, "gate/up"},
                                   {2816, 1024, "down"}, {1024, 8192, "lm_head"}, {4096, 4096, "4096^2"},
                                   {1024, 1536, "qkv"}, {1024, 5632, "gate_up"}};
  // Enough copies of each weight that one pass over them leaves the 32 MiB L3.
  for (int threads : {1, 2}) {
    tbb::task_arena arena(threads);
    arena.execute([&] {
      for (const Shape3& sh : shapes) {
        const std::int64_t bytes = sh.k * sh.n * 2;
        const std::int64_t copies = std::max<std::int64_t>(1, (std::int64_t{128} << 20) / bytes);
        std::vector<Buffer> w;
        for (std::int64_t c = 0; c < copies; ++c) {
          w.push_back(Buffer::for_tensor(dev, DType::bf16, Shape{sh.k, sh.n}));
          ops::fill_random(s, w.back().view(DType::bf16, Shape{sh.k, sh.n}), {7u + static_cast<std::uint64_t>(c)});
        }
        Buffer a = Buffer::for_tensor(dev, DType::bf16, Shape{1, sh.k}), y = Buffer::for_tensor(dev, DType::bf16, Shape{1, sh.n});
        ops::fill_random(s, a.view(DType::bf16, Shape{1, sh.k}), {3u});
        auto pass = [&] {
          for (const Buffer& b : w) {
            GemmCall g;
            g.a = a.view(DType::bf16, Shape{1, sh.k});
            g.b = b.view(DType::bf16, Shape{sh.k, sh.n});
            g.c = y.view(DType::bf16, Shape{1, sh.n});
            ops::run(s, g);
          }
          s.synchronize();
        };
        pass();
        const double ms = best_ms(reps, pass), cpu = g_cpu_ms / threads;
        const double total = static_cast<double>(bytes * copies);
        fmt::print("{} thread(s) gemm 1x{}x{} ({:<7}) {:8.3f} ms per pass of {} = {:6.2f} GB/s of weights "
                   "(per CPU time {:6.2f})\n", threads, sh.k, sh.n, sh.what, ms, copies, total / (ms * 1e-3) * 1e-9,
                   total / (cpu * 1e-3) * 1e-9);
      }
      const std::int64_t n = std::int64_t{256} << 20;
      std::vector<std::uint64_t> src(static_cast<std::size_t>(n / 8), 1), dst(static_cast<std::size_t>(n / 8), 0);
      std::uint64_t sink = 0;
      const std::int64_t blocks = 64, per = n / 8 / blocks;
      const double read_ms = best_ms(reps / 4 + 1, [&] {
        std::vector<std::uint64_t> part(blocks);
        tbb::parallel_for(std::int64_t{0}, blocks, [&](std::int64_t b) {
          std::uint64_t x = 0;
          for (std::int64_t i = b * per; i < (b + 1) * per; ++i) x ^= src[static_cast<std::size_t>(i)];
          part[static_cast<std::size_t>(b)] = x;
        });
        for (auto v : part) sink ^= v;
      });
      const double read_cpu = g_cpu_ms / threads;
      const double copy_ms = best_ms(reps / 4 + 1, [&] {
        tbb::parallel_for(std::int64_t{0}, blocks, [&](std::int64_t b) {
          std::memcpy(dst.data() + b * per, src.data() + b * per, static_cast<std::size_t>(per * 8));
        });
      });
      const double copy_cpu = g_cpu_ms / threads, bn = static_cast<double>(n);
      fmt::print("{} thread(s) read 256 MiB: {:6.2f} GB/s (per CPU time {:6.2f}); copy 256 MiB: {:6.2f} GB/s "
                 "(per CPU time {:6.2f}; read + written){}\n", threads, bn / (read_ms * 1e-3) * 1e-9,
                 bn / (read_cpu * 1e-3) * 1e-9, 2 * bn / (copy_ms * 1e-3) * 1e-9, 2 * bn / (copy_cpu * 1e-3) * 1e-9,
                 sink == 12345 ? " " : "");
    });
  }
}
