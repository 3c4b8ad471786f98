// Orders of streaming a decode weight (one row of A, a row-major bf16 B split
// by columns over 2 threads, as gemm_blocked.cpp splits a decode GEMM),
// each timed pass by pass in turn with the kept one, same kernel
// (cpu_ref/gemm_stream_rows_avx2.cpp):
//  - kept: groups of 8 rows, each across the thread's whole column range;
//  - chunk-major: one 64-column chunk over all of K, then the next (a
//    constant-stride stream per chunk, accumulators never leave registers);
//  - blocked layout: each thread's columns stored contiguously, [2][K][N/2]
//    (every thread's rows back to back) instead of interleaved in [K][N].
// Prints the median time ratio to the kept order and the median GB/s of each.
// Build (from the repository root, after the cpu preset):
//   g++ -std=c++20 -O2 -mavx2 -mfma -I. bench/probes/decode_stream_order.cpp build/cpu/libhal.a -ltbb -lfmt -ldl \
//     -o /tmp/decode_stream_order
// Run: /tmp/decode_stream_order [passes]
#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "cpu_ref/gemm_stream_rows.h"

int main(int argc, char** argv) {
  using namespace hal::cpu_ref;
  const int passes = argc > 1 ? std::atoi(argv[1]) : 20;
  constexpr int kThreads = 2;
  enum Order { kept, chunk_major, blocked_layout };
  struct Shape { std::int64_t k, n; };
  for (const Shape sh : {Shape{1024, 1024}, Shape{2816, 1024}, Shape{1024, 1536}, Shape{1024, 5632}}) {
    const std::int64_t bytes = sh.k * sh.n * 2, copies = std::max<std::int64_t>(1, (std::int64_t{128} << 20) / bytes);
    std::vector<std::vector<std::uint16_t>> w(copies), blocked(copies);
    for (auto& b : w) b.assign(sh.k * sh.n, 0x3f80);  // bf16 1.0
    for (auto& b : blocked) b.assign(sh.k * sh.n, 0x3f80);
    std::vector<float> a(sh.k * kAvx2Mr, 0.5f);
    const std::int64_t cols = sh.n / kThreads, panels = cols / kAvx2Nr;
    std::vector<std::vector<float>> acc(kThreads, std::vector<float>(panels * kAvx2Mr * kAvx2Nr));
    auto pass = [&](Order order) {
      const auto t0 = std::chrono::steady_clock::now();
      for (std::int64_t c = 0; c < copies; ++c)
        tbb::parallel_for(0, kThreads, [&](int t) {
          float* out = acc[t].data();
          if (order == blocked_layout) {
            stream_b_rows_avx2(sh.k, a.data(), 1, blocked[c].data() + t * sh.k * cols, hal::DType::bf16, cols, panels, out, 1);
            return;
          }
          const std::uint16_t* b = w[c].data() + t * cols;
          if (order == kept) {
            stream_b_rows_avx2(sh.k, a.data(), 1, b, hal::DType::bf16, sh.n, panels, out, 1);
            return;
          }
          for (std::int64_t p = 0; p < panels; p += 4)
            stream_b_rows_avx2(sh.k, a.data(), 1, b + p * kAvx2Nr, hal::DType::bf16, sh.n, 4, out + p * kAvx2Mr * kAvx2Nr, 1);
        });
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    for (Order o : {kept, chunk_major, blocked_layout}) pass(o);
    std::vector<double> ratio[3], rate[3];
    for (int r = 0; r < passes; ++r) {
      double base = 0;
      for (Order o : {kept, chunk_major, blocked_layout}) {
        const double t = pass(o);
        if (o == kept) base = t;
        ratio[o].push_back(t / base);
        rate[o].push_back(static_cast<double>(bytes * copies) / t * 1e-9);
      }
    }
    auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
    fmt::print("1x{}x{}: kept {:.2f} GB/s; chunk-major {:.2f} GB/s (time x{:.2f}); blocked layout {:.2f} GB/s (time x{:.2f})\n",
               sh.k, sh.n, med(rate[kept]), med(rate[chunk_major]), med(ratio[chunk_major]), med(rate[blocked_layout]),
               med(ratio[blocked_layout]));
  }
}
