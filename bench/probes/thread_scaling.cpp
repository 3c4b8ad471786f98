// How much throughput do two threads get on this VM, against one? Three
// loops whose working sets stay in L1, each run on 1 thread and then on 2
// threads (each with its own data), in turn, 6 rounds:
//   loads:  independent 32-bit loads and adds (bound by the load and ALU ports)
//   lookup: hal's 16-bit table lookup loop (unary_table16.cpp's form, 2 loads per element)
//   fma:    24 independent 256-bit FMA chains (bound by the FMA pipes)
// Build: g++ -O2 -mavx2 -mfma -fno-tree-vectorize -std=c++20 thread_scaling.cpp -pthread
#include <immintrin.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

std::vector<std::uint16_t> g_table(65536);

__attribute__((noinline)) std::uint64_t loads(const std::uint32_t* p, long reps) {
  std::uint64_t a = 0, b = 0, c = 0, d = 0;
  for (long r = 0; r < reps; ++r) {
    asm volatile("" : "+r"(p)::"memory");
    for (int i = 0; i < 2048; i += 4) { a += p[i]; b += p[i + 1]; c += p[i + 2]; d += p[i + 3]; }
  }
  return a + b + c + d;
}

__attribute__((noinline)) std::uint64_t lookup(const std::uint16_t* x, long reps) {
  const std::uint16_t* t = g_table.data();
  std::uint64_t acc = 0;
  for (long r = 0; r < reps; ++r) {
    asm volatile("" : "+r"(x)::"memory");
    for (int i = 0; i < 4096; i += 4)
      acc += std::uint64_t{t[x[i]]} | (std::uint64_t{t[x[i + 1]]} << 16) | (std::uint64_t{t[x[i + 2]]} << 32) |
             (std::uint64_t{t[x[i + 3]]} << 48);
  }
  return acc;
}

__attribute__((noinline)) float fma(long reps) {
  __m256 v[24];
  for (int k = 0; k < 24; ++k) v[k] = _mm256_set1_ps(static_cast<float>(k));
  const __m256 m = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(0.001f);
  for (long i = 0; i < reps; ++i) {
#pragma GCC unroll 24
    for (int k = 0; k < 24; ++k) v[k] = _mm256_fmadd_ps(v[k], m, c);
  }
  __m256 s = v[0];
  for (int k = 1; k < 24; ++k) s = _mm256_add_ps(s, v[k]);
  return s[0];
}

template <class F> double seconds(F f) {
  const auto a = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
}

// Work items per second on 1 thread and on 2 threads.
template <class F> void scale(const char* name, double items, F f) {
  const double t1 = seconds([&] { f(0); });
  const double t2 = seconds([&] {
    std::thread other([&] { f(1); });
    f(0);
    other.join();
  });
  std::printf("%-7s 1 thread %6.2f G/s   2 threads %6.2f G/s   x%.2f\n", name, items / t1 / 1e9, 2 * items / t2 / 1e9,
              2 * t1 / t2);
}

}  // namespace

int main() {
  for (int i = 0; i < 65536; ++i) g_table[i] = static_cast<std::uint16_t>(i * 7);
  std::vector<std::uint32_t> words[2] = {std::vector<std::uint32_t>(2048, 1), std::vector<std::uint32_t>(2048, 2)};
  std::vector<std::uint16_t> keys[2] = {std::vector<std::uint16_t>(4096), std::vector<std::uint16_t>(4096)};
  for (int i = 0; i < 4096; ++i) {
    keys[0][i] = static_cast<std::uint16_t>((i * 2654435761u) >> 20);  // 4096 entries of the table: L1
    keys[1][i] = keys[0][i] ^ 5;
  }
  volatile std::uint64_t sink = 0;
  volatile float fsink = 0;
  for (int round = 0; round < 6; ++round) {
    const long reps = 100000;
    scale("loads", 2048.0 * reps, [&](int k) { sink = loads(words[k].data(), reps); });
    scale("lookup", 4096.0 * reps / 2, [&](int k) { sink = lookup(keys[k].data(), reps / 2); });
    scale("fma", 24.0 * 8 * reps * 40, [&](int) { fsink = fma(reps * 40); });  // flops/2: FMAs x 8 lanes
  }
}
