// The decode GEMM's B read as today's row-major tiles (each task a segment
// of every row, tiles of at most 1024 columns) against a column-blocked
// layout [2][K][N / 2] (each thread one contiguous slab), the slab read in
// groups of 8 rows (the kept order) or row by row, on the model's decode
// shapes (one row of A, bf16 weights beyond the L3, 2 threads), timed in turn
// pass by pass. Its result chose cpu_ref/gemm_stream_rows_avx2.cpp's
// row-by-row order for contiguous rows of at most 1024 columns and
// model/weights.h's column blocks.
// Build (from the repository root, after building the cpu preset):
//   g++ -std=c++20 -O2 -mavx2 -mfma -mf16c -I. bench/probes/decode_stream_blocked.cpp build/cpu/libhal.a \
//     -ltbb -lfmt -o /tmp/decode_stream_blocked
// Run: /tmp/decode_stream_blocked [passes]
#include <fmt/format.h>
#include <immintrin.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>
#include "cpu_ref/gemm_stream_rows.h"
#define HAL_VARIANT_PRELUDE(ns) namespace ns::hal { using namespace ::hal; namespace cpu_ref { using namespace ::hal::cpu_ref; } }
HAL_VARIANT_PRELUDE(g8)
HAL_VARIANT_PRELUDE(g1)
#define HAL_STREAM_SEQUENTIAL_MAX_COLUMNS 0
namespace g8 {
#include "cpu_ref/gemm_stream_rows_avx2.cpp"
}
#undef HAL_STREAM_ROW_GROUP
#undef HAL_STREAM_PREFETCH_GROUPS
#define HAL_STREAM_ROW_GROUP 1
#define HAL_STREAM_PREFETCH_GROUPS 16
namespace g1 {
#include "cpu_ref/gemm_stream_rows_avx2.cpp"
}
using namespace hal::cpu_ref;
int main(int argc, char** argv) {
  const int passes = argc > 1 ? atoi(argv[1]) : 10;
  struct Shape { long k, n; };
  for (Shape sh : {Shape{1024, 1024}, Shape{2816, 1024}, Shape{1024, 1536}, Shape{1024, 5632}, Shape{1024, 8192}}) {
    const long bytes = sh.k * sh.n * 2, copies = std::max(1L, (160L << 20) / bytes);
    std::vector<std::vector<std::uint16_t>> w(copies, std::vector<std::uint16_t>(sh.k * sh.n, 0x3f80));
    std::vector<float> a(sh.k * kAvx2Mr, 0.5f);
    std::vector<std::vector<float>> acc(2, std::vector<float>(sh.n * 96));
    using clk = std::chrono::steady_clock;
    auto time = [&](auto body) { auto t0 = clk::now(); for (auto& b : w) body(b.data()); return std::chrono::duration<double>(clk::now() - t0).count(); };
    const long half = sh.n / 2, tile_cols = std::min(1024L, half), tiles = (sh.n + tile_cols - 1) / tile_cols;
    using F = void (*)(std::int64_t, const float*, std::int64_t, const void*, hal::DType, std::int64_t, std::int64_t, float*, std::int64_t);
    auto blocked = [&](F f) { return [&, f](const std::uint16_t* b) { tbb::parallel_for(0, 2, [&](int t) {
          float* ac = acc[t].data(); const std::uint16_t* bb = b + t * sh.k * half;
          for (long k0 = 0; k0 < sh.k; k0 += 256) f(std::min(256L, sh.k - k0), a.data(), 1, bb + k0 * half, hal::DType::bf16, half, half / 16, ac, 1); }); }; };
    struct V { const char* name; std::function<void(const std::uint16_t*)> f; };
    std::vector<V> vs = {
      {"today: row-major, tiles <= 1024", [&](const std::uint16_t* b) { tbb::parallel_for(0L, tiles, [&](long t) {
          const long j0 = t * tile_cols, nc = std::min(tile_cols, sh.n - j0);
          float* ac = acc[tbb::this_task_arena::current_thread_index()].data();
          for (long k0 = 0; k0 < sh.k; k0 += 256) stream_b_rows_avx2(std::min(256L, sh.k - k0), a.data(), 1, b + k0 * sh.n + j0, hal::DType::bf16, sh.n, nc / 16, ac, 1); }); }},
      {"blocked, groups of 8", blocked(g8::hal::cpu_ref::stream_b_rows_avx2)},
      {"blocked, as kept (by width)", blocked(stream_b_rows_avx2)},
      {"blocked, row by row", blocked(g1::hal::cpu_ref::stream_b_rows_avx2)},
    };
    std::vector<std::vector<double>> r(vs.size());
    for (auto& v : vs) time(v.f);
    for (int p = 0; p < passes; ++p) for (size_t i = 0; i < vs.size(); ++i) r[i].push_back((double)bytes * copies / time(vs[i].f) * 1e-9);
    fmt::print("1x{}x{} (block width {}):\n", sh.k, sh.n, half);
    for (size_t i = 0; i < vs.size(); ++i) { auto x = r[i]; std::sort(x.begin(), x.end()); fmt::print("  {:<34} median {:6.2f} GB/s best {:6.2f}\n", vs[i].name, x[x.size()/2], x.back()); }
  }
}
