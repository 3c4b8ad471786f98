// GEMM on CDNA matrix cores (v_mfma_f32_32x32x8f16 / _bf16_1k), f16 and bf16
// operands, fp32 accumulation, any strides and shapes (edges zero-filled).
//
// Tile: 64x64 outputs per workgroup of 4 wave64s; each wave owns a 32x32
// quarter and issues one 32x32x8 MFMA per 8 of the 32 K values of a stage.
// A and B tiles live in LDS as [row][k] with kLdsPad halfs of padding per row
// (a row is 72 bytes, so the 32 rows read by one ds_read_b64 spread over the
// banks instead of landing on a few). Double-buffered: while the waves
// multiply stage s out of one LDS buffer, each thread holds stage s+1's
// elements in registers and writes them to the other buffer afterwards; one
// barrier per stage.
//
// Global loads: when an operand is K-contiguous and 16-byte aligned with K a
// multiple of 8 (a_vec8 / b_vec8, decided by the launcher), each thread loads
// one 16-byte chunk (8 K-values of one row) per stage; otherwise element-wise
// with strides, coalesced along whichever of K / M / N is contiguous.
#include <hip/hip_runtime.h>

#include "gemm_epilogue.h"
#include "gemm_geometry.h"
#include "hip/mfma.h"
#include "hip/wave.h"

using namespace hal::hip;
using namespace hal::hip::kernels;
using namespace hal::kernel_params;

namespace {

using Tile = GemmMfmaTile;
constexpr int kBM = Tile::kBlockM, kBN = Tile::kBlockN, kBK = Tile::kBlockK;
constexpr int kRow = kBK + Tile::kLdsPad;                       // LDS row length in halfs
static_assert(Tile::kThreads == 4 * kWaveSize, "gemm_mfma: 4 wave64s, one per 32x32 quarter");
static_assert(kBM == 64 && kBN == 64 && kBK % 8 == 0, "gemm_mfma: 2x2 waves of 32x32, K a multiple of the MFMA's 8");
static_assert((kRow * 2) % 8 == 0, "gemm_mfma: LDS rows must keep 8-byte fragment reads aligned");

// One stage of one operand, held in registers between the global load and
// the LDS store: 8 16-bit elements per thread packed in 4 dwords (a native
// vector, so every access is a register, never scratch: the ISA check
// hip_build.isa_checks caught an array-of-halfs version spilling 48 bytes).
typedef unsigned int StageRegs __attribute__((ext_vector_type(4)));
static_assert(kBM * kBK == 8 * Tile::kThreads && kBN * kBK == 8 * Tile::kThreads,
              "gemm_mfma: each thread moves exactly 8 elements (one 16-byte chunk) per operand and stage");

__device__ __forceinline__ uint16_t element(const StageRegs& r, int i) {  // i is a constant after unrolling
  return static_cast<uint16_t>(r[i / 2] >> (16 * (i % 2)));
}

// Element e = t + 256*i of the [rows][kBK] tile (scalar path); `k_major`
// picks k (else the row) as the fast index so consecutive threads read
// consecutive addresses. Vector path: thread t owns row t / 4, k 8*(t % 4).
__device__ __forceinline__ void load_stage(const uint16_t* base, int64_t row0, int64_t rows, int64_t k0, int64_t kdim,
                                           int64_t row_stride, int64_t k_stride, bool k_major, bool vec8,
                                           int tile_rows, StageRegs& regs) {
  const int t = static_cast<int>(threadIdx.x);
  if (vec8) {
    const int64_t gr = row0 + t / 4, gk = k0 + 8 * (t % 4);
    // kdim % 8 == 0: a chunk is either whole or entirely past the end.
    regs = (gr < rows && gk < kdim) ? *reinterpret_cast<const StageRegs*>(base + gr * row_stride + gk)
                                    : StageRegs{0u, 0u, 0u, 0u};
    return;
  }
  StageRegs r = {0u, 0u, 0u, 0u};
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int e = t + Tile::kThreads * i;
    const int row = k_major ? e / kBK : e % tile_rows;
    const int k = k_major ? e % kBK : e / tile_rows;
    const int64_t gr = row0 + row, gk = k0 + k;
    const unsigned v = (gr < rows && gk < kdim) ? base[gr * row_stride + gk * k_stride] : 0u;
    r[i / 2] |= v << (16 * (i % 2));
  }
  regs = r;
}

__device__ __forceinline__ void store_stage(uint16_t* lds, bool k_major, bool vec8, int tile_rows,
                                            const StageRegs& regs) {
  const int t = static_cast<int>(threadIdx.x);
  if (vec8) {
    // Row t / 4 at k 8*(t % 4): 72-byte rows keep this 8-byte aligned (two 8-byte LDS writes).
    typedef unsigned int U32x2 __attribute__((ext_vector_type(2)));
    U32x2* dst = reinterpret_cast<U32x2*>(lds + (t / 4) * kRow + 8 * (t % 4));
    dst[0] = U32x2{regs[0], regs[1]};
    dst[1] = U32x2{regs[2], regs[3]};
    return;
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int e = t + Tile::kThreads * i;
    const int row = k_major ? e / kBK : e % tile_rows;
    const int k = k_major ? e % kBK : e / tile_rows;
    lds[row * kRow + k] = element(regs, i);
  }
}

template <int kDType>
__device__ __forceinline__ void gemm_mfma(const GemmParams& p) {
  using Mma = Mfma32x32x8<kDType>;
  __shared__ __attribute__((aligned(16))) uint16_t a_lds[2][kBM * kRow];
  __shared__ __attribute__((aligned(16))) uint16_t b_lds[2][kBN * kRow];

  const int64_t z = blockIdx.z;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kBM, n0 = static_cast<int64_t>(blockIdx.x) * kBN;
  const uint16_t* a = static_cast<const uint16_t*>(p.a) + z * p.a_batch_stride;
  const uint16_t* b = static_cast<const uint16_t*>(p.b) + z * p.b_batch_stride;
  const bool a_km = p.a_k_major != 0, b_km = p.b_k_major != 0;
  const bool a_v8 = p.a_vec8 != 0, b_v8 = p.b_vec8 != 0;
  const int lane = lane_id(), wave = wave_id();
  const int wm = wave / 2, wn = wave % 2;

  typename Mma::D acc;
#pragma unroll
  for (int r = 0; r < 16; ++r) acc[r] = 0.0f;

  StageRegs a_regs, b_regs;
  const int64_t stages = (p.k + kBK - 1) / kBK;
  load_stage(a, m0, p.m, 0, p.k, p.a_m_stride, p.a_k_stride, a_km, a_v8, kBM, a_regs);
  load_stage(b, n0, p.n, 0, p.k, p.b_n_stride, p.b_k_stride, b_km, b_v8, kBN, b_regs);
  store_stage(a_lds[0], a_km, a_v8, kBM, a_regs);
  store_stage(b_lds[0], b_km, b_v8, kBN, b_regs);
  __syncthreads();

  for (int64_t s = 0; s < stages; ++s) {
    const int buf = static_cast<int>(s & 1);
    const bool more = s + 1 < stages;
    if (more) {  // next stage's global loads are in flight during the MFMAs below
      load_stage(a, m0, p.m, (s + 1) * kBK, p.k, p.a_m_stride, p.a_k_stride, a_km, a_v8, kBM, a_regs);
      load_stage(b, n0, p.n, (s + 1) * kBK, p.k, p.b_n_stride, p.b_k_stride, b_km, b_v8, kBN, b_regs);
    }
    const uint16_t* as = a_lds[buf] + (wm * 32 + lane % 32) * kRow + 4 * (lane / 32);
    const uint16_t* bs = b_lds[buf] + (wn * 32 + lane % 32) * kRow + 4 * (lane / 32);
#pragma unroll
    for (int kk = 0; kk < kBK; kk += Mma::K) {
      const auto af = *reinterpret_cast<const typename Mma::A*>(as + kk);
      const auto bf = *reinterpret_cast<const typename Mma::B*>(bs + kk);
      acc = Mma::fma(af, bf, acc);
    }
    if (more) {
      store_stage(a_lds[buf ^ 1], a_km, a_v8, kBM, a_regs);
      store_stage(b_lds[buf ^ 1], b_km, b_v8, kBN, b_regs);
    }
    __syncthreads();
  }

  // D layout of 32x32x8: lane l, register r holds D[8*(r/4) + 4*(l/32) + r%4][l%32].
  const int64_t col = n0 + wn * 32 + lane % 32;
#pragma unroll
  for (int r = 0; r < 16; ++r) {
    const int64_t row = m0 + wm * 32 + 8 * (r / 4) + 4 * (lane / 32) + r % 4;
    if (row < p.m && col < p.n) gemm_store(p, z, row, col, acc[r]);
  }
}

}  // namespace

extern "C" __global__ __launch_bounds__(GemmMfmaTile::kThreads) void gemm_mfma_f16(GemmParams p) { gemm_mfma<1>(p); }
extern "C" __global__ __launch_bounds__(GemmMfmaTile::kThreads) void gemm_mfma_bf16(GemmParams p) { gemm_mfma<2>(p); }
