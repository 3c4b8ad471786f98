#pragma once
// The loop order of GemmStreamBFn (gemm_microkernel.h), shared by the kernels
// that stream B: for each group of kStreamBGroup k rows, each column panel,
// each A panel in turn, tile(kn, a, b, c, rows) updates one MR x NR
// accumulator tile with the group's kn steps (its `rows` first rows at least),
// reading B's group rows in place at b (ldb elements apart). A group's B rows
// are read once from memory and then serve every A panel from L1.
//
// Each element's chain stays the micro-kernel's ascending-k run, stored and
// reloaded (exactly) between groups. A template over a file-local `tile`, so
// every ISA's file instantiates its own copy (no inline function is shared
// between ISA-flagged and baseline objects; cmake/check_isa_objects.cmake).
#include <cstdint>

namespace hal::cpu_ref {

inline constexpr std::int64_t kStreamBGroup = 16;

template <int MR, int NR, class Tile>
inline __attribute__((always_inline)) void stream_b_tiles(std::int64_t kc, const float* a, std::int64_t a_stride,
                                                          std::int64_t rows, const void* b, std::int64_t b_esize,
                                                          std::int64_t ldb, std::int64_t panels, float* acc,
                                                          std::int64_t acc_m_panels, Tile tile) {
  const std::int64_t a_panels = (rows + MR - 1) / MR;
  for (std::int64_t k0 = 0; k0 < kc; k0 += kStreamBGroup) {
    const std::int64_t kn = k0 + kStreamBGroup < kc ? kStreamBGroup : kc - k0;
    for (std::int64_t jp = 0; jp < panels; ++jp) {
      const void* bk = static_cast<const char*>(b) + (k0 * ldb + jp * NR) * b_esize;
      for (std::int64_t ip = 0; ip < a_panels; ++ip)
        tile(kn, a + ip * a_stride + k0 * MR, bk, acc + (jp * acc_m_panels + ip) * MR * NR, rows - ip * MR);
    }
  }
}

}  // namespace hal::cpu_ref
