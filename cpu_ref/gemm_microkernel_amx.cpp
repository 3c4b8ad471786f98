// AMX micro-kernel, 32 x 32, amx_bf16 packing (gemm_microkernel.h): the
// accumulator is four 16 x 16 fp32 tiles (tmm0-3), each 32-k block loads two
// A tiles (rows 0-15, 16-31; tmm4-5) and two B tiles (columns 0-15, 16-31;
// tmm6-7) and issues four TDPBF16PS. Compiled with -mamx-tile -mamx-bf16 and
// the AVX-512 flags in this file only; run only where cpu_features() reports
// amx_bf16 (the CPU has it and the OS granted this process the tile state).
//
// The pair kernel (vdpbf16ps) runs at half the f32 kernel's flop rate on a
// Sapphire Rapids class core; oneDNN's AMX kernels ran 6x faster there
// (bench/results/cpu-xeon-amx-2core-2026-12-04-f7d5e88-gemm-bf16/).
//
// Decode tiles (stream_b) read a row-major bf16 B in place. From
// kAmxStreamTileRows rows up, each 32-k block of B is interleaved into pair
// words in L1 and multiplied on the tiles; below, where the tiles' 16 rows
// are mostly padding, the amx_bf16 contract is computed with AVX-512
// multiply-adds: per output element an even and an odd fp32 lane per 32-k
// block, then acc += (even + odd), with MXCSR's DAZ and FTZ set and rounding
// to nearest for the call, as TDPBF16PS does whatever MXCSR says. Either way a
// row equals the same row through the packed path, bit for bit. Measured on the
// 2-core Xeon (1..16 x 4096 x 4096): the multiply-adds were faster at 1-2
// rows (1.1-1.7x), even at 4, the tiles faster from 8 (1.9x) to 16 (3.1-3.7x).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "cpu_ref/avx512_stream_b.h"
#include "cpu_ref/gemm_microkernel.h"

namespace hal::cpu_ref {
namespace {

constexpr int kMr = 32;
constexpr int kNr = 32;
constexpr int kBlockK = kAmxBlockK;

// The LDTILECFG memory operand (palette 1).
struct alignas(64) TileConfig {
  std::uint8_t palette = 1;
  std::uint8_t start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t bytes_per_row[16] = {};
  std::uint8_t rows[16] = {};
};

TileConfig make_config() {
  TileConfig c;
  for (int t = 0; t < 8; ++t) {  // C 0-3, A 4-5, B 6-7: all 16 rows x 64 bytes
    c.rows[t] = 16;
    c.bytes_per_row[t] = 64;
  }
  return c;
}

// The tile configuration is per thread, and other code on the thread (another
// library's AMX kernels) may change it between tasks, so each task loads it
// (begin_task) and releases the tiles when done (end_task). Loading it at
// every micro-kernel call instead cost 10-20% of a 2048^3 product.
void begin_amx_task() {
  static const TileConfig config = make_config();
  _tile_loadconfig(&config);
}

void end_amx_task() { _tile_release(); }

// One 32-k block of the four accumulator tiles.
inline void amx_block(const std::uint16_t* ab, const std::uint32_t* bb) {
  constexpr long kARow = kBlockK * 2, kBRow = kNr * 4;
  _tile_loadd(4, ab, kARow);
  _tile_loadd(5, ab + 16 * kBlockK, kARow);
  _tile_loadd(6, bb, kBRow);
  _tile_loadd(7, bb + 16, kBRow);
  _tile_dpbf16ps(0, 4, 6);
  _tile_dpbf16ps(1, 4, 7);
  _tile_dpbf16ps(2, 5, 6);
  _tile_dpbf16ps(3, 5, 7);
}

inline void load_acc_tiles(const float* c) {
  constexpr long kAccRow = kNr * sizeof(float);
  _tile_loadd(0, c, kAccRow);
  _tile_loadd(1, c + 16, kAccRow);
  _tile_loadd(2, c + 16 * kNr, kAccRow);
  _tile_loadd(3, c + 16 * kNr + 16, kAccRow);
}

void microkernel_amx(std::int64_t kc, const void* a_panel, const void* b_panel, float* acc) {
  const auto* a = static_cast<const std::uint16_t*>(a_panel);
  const auto* b = static_cast<const std::uint32_t*>(b_panel);
  const std::int64_t blocks = amx_blocks(kc);
  constexpr long kAccRow = kNr * sizeof(float);
  load_acc_tiles(acc);
  for (std::int64_t kb = 0; kb < blocks; ++kb) amx_block(a + kb * kMr * kBlockK, b + kb * (kBlockK / 2) * kNr);
  _tile_stored(0, acc, kAccRow);
  _tile_stored(1, acc + 16, kAccRow);
  _tile_stored(2, acc + 16 * kNr, kAccRow);
  _tile_stored(3, acc + 16 * kNr + 16, kAccRow);
}

// GemmRunGridFn: microkernel_amx's tiles in the grid's order, software
// pipelined. Each tile's last block is interleaved with its accumulator stores
// and the next tile's accumulator loads, so the stores no longer wait at the
// end of every tile. The same products in the same order per tile: the bits of
// microkernel_amx. In the probe's loop (8 blocks a tile, 1 core) this ran
// 1.95 TFLOP/s against 1.69 for one call per tile.
void microkernel_amx_grid(std::int64_t kc, const float* a_words, std::int64_t a_stride, std::int64_t m_panels,
                          const float* b_words, std::int64_t b_stride, std::int64_t n_panels, float* acc,
                          std::int64_t acc_ip, std::int64_t acc_jp) {
  constexpr long kAccRow = kNr * sizeof(float), kARow = kBlockK * 2, kBRow = kNr * 4;
  const std::int64_t blocks = amx_blocks(kc), tiles = m_panels * n_panels;
  if (tiles == 0) return;
  auto acc_of = [&](std::int64_t t) { return acc + (t / m_panels) * acc_jp + (t % m_panels) * acc_ip; };
  float* c = acc_of(0);
  load_acc_tiles(c);
  for (std::int64_t t = 0; t < tiles; ++t) {
    const auto* a = reinterpret_cast<const std::uint16_t*>(a_words + (t % m_panels) * a_stride);
    const auto* b = reinterpret_cast<const std::uint32_t*>(b_words + (t / m_panels) * b_stride);
    for (std::int64_t kb = 0; kb + 1 < blocks; ++kb) amx_block(a + kb * kMr * kBlockK, b + kb * (kBlockK / 2) * kNr);
    const std::uint16_t* ab = a + (blocks - 1) * kMr * kBlockK;
    const std::uint32_t* bb = b + (blocks - 1) * (kBlockK / 2) * kNr;
    float* next = t + 1 < tiles ? acc_of(t + 1) : nullptr;
    _tile_loadd(4, ab, kARow);
    _tile_loadd(6, bb, kBRow);
    _tile_loadd(7, bb + 16, kBRow);
    _tile_loadd(5, ab + 16 * kBlockK, kARow);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_stored(0, c, kAccRow);
    if (next) _tile_loadd(0, next, kAccRow);
    _tile_dpbf16ps(3, 5, 7);
    _tile_stored(1, c + 16, kAccRow);
    if (next) _tile_loadd(1, next + 16, kAccRow);
    _tile_stored(2, c + 16 * kNr, kAccRow);
    if (next) _tile_loadd(2, next + 16 * kNr, kAccRow);
    _tile_stored(3, c + 16 * kNr + 16, kAccRow);
    if (next) _tile_loadd(3, next + 16 * kNr + 16, kAccRow);
    c = next;
  }
}

// MXCSR for the AVX-512 emulation of TDPBF16PS: DAZ (bit 6), FTZ (bit 15),
// round to nearest (bits 13-14 clear); restored on exit.
class DazFtzScope {
 public:
  DazFtzScope() : saved_(_mm_getcsr()) { _mm_setcsr((saved_ & ~0x6000u) | 0x8040u); }
  ~DazFtzScope() { _mm_setcsr(saved_); }
  DazFtzScope(const DazFtzScope&) = delete;
  DazFtzScope& operator=(const DazFtzScope&) = delete;

 private:
  unsigned saved_;
};

// 32 bf16 of one B row (zero past `valid`) as fp32: columns 0-15 and 16-31.
inline void widen_row(const std::uint16_t* row, bool valid, __m512& lo, __m512& hi) {
  if (!valid) {
    lo = hi = _mm512_setzero_ps();
    return;
  }
  // The zero-masked forms: the plain ones pass GCC 12 an "undefined" source
  // that it then warns about (-Wmaybe-uninitialized) once inlined here.
  constexpr __mmask16 kAll = 0xFFFF;
  const auto* halves = reinterpret_cast<const __m256i*>(row);
  const __m512i lo16 = _mm512_maskz_cvtepu16_epi32(kAll, _mm256_loadu_si256(halves));
  const __m512i hi16 = _mm512_maskz_cvtepu16_epi32(kAll, _mm256_loadu_si256(halves + 1));
  lo = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(kAll, lo16, 16));
  hi = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(kAll, hi16, 16));
}

inline __m512 broadcast_bf16(std::uint16_t h) {
  return _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(std::uint32_t{h} << 16)));
}

// Rows [0, R) of one 32 x 32 accumulator tile, one half of a 32-k block
// (k in [k0, k0 + 16)): `a` the block's packed rows (32 bf16 each), B rows k
// (< valid_k) at b + k * ldb. The even and odd lanes of the R rows live in
// `lanes` (R x 4 vectors) between the halves: the first half starts them at
// zero, the second adds them to acc.
template <int R>
void stream_half_block_tile(const std::uint16_t* a, const std::uint16_t* b, std::int64_t ldb, int k0,
                            std::int64_t valid_k, float* lanes, float* acc) {
  __m512 e0[R], e1[R], o0[R], o1[R];
  const bool first = k0 == 0;
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    float* l = lanes + r * 64;
    e0[r] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(l);
    e1[r] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(l + 16);
    o0[r] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(l + 32);
    o1[r] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(l + 48);
  }
  for (int k = k0; k < k0 + kBlockK / 2; k += 2) {
    __m512 be0, be1, bo0, bo1;
    stream_b_avx512::prefetch_rows_ahead(b + k * ldb, ldb);
    stream_b_avx512::prefetch_rows_ahead(b + (k + 1) * ldb, ldb);
    widen_row(b + k * ldb, k < valid_k, be0, be1);
    widen_row(b + (k + 1) * ldb, k + 1 < valid_k, bo0, bo1);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m512 ae = broadcast_bf16(a[r * kBlockK + k]), ao = broadcast_bf16(a[r * kBlockK + k + 1]);
      e0[r] = _mm512_fmadd_ps(ae, be0, e0[r]);
      e1[r] = _mm512_fmadd_ps(ae, be1, e1[r]);
      o0[r] = _mm512_fmadd_ps(ao, bo0, o0[r]);
      o1[r] = _mm512_fmadd_ps(ao, bo1, o1[r]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    if (first) {
      float* l = lanes + r * 64;
      _mm512_storeu_ps(l, e0[r]);
      _mm512_storeu_ps(l + 16, e1[r]);
      _mm512_storeu_ps(l + 32, o0[r]);
      _mm512_storeu_ps(l + 48, o1[r]);
    } else {
      float* row = acc + r * kNr;
      _mm512_storeu_ps(row, _mm512_add_ps(_mm512_loadu_ps(row), _mm512_add_ps(e0[r], o0[r])));
      _mm512_storeu_ps(row + 16, _mm512_add_ps(_mm512_loadu_ps(row + 16), _mm512_add_ps(e1[r], o1[r])));
    }
  }
}

constexpr int kStreamRows = 6;  // 24 accumulators, 4 B and 2 A registers

template <int R = kStreamRows>
void stream_half_block_rows(std::int64_t rows, const std::uint16_t* a, const std::uint16_t* b, std::int64_t ldb,
                            int k0, std::int64_t valid_k, float* lanes, float* acc) {
  if constexpr (R > 1)
    if (rows < R) return stream_half_block_rows<R - 1>(rows, a, b, ldb, k0, valid_k, lanes, acc);
  stream_half_block_tile<R>(a, b, ldb, k0, valid_k, lanes, acc);
}

// The lanes of every (column panel, row) between the two halves of a block:
// a grow-only per-thread buffer (a plain struct: no template code in an ISA
// file, cmake/check_isa_objects.cmake).
struct LaneScratch {
  float* data = nullptr;
  std::int64_t capacity = 0;
  ~LaneScratch() { delete[] data; }
  float* get(std::int64_t floats) {
    if (floats > capacity) {
      delete[] data;
      data = new float[static_cast<std::size_t>(floats)];
      capacity = floats;
    }
    return data;
  }
};
thread_local LaneScratch t_lanes;

// One 32-k block of 32 B columns (rows k < valid_k at b + k * ldb, zero
// past) as the B packing's 16 x 32 pair words, in `dst` (L1).
inline void interleave_block(const std::uint16_t* b, std::int64_t ldb, std::int64_t valid_k, std::uint32_t* dst) {
  const __m512i lo_idx = _mm512_load_si512(stream_b_avx512::kPairLo);
  const __m512i hi_idx = _mm512_load_si512(stream_b_avx512::kPairHi);
  for (int p = 0; p < kBlockK / 2; ++p) {
    const __m512i even = 2 * p < valid_k ? _mm512_loadu_si512(b + 2 * p * ldb) : _mm512_setzero_si512();
    const __m512i odd = 2 * p + 1 < valid_k ? _mm512_loadu_si512(b + (2 * p + 1) * ldb) : _mm512_setzero_si512();
    _mm512_store_si512(dst + p * kNr, _mm512_permutex2var_epi16(even, lo_idx, odd));
    _mm512_store_si512(dst + p * kNr + 16, _mm512_permutex2var_epi16(even, hi_idx, odd));
  }
}

// The tile path of stream_b_amx: per 32-k block and column panel, B's block is
// interleaved into pair words in L1 and multiplied on the tiles, with the
// packed path's instructions on the packed path's words: the same bits. A
// panel of at most 16 rows uses its first A tile and two accumulator tiles.
void stream_b_amx_tiles(std::int64_t kc, const std::uint16_t* a, std::int64_t a_stride, std::int64_t rows,
                        const std::uint16_t* b, std::int64_t ldb, std::int64_t panels, float* acc,
                        std::int64_t acc_m_panels) {
  alignas(64) std::uint32_t block[kBlockK / 2 * kNr];
  constexpr long kAccRow = kNr * sizeof(float), kARow = kBlockK * 2, kBRow = kNr * 4;
  const std::int64_t blocks = amx_blocks(kc);
  for (std::int64_t kb = 0; kb < blocks; ++kb) {
    const std::int64_t valid_k = std::min<std::int64_t>(kBlockK, kc - kb * kBlockK);
    for (std::int64_t jp = 0; jp < panels; ++jp) {
      interleave_block(b + kb * kBlockK * ldb + jp * kNr, ldb, valid_k, block);
      _tile_loadd(6, block, kBRow);
      _tile_loadd(7, block + 16, kBRow);
      for (std::int64_t ip = 0; ip * kMr < rows; ++ip) {
        const std::uint16_t* ap = a + ip * 2 * a_stride + kb * kMr * kBlockK;  // a_stride counts 32-bit words
        float* tile = acc + (jp * acc_m_panels + ip) * kMr * kNr;
        _tile_loadd(4, ap, kARow);
        _tile_loadd(0, tile, kAccRow);
        _tile_loadd(1, tile + 16, kAccRow);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_stored(0, tile, kAccRow);
        _tile_stored(1, tile + 16, kAccRow);
        if (rows - ip * kMr > 16) {
          _tile_loadd(5, ap + 16 * kBlockK, kARow);
          _tile_loadd(2, tile + 16 * kNr, kAccRow);
          _tile_loadd(3, tile + 16 * kNr + 16, kAccRow);
          _tile_dpbf16ps(2, 5, 6);
          _tile_dpbf16ps(3, 5, 7);
          _tile_stored(2, tile + 16 * kNr, kAccRow);
          _tile_stored(3, tile + 16 * kNr + 16, kAccRow);
        }
      }
    }
  }
}

// GemmStreamBFn for the amx_bf16 packing: `a` holds pack_a's rows (a_stride
// words per A panel), B is bf16 [kc rows, ldb]. Each 32-k block in two halves
// of 16 B rows, each half across every column panel: 16 rows of B are read
// as parallel streams, not 32 (which the 2-core Xeon read about 15% slower in
// a 1 GB model's decode). Only the real rows are computed.
void stream_b_amx(std::int64_t kc, const float* a_words, std::int64_t a_stride, std::int64_t rows, const void* b,
                  DType b_dtype, std::int64_t ldb, std::int64_t panels, float* acc, std::int64_t acc_m_panels) {
  (void)b_dtype;  // bf16: the driver streams B for this packing only when A and B are both bf16
  const auto* a = reinterpret_cast<const std::uint16_t*>(a_words);
  const auto* bb = static_cast<const std::uint16_t*>(b);
  if (rows >= kAmxStreamTileRows) return stream_b_amx_tiles(kc, a, a_stride, rows, bb, ldb, panels, acc, acc_m_panels);
  const DazFtzScope mxcsr;
  const std::int64_t blocks = amx_blocks(kc);
  float* lanes = t_lanes.get(panels * rows * 64);
  for (std::int64_t kb = 0; kb < blocks; ++kb) {
    const std::int64_t valid_k = std::min<std::int64_t>(kBlockK, kc - kb * kBlockK);
    for (int k0 = 0; k0 < kBlockK; k0 += kBlockK / 2)
      for (std::int64_t jp = 0; jp < panels; ++jp) {
        const std::uint16_t* bk = bb + kb * kBlockK * ldb + jp * kNr;
        for (std::int64_t ip = 0; ip * kMr < rows; ++ip) {
          const std::int64_t panel_rows = std::min<std::int64_t>(kMr, rows - ip * kMr);
          const std::uint16_t* ap = a + ip * 2 * a_stride + kb * kMr * kBlockK;  // a_stride counts 32-bit words
          float* tile = acc + (jp * acc_m_panels + ip) * kMr * kNr;
          for (std::int64_t r = 0; r < panel_rows; r += kStreamRows)
            stream_half_block_rows(std::min<std::int64_t>(kStreamRows, panel_rows - r), ap + r * kBlockK, bk, ldb, k0,
                                   valid_k, lanes + (jp * rows + ip * kMr + r) * 64, tile + r * kNr);
        }
      }
  }
}

}  // namespace

GemmMicroKernel gemm_microkernel_amx() {
  return {"amx_32x32", kMr, kNr, &microkernel_amx, GemmPacking::amx_bf16, &stream_b_amx, false,
          gemm_pack_pairs_avx512(), &begin_amx_task, &end_amx_task, &microkernel_amx_grid};
}

}  // namespace hal::cpu_ref
