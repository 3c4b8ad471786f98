// The AVX2 few-row stream kernel (cpu_ref/gemm_stream_rows_avx2.cpp) with
// other prefetch distances and hints, row groups and chunk widths, timed in turn pass by pass on decode
// shapes (one row of A, a row-major bf16 B split by columns over the threads
// as gemm_blocked.cpp splits a decode GEMM): on a VM whose memory rate
// drifts within seconds, only variants timed side by side compare. Prints per
// variant the median over passes of its time / the baseline's.
// Build (from the repository root):
//   g++ -std=c++20 -O2 -mavx2 -mfma -mf16c -I. bench/probes/decode_stream_variants.cpp -ltbb -lfmt \
//     -o /tmp/decode_stream_variants
// Run: /tmp/decode_stream_variants [passes]
#include <fmt/format.h>
#include <immintrin.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include "cpu_ref/gemm_stream_rows.h"

// One copy of the kernel per variant, each in its own namespace, seeing hal's names.
#define HAL_VARIANT_PRELUDE(ns) \
  namespace ns::hal {           \
  using namespace ::hal;        \
  namespace cpu_ref {           \
  using namespace ::hal::cpu_ref; \
  }                             \
  }
HAL_VARIANT_PRELUDE(base)
HAL_VARIANT_PRELUDE(l2_2)
HAL_VARIANT_PRELUDE(l2_4)
HAL_VARIANT_PRELUDE(l1_4)
HAL_VARIANT_PRELUDE(none)
HAL_VARIANT_PRELUDE(group16)
HAL_VARIANT_PRELUDE(group4)
HAL_VARIANT_PRELUDE(panels6)
HAL_VARIANT_PRELUDE(panels2)
namespace base {
#include "cpu_ref/gemm_stream_rows_avx2.cpp"
}
#undef HAL_STREAM_PREFETCH_GROUPS
#undef HAL_STREAM_PREFETCH_HINT
#define HAL_STREAM_PREFETCH_GROUPS 2
#define HAL_STREAM_PREFETCH_HINT _MM_HINT_T1
namespace l2_2 {
#include "cpu_ref/gemm_stream_rows_avx2.cpp"
}
#undef HAL_STREAM_PREFETCH_GROUPS
#undef HAL_STREAM_PREFETCH_HINT
#define HAL_STREAM_PREFETCH_GROUPS 4
#define HAL_STREAM_PREFETCH_HINT _MM_HINT_T1
namespace l2_4 {
#include "cpu_ref/gemm_stream_rows_avx2.cpp"
}
#undef HAL_STREAM_PREFETCH_GROUPS
#undef HAL_STREAM_PREFETCH_HINT
#define HAL_STREAM_PREFETCH_GROUPS 4
#define HAL_STREAM_PREFETCH_HINT _MM_HINT_T0
namespace l1_4 {
#include "cpu_ref/gemm_stream_rows_avx2.cpp"
}
#undef HAL_STREAM_PREFETCH_GROUPS
#undef HAL_STREAM_PREFETCH_HINT
#define HAL_STREAM_PREFETCH_GROUPS 0
#define HAL_STREAM_PREFETCH_HINT _MM_HINT_T0
namespace none {
#include "cpu_ref/gemm_stream_rows_avx2.cpp"
}

#undef HAL_STREAM_PREFETCH_GROUPS
#undef HAL_STREAM_PREFETCH_HINT
#define HAL_STREAM_PREFETCH_GROUPS 2
#define HAL_STREAM_PREFETCH_HINT _MM_HINT_T0
#undef HAL_STREAM_ROW_GROUP
#define HAL_STREAM_ROW_GROUP 16
namespace group16 {
#include "cpu_ref/gemm_stream_rows_avx2.cpp"
}
#undef HAL_STREAM_ROW_GROUP
#define HAL_STREAM_ROW_GROUP 4
#undef HAL_STREAM_PREFETCH_GROUPS
#define HAL_STREAM_PREFETCH_GROUPS 4
namespace group4 {
#include "cpu_ref/gemm_stream_rows_avx2.cpp"
}
#undef HAL_STREAM_ROW_GROUP
#undef HAL_STREAM_PREFETCH_GROUPS
#define HAL_STREAM_ROW_GROUP 8
#define HAL_STREAM_PREFETCH_GROUPS 2
#undef HAL_STREAM_PANELS_ONE_ROW
#define HAL_STREAM_PANELS_ONE_ROW 6
namespace panels6 {
#include "cpu_ref/gemm_stream_rows_avx2.cpp"
}
#undef HAL_STREAM_PANELS_ONE_ROW
#define HAL_STREAM_PANELS_ONE_ROW 2
namespace panels2 {
#include "cpu_ref/gemm_stream_rows_avx2.cpp"
}

using StreamFn = void (*)(std::int64_t, const float*, std::int64_t, const void*, hal::DType, std::int64_t, std::int64_t,
                          float*, std::int64_t);

int main(int argc, char** argv) {
  const int passes = argc > 1 ? std::atoi(argv[1]) : 30;
  const std::pair<const char*, StreamFn> variants[] = {
      {"L1, 2 groups ahead (kept)", base::hal::cpu_ref::stream_b_rows_avx2},
      {"L2, 2 groups ahead", l2_2::hal::cpu_ref::stream_b_rows_avx2},
      {"L2, 4 groups ahead", l2_4::hal::cpu_ref::stream_b_rows_avx2},
      {"L1, 4 groups ahead", l1_4::hal::cpu_ref::stream_b_rows_avx2},
      {"no prefetch", none::hal::cpu_ref::stream_b_rows_avx2},
      {"groups of 16 rows, 2 ahead", group16::hal::cpu_ref::stream_b_rows_avx2},
      {"groups of 4 rows, 4 ahead", group4::hal::cpu_ref::stream_b_rows_avx2},
      {"96-column chunks (1 row)", panels6::hal::cpu_ref::stream_b_rows_avx2},
      {"32-column chunks (1 row)", panels2::hal::cpu_ref::stream_b_rows_avx2}};
  constexpr int kMr = hal::cpu_ref::kAvx2Mr, kNr = hal::cpu_ref::kAvx2Nr;
  const int threads = 2;
  struct Shape { std::int64_t k, n; };
  for (const Shape sh : {Shape{1024, 1024}, Shape{2816, 1024}, Shape{1024, 1536}, Shape{1024, 5632}}) {
    const std::int64_t bytes = sh.k * sh.n * 2, copies = std::max<std::int64_t>(1, (std::int64_t{128} << 20) / bytes);
    std::vector<std::vector<std::uint16_t>> w(static_cast<std::size_t>(copies));
    for (auto& b : w) b.assign(static_cast<std::size_t>(sh.k * sh.n), 0x3f80);  // bf16 1.0
    std::vector<float> a(static_cast<std::size_t>(sh.k * kMr), 0.5f);
    const std::int64_t cols = sh.n / threads, panels = cols / kNr;  // one column task per thread
    std::vector<std::vector<float>> acc(threads, std::vector<float>(static_cast<std::size_t>(panels * kMr * kNr)));
    auto pass = [&](StreamFn f) {
      const auto t0 = std::chrono::steady_clock::now();
      for (const auto& b : w)
        tbb::parallel_for(0, threads, [&](int t) {
          f(sh.k, a.data(), 1, b.data() + t * cols, hal::DType::bf16, sh.n, panels, acc[static_cast<std::size_t>(t)].data(), 1);
        });
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    for (const auto& v : variants) pass(v.second);  // warm
    std::vector<std::vector<double>> ratio(std::size(variants)), rate(std::size(variants));
    for (int r = 0; r < passes; ++r) {
      double t_base = 0;
      for (std::size_t i = 0; i < std::size(variants); ++i) {
        const double t = pass(variants[i].second);
        if (i == 0) t_base = t;
        ratio[i].push_back(t / t_base);
        rate[i].push_back(static_cast<double>(bytes * copies) / t * 1e-9);
      }
    }
    fmt::print("1x{}x{} ({} copies, {} threads):\n", sh.k, sh.n, copies, threads);
    for (std::size_t i = 0; i < std::size(variants); ++i) {
      auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
      fmt::print("  {:<28} time / kept {:.3f}   median {:6.2f} GB/s, best {:6.2f}\n", variants[i].first, med(ratio[i]),
                 med(rate[i]), *std::max_element(rate[i].begin(), rate[i].end()));
    }
  }
}
