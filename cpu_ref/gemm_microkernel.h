#pragma once
// The register-blocked inner kernel of the fp32-accumulating gemm, one per ISA.
//
// A micro-kernel updates one MR x NR fp32 accumulator tile (row-major,
// contiguous) from two packed micro-panels, in one of two packings:
//
//   fp32:       a is kc x MR floats, b is kc x NR floats (k-major):
//               acc[r][c] += a[k][r] * b[k][c] for k = 0 .. kc-1 in ascending order.
//   bf16_pairs: a is ceil(kc/2) x MR, b is ceil(kc/2) x NR 32-bit words, each
//               word the bf16 pair (k even in the low half, k + 1 in the high
//               half; a zero pad past an odd kc), the operand layout of
//               AVX-512 BF16's vdpbf16ps. Per pair p, ascending:
//               acc += a_odd * b_odd, then acc += a_even * b_even, each one
//               rounding (the bf16 products are exact in fp32), inputs that are
//               bf16 subnormals read as zero, subnormal results flushed to zero.
//               Only for A and B both bf16; the pairs are always (2i, 2i + 1)
//               of the whole K, so the driver splits K at even offsets.
//   amx_bf16:   AMX's TDPBF16PS, K in blocks of 32 (the last one zero-padded;
//               the driver splits K at multiples of 32). Per block, a is MR rows
//               of 32 bf16 (row-major: an AMX A tile of 16 rows per half) and b
//               is 16 x NR words of bf16 pairs, as bf16_pairs (a B tile per 16
//               columns). Per element and block, two fp32 lanes start at +0:
//               e += a[2p] * b[2p] and o += a[2p + 1] * b[2p + 1] for pairs
//               p = 0 .. 15 in turn, each a fused step; then acc += (e + o).
//               Every step rounds to nearest even, bf16 subnormal inputs read as
//               zero, subnormal results flush to zero (DAZ/FTZ, whatever MXCSR
//               says). This is what the hardware does, measured on a Sapphire
//               Rapids class Xeon against this model and against the manual's
//               older one-accumulator pseudo-code (which it does not follow);
//               tests/unit/cpu_amx_test.cpp keeps checking it where AMX runs.
//
// No pointer needs any alignment.
//
// Determinism contract: every element's value is one chain of steps in
// ascending k, the same whatever the tile position or the kc split (acc is
// stored and reloaded exactly between calls). Whether the fp32 chain uses
// fused multiply-add depends on the ISA kernel, so results may differ between
// machines, but one process always uses one kernel per dtype combination
// (gemm_microkernel_for).
#include <cstdint>
#include <span>

#include "hal/dtype.h"

namespace hal::cpu_ref {

enum class GemmPacking { fp32, bf16_pairs, amx_bf16 };

// The amx_bf16 contract's K block (one TDPBF16PS of 16 pairs), and how many a kc takes.
inline constexpr int kAmxBlockK = 32;
constexpr std::int64_t amx_blocks(std::int64_t kc) { return (kc + kAmxBlockK - 1) / kAmxBlockK; }

// kc counts k elements in every packing (a bf16_pairs kernel runs ceil(kc/2) steps).
using GemmMicroKernelFn = void (*)(std::int64_t kc, const void* a, const void* b, float* acc);

// Decode-shaped tiles (a few rows): op(B) is read where it lies instead of
// being packed, when it is row-major (unit column stride) f32 or bf16
// (widened exactly on the fly). Updates `panels` whole NR-column panels for
// rows [0, rows) of the packed A panels `a` (kc x MR fp32 each, a_stride
// floats apart), in the accumulator layout the driver gives `run`: the MR x NR
// tile of A panel ip and column panel jp at acc + (jp * acc_m_panels + ip) *
// MR * NR. B row k is at b + k * ldb elements, panel jp's columns from jp *
// NR. Per element the same chain as `run`, with the kernel's own
// multiply-add, in ascending k: a row computed here equals the same row
// computed through packing, bit for bit. Rows of the last A panel past `rows`
// may be updated too (from A's zero padding; the driver never reads them).
// B is walked a group of k rows at a time across all panels (each group row
// is read once, from memory, and serves every A panel from L1); packing it
// first cost four times the kernel's own time for M = 1.
using GemmStreamBFn = void (*)(std::int64_t kc, const float* a, std::int64_t a_stride, std::int64_t rows,
                               const void* b, DType b_dtype, std::int64_t ldb, std::int64_t panels, float* acc,
                               std::int64_t acc_m_panels);

// `run` over a grid of tiles, in this order: for jp < n_panels, for ip <
// m_panels, run(kc, a + ip * a_stride, b + jp * b_stride, acc + jp * acc_jp +
// ip * acc_ip) (strides in 32-bit words, acc's in floats). The same bits as
// those calls; a kernel gives it to overlap one tile's accumulator stores with
// the next tile's work (AMX: the stores cost up to a third of a call,
// bench/probes/amx_tile_costs.cpp).
using GemmRunGridFn = void (*)(std::int64_t kc, const float* a, std::int64_t a_stride, std::int64_t m_panels,
                               const float* b, std::int64_t b_stride, std::int64_t n_panels, float* acc,
                               std::int64_t acc_ip, std::int64_t acc_jp);

struct GemmMatrix;
// The bf16_pairs packing of one operand block (pack_pair_panels in
// gemm_pack.h, same arguments), vectorised for a kernel's ISA: the same words.
using GemmPackPairsFn = void (*)(const GemmMatrix& m, std::int64_t batch, std::int64_t line0, std::int64_t extent,
                                 std::int64_t line_stride, std::int64_t k0, std::int64_t kc, std::int64_t k_stride,
                                 int width, std::uint32_t* dst);
// AVX-512 BF16's (cpu_ref/gemm_pack_pairs_avx512bf16.cpp): only where that kernel runs.
GemmPackPairsFn gemm_pack_pairs_avx512();

struct GemmMicroKernel {
  const char* name;   // "portable", "avx2_6x16", "avx512_12x32", "avx512bf16_12x32", ...
  int mr;             // rows of the accumulator tile
  int nr;             // columns of the accumulator tile
  GemmMicroKernelFn run;
  GemmPacking packing = GemmPacking::fp32;
  // null: always pack B. A bf16_pairs kernel's stream_b reads pack_a's pair
  // words through `a` and a bf16 B, pairing B's rows in registers.
  GemmStreamBFn stream_b = nullptr;
  // fp32 packing: each step is one fused multiply-add (else a rounded
  // multiply, then a rounded add). Kernels alike in this give the same bits.
  bool fused = false;
  GemmPackPairsFn pack_pairs = nullptr;  // bf16_pairs only; null: the plain pack_pair_panels
  // Run on the thread before a task's first `run` and after its last (AMX:
  // load the tile configuration, release the tiles); null: nothing to do. A
  // caller of `run` outside the driver brackets its calls the same way.
  void (*begin_task)() = nullptr;
  void (*end_task)() = nullptr;
  GemmRunGridFn run_grid = nullptr;  // null: the driver calls `run` tile by tile

  // K blocks start at multiples of this (2 keeps bf16 pairs aligned to the
  // whole K, 32 AMX's blocks).
  int k_granule() const {
    return packing == GemmPacking::bf16_pairs ? 2 : packing == GemmPacking::amx_bf16 ? kAmxBlockK : 1;
  }
  // Packings other than fp32 carry bf16 bits unchanged: bf16 A and B only.
  bool bf16_only() const { return packing != GemmPacking::fp32; }
};

// Each ISA's kernel (the avx2/avx512 ones must only be run on a CPU that has
// the ISA; see gemm_microkernels_available()).
GemmMicroKernel gemm_microkernel_portable();
GemmMicroKernel gemm_microkernel_avx2();
GemmMicroKernel gemm_microkernel_avx512();
GemmMicroKernel gemm_microkernel_avx512bf16();
// The bf16_pairs contract above in plain C++: the model the AVX-512 BF16
// kernel is written against, and the way the pair packing and the driver are
// tested on a CPU without AVX-512 BF16. Never selected by default.
GemmMicroKernel gemm_microkernel_bf16_pairs_emulated();
// AMX (cpu_ref/gemm_microkernel_amx.cpp): 32 x 32, four 16 x 16 fp32 tiles;
// only where cpu_features().amx_bf16. Its stream_b runs decode tiles of at
// least kAmxStreamTileRows rows on the tiles (B interleaved block by block in
// L1), fewer with AVX-512 multiply-adds under DAZ/FTZ (no AMX needed): the
// same bits as the packed path either way.
GemmMicroKernel gemm_microkernel_amx();
inline constexpr int kAmxStreamTileRows = 4;
// The amx_bf16 contract in plain C++ (32 x 32, the same packing): the model
// the AMX kernel is tested against, and the amx path on any CPU.
GemmMicroKernel gemm_microkernel_amx_emulated();

// The kernels this CPU can run, fp32 ones first, most capable last in each packing.
std::span<const GemmMicroKernel> gemm_microkernels_available();
// The fp32-packing kernel every gemm in this process uses: the most capable
// available one, chosen once. HAL_CPU_GEMM_KERNEL=portable|avx2|avx512 forces
// a (supported) choice, for comparing kernels.
const GemmMicroKernel& selected_gemm_microkernel();
// The kernel that computes a decode-shaped tile (stream_b) with the same bits
// as `k`: k itself when it has stream_b, else an available fp32 kernel with
// the same step (fused or not) that has one (an AVX-512 machine streams
// through the AVX2 kernel: both take one FMA per step, in ascending k); null
// when none does (bf16 pairs), and the tile packs B.
const GemmMicroKernel* decode_kernel_for(const GemmMicroKernel& k, std::span<const GemmMicroKernel> available);

// The kernel for a gemm with these input dtypes: when A and B are both bf16,
// the AMX kernel where the CPU has AMX, else the bf16_pairs kernel where it has
// AVX-512 BF16 (HAL_CPU_GEMM_KERNEL=avx512bf16 | amx | bf16_pairs_emulated |
// amx_emulated forces one; avx2, avx512 or portable keep bf16 on the fp32
// kernels), else selected_gemm_microkernel().
const GemmMicroKernel& gemm_microkernel_for(DType a, DType b);

}  // namespace hal::cpu_ref
