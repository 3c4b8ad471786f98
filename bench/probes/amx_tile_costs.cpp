// What an AMX bf16 micro-kernel call costs beyond its TDPBF16PS, on one core:
//   mode 0: TDPBF16PS alone (4 accumulator tiles, operands never reloaded);
//   mode 1: + per 32-k block two A and two B tile loads from an L1-resident panel of 8 blocks;
//   mode 2: + per call (`blocks` blocks) the 4 accumulator tiles loaded and stored, the
//           accumulators cycling over 48 tiles (192 KB, L2), as the GEMM driver's calls do;
//   mode 3: mode 2 with the loads replaced by TILEZERO;  mode 4: mode 2 without the stores.
// Operands are random bf16 in [0.5, 1): all-zero operands ran 20-30% faster (the
// tile unit's power depends on the data). Usage: amx_tile_costs MODE [BLOCKS]
// Build: g++ -O2 -mamx-tile -mamx-bf16 amx_tile_costs.cpp -o amx_tile_costs
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>

namespace {
struct alignas(64) TileConfig {
  std::uint8_t palette = 1, start_row = 0, reserved[14] = {};
  std::uint16_t bytes_per_row[16] = {};
  std::uint8_t rows[16] = {};
};
// Eight 32-k blocks of packed panels, as the GEMM's amx_bf16 packing lays them out:
// A 32 rows x 64 bytes per block (tiles at +0 and +1 KB), B 16 pair rows x 128 bytes
// (tiles at +0 and +64 bytes, 128-byte stride).
constexpr int kBlock = 32 * 32;  // bf16 per block of either operand
alignas(64) std::uint16_t g_a[8 * kBlock], g_b[8 * kBlock];
alignas(64) float g_acc[48][1024];
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */) != 0) {
    std::fprintf(stderr, "usage: amx_tile_costs MODE [BLOCKS] (needs AMX and the OS's tile permission)\n");
    return 1;
  }
  const int mode = std::atoi(argv[1]), blocks = argc > 2 ? std::atoi(argv[2]) : 8;
  unsigned seed = 1;
  for (auto* panel : {g_a, g_b})
    for (int i = 0; i < 8 * kBlock; ++i) {
      seed = seed * 1103515245u + 12345u;
      panel[i] = static_cast<std::uint16_t>(0x3f00u | ((seed >> 16) & 0xffu));
    }
  TileConfig config;
  for (int t = 0; t < 8; ++t) config.rows[t] = 16, config.bytes_per_row[t] = 64;
  _tile_loadconfig(&config);
  const long steps = 20000000 / blocks * blocks;  // 32-k blocks in all
  const auto t0 = std::chrono::steady_clock::now();
  if (mode == 0) {
    _tile_loadd(4, g_a, 64);
    _tile_loadd(5, g_a + 512, 64);
    _tile_loadd(6, g_b, 128);
    _tile_loadd(7, g_b + 32, 128);
    for (long i = 0; i < steps; ++i) {
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
  } else {
    for (long call = 0; call < steps / blocks; ++call) {
      float* acc = g_acc[call % 48];
      if (mode == 2 || mode == 4) {
        _tile_loadd(0, acc, 128);
        _tile_loadd(1, acc + 16, 128);
        _tile_loadd(2, acc + 512, 128);
        _tile_loadd(3, acc + 528, 128);
      } else if (mode == 3) {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
      }
      for (int kb = 0; kb < blocks; ++kb) {
        const int o = (kb & 7) * kBlock;
        _tile_loadd(4, g_a + o, 64);
        _tile_loadd(5, g_a + o + 512, 64);
        _tile_loadd(6, g_b + o, 128);
        _tile_loadd(7, g_b + o + 32, 128);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
      if (mode != 4 && mode != 1) {
        _tile_stored(0, acc, 128);
        _tile_stored(1, acc + 16, 128);
        _tile_stored(2, acc + 512, 128);
        _tile_stored(3, acc + 528, 128);
      }
    }
  }
  _tile_stored(0, g_acc[0], 128);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  _tile_release();
  const double tdp = 4.0 * static_cast<double>(steps);
  std::printf("mode %d blocks %d: %.0f GFLOP/s, %.1f ns per TDPBF16PS\n", mode, blocks, tdp * 16 * 16 * 32 * 2 / s / 1e9,
              s / tdp * 1e9);
  return 0;
}
