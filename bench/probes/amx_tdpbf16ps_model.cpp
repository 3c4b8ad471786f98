// Which summation TDPBF16PS (AMX-BF16) performs: one 16 x 16 x 32 tile
// product on random bf16 tiles (exponents +-R, both signs), every output
// element compared bit for bit with candidate models built from exact bf16
// products and fp32 round-to-nearest steps (DAZ/FTZ):
//   chain   acc += p0 + p1 per pair (vdpbf16ps-like, either order in the pair)
//   pairs   pair sums (p0 + p1 rounded) added to acc in turn, or summed first
//   tree    pairwise tree of the 32 products, then + acc
//   lanes   even products summed from 0 in one fp32 lane, odd in another,
//           then acc + (even + odd)   <- the one that matches (gemm_microkernel.h)
// Build: g++ -O2 -std=c++20 -mamx-tile -mamx-bf16 bench/probes/amx_tdpbf16ps_model.cpp
// Run: ./a.out [R] (Linux 5.16+, a CPU with AMX-BF16).
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

namespace {

struct alignas(64) TileConfig {
  std::uint8_t palette = 1, start_row = 0, reserved[14] = {};
  std::uint16_t bytes_per_row[16] = {};
  std::uint8_t rows[16] = {};
};

float widen(std::uint16_t h) {
  std::uint32_t b = std::uint32_t{h} << 16;
  if ((b & 0x7F800000u) == 0) b &= 0x80000000u;
  return std::bit_cast<float>(b);
}
float flush(float v) {
  const std::uint32_t b = std::bit_cast<std::uint32_t>(v);
  return (b & 0x7F800000u) == 0 ? std::bit_cast<float>(b & 0x80000000u) : v;
}

alignas(64) std::uint16_t A[16][32], B[16][32];
alignas(64) float C[16][16];

}  // namespace

int main(int argc, char** argv) {
  const int range = argc > 1 ? std::atoi(argv[1]) : 20;
  if (syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */) != 0) {
    std::puts("the OS did not grant the AMX tile state");
    return 1;
  }
  TileConfig cfg;
  for (int t = 0; t < 3; ++t) cfg.rows[t] = 16, cfg.bytes_per_row[t] = 64;
  _tile_loadconfig(&cfg);
  std::mt19937 rng(7);
  auto value = [&](int mantissa_bits) {
    const float m = 1.0f + float(rng() % (1u << mantissa_bits)) / float(1u << mantissa_bits);
    return std::ldexp(rng() % 2 ? -m : m, int(rng() % (2 * range + 1)) - range);
  };
  constexpr int kModels = 6;
  const char* names[kModels] = {"chain, even first", "chain, odd first", "pair sums onto acc in turn",
                                "pair sums summed, then + acc", "tree of 32 products, then + acc",
                                "even and odd lanes, then acc + (even + odd)"};
  long mismatches[kModels] = {}, total = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    for (auto& row : A) for (auto& v : row) v = std::bit_cast<std::uint32_t>(value(7)) >> 16;
    for (auto& row : B) for (auto& v : row) v = std::bit_cast<std::uint32_t>(value(7)) >> 16;
    float c0[16][16];
    for (auto& row : c0) for (auto& v : row) v = value(10);
    std::memcpy(C, c0, sizeof C);
    _tile_loadd(0, C, 64);
    _tile_loadd(1, A, 64);
    _tile_loadd(2, B, 64);
    _tile_dpbf16ps(0, 1, 2);
    _tile_stored(0, C, 64);
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 16; ++n) {
        float p[32], ps[16];
        for (int k = 0; k < 16; ++k) {
          p[2 * k] = widen(A[m][2 * k]) * widen(B[k][2 * n]);
          p[2 * k + 1] = widen(A[m][2 * k + 1]) * widen(B[k][2 * n + 1]);
          ps[k] = flush(p[2 * k] + p[2 * k + 1]);
        }
        const float c = c0[m][n];
        float r[kModels];
        float even_first = c, odd_first = c, in_turn = c, summed = 0, even = 0, odd = 0;
        for (int k = 0; k < 16; ++k) {
          even_first = flush(flush(even_first + p[2 * k]) + p[2 * k + 1]);
          odd_first = flush(flush(odd_first + p[2 * k + 1]) + p[2 * k]);
          in_turn = flush(in_turn + ps[k]);
          summed = flush(summed + ps[k]);
          // A fused step: a product below fp32's normal range is not rounded
          // on its own (a * b would be; the first run of this probe did that
          // and missed 732 of 256000 elements at exponents +-70).
          even = flush(std::fma(widen(A[m][2 * k]), widen(B[k][2 * n]), even));
          odd = flush(std::fma(widen(A[m][2 * k + 1]), widen(B[k][2 * n + 1]), odd));
        }
        float tree[32];
        std::memcpy(tree, p, sizeof tree);
        for (int w = 32; w > 1; w /= 2)
          for (int i = 0; i < w / 2; ++i) tree[i] = flush(tree[2 * i] + tree[2 * i + 1]);
        r[0] = even_first, r[1] = odd_first, r[2] = in_turn, r[3] = flush(c + summed), r[4] = flush(c + tree[0]);
        r[5] = flush(c + flush(even + odd));
        const std::uint32_t got = std::bit_cast<std::uint32_t>(C[m][n]);
        for (int i = 0; i < kModels; ++i) mismatches[i] += got != std::bit_cast<std::uint32_t>(r[i]);
        ++total;
      }
  }
  _tile_release();
  std::printf("%ld elements, exponents +-%d: mismatches per model\n", total, range);
  for (int i = 0; i < kModels; ++i) std::printf("  %-46s %ld\n", names[i], mismatches[i]);
}
