// Test kernels for the sm_90 / sm_90a PTX wrappers, each run alone against a
// CPU model of the layout or protocol its header documents (host side:
// tests/cuda/ptx_wrappers_sm90_test.cpp). Parameters: WrapperTestSm90Params.
//
//   hal_test_elect_sync     128 threads. in: uint32 masks[variant]; out: byte per
//                           (mask, thread): 0 outside the mask, else 0x10 | elected
//                           (bit 0) | elected by a second identical call (bit 1)
//   hal_test_stmatrix       32 threads. in: uint32 regs[32 lanes][4]; out: the
//                           16x16 b16 tile stmatrix x4 (variant 1: .trans) wrote
//   hal_test_mbarrier       128 threads, arrive count 96, three phases; out: the
//                           uint32 observations listed in the kernel
//   hal_test_mbarrier_timeout  1 thread waits on a phase nobody completes: the
//                           bounded wait must trap (the host runs it in a child)
//   hal_test_tma_load       128 threads. map: 16-bit matrix, box {64, 32}, 128B
//                           swizzle; three loads through one mbarrier; out: the
//                           raw (swizzled) shared tile of each load, then three
//                           uint32 "complete before the copy was issued" flags
//   hal_test_setmaxnreg     384 threads (3 warpgroups): dec 40 / inc 232 as the
//                           GEMM, then fp32 work; in: float x[512]; out: see kernel
//   hal_test_wgmma_<t>[_bn] 128 threads (one warpgroup). in: A[64][64], B[64][128]
//                           row-major b16; out: D[64][128] f32 = A B, written
//                           through the documented accumulator layout
//   hal_test_wgmma_rs_<t>_n<N>  128 threads, the same inputs; A from REGISTERS
//                           (the documented A fragment, as the sm_90a attention
//                           kernel passes P), B N-major as above (its V);
//                           out: columns 0..N-1 of D[64][128] (N = 64 or 128)
//   hal_test_wgmma_e4m3     128 threads. in: A[64][128] then B[128 n][128 k]
//                           e4m3 bytes (both K-major, as FP8 wgmma requires);
//                           out: D[64][128] f32 = A B^T by four m64n128k32 steps
//
// Each kernel's thread 0 writes kWrapperTestRan to p.status when its body is
// compiled for the running architecture, kWrapperTestCompiledOut otherwise,
// so the host can skip instead of checking an empty kernel.
#include <stdint.h>

// Bounded waits in every build: a wrong arrival or byte count traps instead
// of hanging the GPU. Legitimate waits here last microseconds; 2^18 tries
// take milliseconds at the GEMM's estimate (2^24 tries "within seconds"), so
// the timeout test stays short even if try_wait suspends for a while.
#define HAL_PTX_BOUNDED_WAITS 1
#define HAL_PTX_MBARRIER_SPIN_LIMIT (1u << 18)

#include "ptx/arch_config.cuh"
#include "ptx/elect.cuh"
#include "ptx/kernels/wrapper_tests_params.h"
#include "ptx/mbarrier.cuh"
#include "ptx/setmaxnreg.cuh"
#include "ptx/stmatrix.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma_sm90a.cuh"

using namespace hal::ptx;
using Shapes = WrapperTestSm90Shapes;

namespace {

__device__ __forceinline__ void report_status(const WrapperTestSm90Params& p, bool compiled) {
  if (threadIdx.x == 0 && p.status != nullptr) *p.status = compiled ? kWrapperTestRan : kWrapperTestCompiledOut;
}

#if HAL_PTX_SM90
// First 1024-byte-aligned address in `raw` (shared window offsets).
__device__ __forceinline__ uint8_t* align1024(uint8_t* raw) {
  const uint32_t a = smem_u32(raw);
  return raw + (((a + 1023u) & ~1023u) - a);
}
#endif

#if HAL_PTX_SM90A
// Byte offset of 16-bit element (r, c) of a tile with 128-byte rows in the
// 128B swizzle layout (TMA SWIZZLE_128B, wgmma layout_type 1): 16-byte chunk
// c/8 of row r lands at chunk (c/8) ^ (r % 8). Valid for 1024-byte-aligned tiles.
__device__ __forceinline__ uint32_t swizzle128(int r, int c) {
  return static_cast<uint32_t>(r * 128 + (((c / 8) ^ (r % 8)) * 16) + (c % 8) * 2);
}
#endif

}  // namespace

extern "C" __global__ void hal_test_elect_sync(const __grid_constant__ WrapperTestSm90Params p) {
#if HAL_PTX_SM90
  report_status(p, true);
  const uint32_t* masks = static_cast<const uint32_t*>(p.in);
  uint8_t* out = static_cast<uint8_t*>(p.out);
  const uint32_t lane = threadIdx.x % 32;
  for (int m = 0; m < p.variant; ++m) {
    const uint32_t mask = masks[m];
    uint8_t r = 0;
    // Only the lanes of the mask execute elect.sync (undefined otherwise).
    if ((mask >> lane) & 1u) {
      const bool first = elect_one_sync(mask);
      const bool second = elect_one_sync(mask);
      r = static_cast<uint8_t>(0x10u | (first ? 1u : 0u) | (second ? 2u : 0u));
    }
    out[m * blockDim.x + threadIdx.x] = r;
    __syncwarp();
  }
#else
  report_status(p, false);
#endif
}

extern "C" __global__ void hal_test_stmatrix(const __grid_constant__ WrapperTestSm90Params p) {
#if HAL_PTX_SM90
  report_status(p, true);
  __shared__ __align__(16) uint16_t M[16 * 16];
  const int lane = threadIdx.x;
  for (int i = lane; i < 256; i += 32) M[i] = 0xFFFFu;
  __syncwarp();
  const uint32_t* in = static_cast<const uint32_t*>(p.in);
  uint32_t r[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) r[i] = in[lane * 4 + i];
  // Lanes 8i..8i+7 address the rows of matrix i = lane / 8, whose origin is
  // row (i % 2) * 8, column (i / 2) * 8 (the ldmatrix test's arrangement).
  const int row = (lane % 8) + ((lane / 8) % 2) * 8, col = (lane / 16) * 8;
  if (p.variant == 0) StMatrixX4::copy(r, &M[row * 16 + col]);
  else StMatrixX4Trans::copy(r, &M[row * 16 + col]);
  __syncwarp();
  for (int i = lane; i < 256; i += 32) static_cast<uint16_t*>(p.out)[i] = M[i];
#else
  report_status(p, false);
#endif
}

// Output (uint32, host zeroes it):
//   [0] try_wait.parity(1) on the fresh barrier (the "preceding phase": 1)
//   [1] try_wait.parity(0) on the fresh barrier (phase 0 open: 0)
//   then per phase ph (parity ph & 1), 4 words at 2 + 4 ph:
//   [+0] try_wait(parity) with one arrival missing (0)
//   [+1] number of threads that returned from wait(parity) (128)
//   [+2] try_wait(parity) after completion (1)
//   [+3] try_wait(parity ^ 1), i.e. the next phase, still open (0)
extern "C" __global__ void hal_test_mbarrier(const __grid_constant__ WrapperTestSm90Params p) {
#if HAL_PTX_SM90
  report_status(p, true);
  __shared__ Mbarrier bar;
  uint32_t* out = static_cast<uint32_t*>(p.out);
  const int t = threadIdx.x;
  constexpr int kArrivals = Shapes::kMbarArrivals;
  if (t == 0) {
    bar.init(kArrivals);
    Mbarrier::fence_init();
  }
  __syncthreads();
  if (t == 0) {
    out[0] = bar.try_wait_parity(1) ? 1u : 0u;
    out[1] = bar.try_wait_parity(0) ? 1u : 0u;
  }
  for (int ph = 0; ph < Shapes::kMbarPhases; ++ph) {
    const uint32_t parity = static_cast<uint32_t>(ph) & 1u;
    uint32_t* o = out + 2 + 4 * ph;
    __syncthreads();  // thread 0's observations of the previous phase come first
    if (t < kArrivals - 1) bar.arrive();
    __syncthreads();
    if (t == 0) o[0] = bar.try_wait_parity(parity) ? 1u : 0u;
    __syncthreads();
    if (t == kArrivals - 1) bar.arrive();
    bar.wait(parity);  // all 128 threads, arrivers or not
    atomicAdd(&o[1], 1u);
    if (t == 0) {
      o[2] = bar.try_wait_parity(parity) ? 1u : 0u;
      o[3] = bar.try_wait_parity(parity ^ 1u) ? 1u : 0u;
    }
  }
#else
  report_status(p, false);
#endif
}

// Nobody arrives: Mbarrier::wait must trap after HAL_PTX_MBARRIER_SPIN_LIMIT
// tries (out[0] stays 0). Poisons the context: run it only in a child process.
extern "C" __global__ void hal_test_mbarrier_timeout(const __grid_constant__ WrapperTestSm90Params p) {
#if HAL_PTX_SM90
  report_status(p, true);
  __shared__ Mbarrier bar;
  if (threadIdx.x == 0) bar.init(1);
  __syncthreads();
  bar.wait(0);
  static_cast<uint32_t*>(p.out)[0] = 1u;
#else
  report_status(p, false);
#endif
}

extern "C" __global__ void hal_test_tma_load(const __grid_constant__ WrapperTestSm90Params p) {
#if HAL_PTX_SM90
  report_status(p, true);
  constexpr int kBytes = Shapes::kTmaBoxBytes;
  __shared__ __align__(1024) uint8_t raw[kBytes + 1024];  // 128B swizzle atoms are 1024 bytes
  __shared__ Mbarrier bar;
  uint8_t* tile = align1024(raw);
  uint8_t* out = static_cast<uint8_t*>(p.out);
  uint32_t* early = reinterpret_cast<uint32_t*>(out + Shapes::kTmaLoads * kBytes);
  const int t = threadIdx.x;
  if (t == 0) {
    prefetch_tensor_map(&p.map);
    bar.init(1);
    Mbarrier::fence_init();
  }
  __syncthreads();
  for (int i = 0; i < Shapes::kTmaLoads; ++i) {
    const uint32_t parity = static_cast<uint32_t>(i) & 1u;
    // Sentinel bytes, so a zero the host sees was written by the TMA's
    // out-of-bounds fill; made visible to the async proxy before the copy.
    for (int b = t * 16; b < kBytes; b += blockDim.x * 16)
      *reinterpret_cast<uint4*>(tile + b) = make_uint4(0xA5A5A5A5u, 0xA5A5A5A5u, 0xA5A5A5A5u, 0xA5A5A5A5u);
    fence_proxy_async_shared();
    __syncthreads();
    if (t == 0) {
      // The whole box counts, out-of-bounds part included (the GEMM relies on it).
      bar.arrive_expect_tx(kBytes);
      early[i] = bar.try_wait_parity(parity) ? 1u : 0u;  // arrivals done, bytes pending: 0
      TmaLoad2D::copy(tile, &p.map, bar, p.tile_col[i], p.tile_row[i]);
    }
    bar.wait(parity);
    for (int b = t * 16; b < kBytes; b += blockDim.x * 16)
      *reinterpret_cast<uint4*>(out + i * kBytes + b) = *reinterpret_cast<const uint4*>(tile + b);
    __syncthreads();  // every read of the tile before the next load's sentinel
  }
#else
  report_status(p, false);
#endif
}

// Warpgroup 0 gives registers back (dec 40), warpgroups 1 and 2 claim them
// (inc 232): 40 + 2 * 232 = 3 * 168, the launch allocation of a 384-thread
// kernel with __launch_bounds__(384, 1) (the GEMM's configuration).
// Output (float, x = in[0..512)):
//   [u * 64 + j], u = thread - 128 in [0, 256), j < 64 (consumers):
//       sum_{k < 32} x[(u + 7k) % 512] * x[(5j + k) % 512]
//   [256 * 64 + t], t < 128 (producer): sum_{i < 16} x[(16t + i) % 512]
// and *status = kWrapperTestCompiledOut + 1 if launched with the wrong
// thread count (setmaxnreg is then not executed).
extern "C" __global__ void __launch_bounds__(384, 1)
    hal_test_setmaxnreg(const __grid_constant__ WrapperTestSm90Params p) {
#if HAL_PTX_SM90A
  static_assert(Shapes::kSetmaxnregThreads == 384, "the launch bounds above");
  static_assert(Shapes::kSetmaxnregDec + 2 * Shapes::kSetmaxnregInc == 3 * 168, "registers must balance");
  if (blockDim.x != Shapes::kSetmaxnregThreads) {
    if (threadIdx.x == 0 && p.status != nullptr) *p.status = kWrapperTestCompiledOut + 1;
    return;
  }
  report_status(p, true);
  const float* x = static_cast<const float*>(p.in);
  float* out = static_cast<float*>(p.out);
  const int wg = threadIdx.x / 128;
  constexpr int kN = Shapes::kSetmaxnregInputs;
  if (wg == 0) {
    setmaxnreg_dec<Shapes::kSetmaxnregDec>();
    const int t = threadIdx.x;
    float s = 0.0f;
#pragma unroll 1
    for (int i = 0; i < 16; ++i) s += x[(16 * t + i) % kN];
    out[256 * Shapes::kSetmaxnregAcc + t] = s;
  } else {
    setmaxnreg_inc<Shapes::kSetmaxnregInc>();
    const int u = threadIdx.x - 128;
    float acc[Shapes::kSetmaxnregAcc];
#pragma unroll
    for (int j = 0; j < Shapes::kSetmaxnregAcc; ++j) acc[j] = 0.0f;
#pragma unroll 1
    for (int k = 0; k < Shapes::kSetmaxnregSteps; ++k) {
      const float a = x[(u + 7 * k) % kN];
#pragma unroll
      for (int j = 0; j < Shapes::kSetmaxnregAcc; ++j) acc[j] += a * x[(5 * j + k) % kN];
    }
#pragma unroll
    for (int j = 0; j < Shapes::kSetmaxnregAcc; ++j) out[u * Shapes::kSetmaxnregAcc + j] = acc[j];
  }
#else
  report_status(p, false);
#endif
}

#if HAL_PTX_SM90A
namespace {

// One warpgroup: D[64][128] = A[64][64] B[64][128] with four wgmma k16 steps,
// operands in shared memory exactly as the GEMM lays them out (128B swizzle,
// 1024-byte-aligned tiles):
//   A K-major: row m = 128 bytes of k; k-step s starts 32 s bytes into the rows.
//   B K-major (kBNMajor false): row n = 128 bytes of k, same descriptor as A.
//   B N-major (kBNMajor true): two [64 k][64 n] boxes, 8 KiB apart (LBO), row k
//     = 128 bytes of n; k-step s starts at row 16 s (2048 s bytes); transpose bit.
// The first step has scale_d = 0, so the 1e6 the accumulators start with must vanish.
template <class Mma, bool kBNMajor>
__device__ __forceinline__ void wgmma_test(const WrapperTestSm90Params& p) {
  constexpr int kM = Shapes::kWgmmaM, kN = Shapes::kWgmmaN, kK = Shapes::kWgmmaK;
  __shared__ __align__(1024) uint8_t raw[(kM + kN) * kK * 2 + 1024];
  uint8_t* sa = align1024(raw);
  uint8_t* sb = sa + kM * kK * 2;  // 8 KiB: still 1024-byte aligned
  const uint16_t* A = static_cast<const uint16_t*>(p.in);
  const uint16_t* B = A + kM * kK;
  const int t = threadIdx.x;
  for (int i = t; i < kM * kK; i += 128)
    *reinterpret_cast<uint16_t*>(sa + swizzle128(i / kK, i % kK)) = A[i];
  for (int i = t; i < kK * kN; i += 128) {
    const int k = i / kN, n = i % kN;
    const uint32_t off = kBNMajor ? (n / 64) * 8192 + swizzle128(k, n % 64) : swizzle128(n, k);
    *reinterpret_cast<uint16_t*>(sb + off) = B[i];
  }
  fence_proxy_async_shared();  // generic-proxy writes -> wgmma (async proxy) reads
  __syncthreads();

  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 1.0e6f;
#pragma unroll
  for (int i = 0; i < 64; ++i) wgmma_fence_operand(acc[i]);
  wgmma_fence();
#pragma unroll
  for (int s = 0; s < kK / 16; ++s) {
    const uint64_t desc_a = make_wgmma_desc(sa + 32 * s, 16, 1024, WgmmaSwizzle::b128);
    const uint64_t desc_b = kBNMajor ? make_wgmma_desc(sb + 2048 * s, 8192, 1024, WgmmaSwizzle::b128)
                                     : make_wgmma_desc(sb + 32 * s, 16, 1024, WgmmaSwizzle::b128);
    Mma::fma(acc, desc_a, desc_b, s > 0 ? 1 : 0);
  }
  wgmma_commit();
  wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < 64; ++i) wgmma_fence_operand(acc[i]);

  // Documented layout: warp w, lane l, 8-column slice j:
  // acc[4j + 2h + e] = D[16w + l/4 + 8h][8j + 2(l%4) + e].
  float* D = static_cast<float*>(p.out);
  const int warp = t / 32, lane = t % 32;
#pragma unroll
  for (int j = 0; j < 16; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int e = 0; e < 2; ++e)
        D[(16 * warp + lane / 4 + 8 * h) * kN + 8 * j + 2 * (lane % 4) + e] = acc[4 * j + 2 * h + e];
}

}  // namespace
#endif  // HAL_PTX_SM90A

#if HAL_PTX_SM90A
namespace {

// One warpgroup: D[64][N] = A[64][64] B[64][N], A in registers (the RS form),
// B N-major in shared memory as wgmma_test's kBNMajor case (and the attention
// kernel's V tiles). A fragment of k-step s, warp w, lane l (r = 16w + l/4,
// c = 16s + 2(l%4)): a[0] = A[r][c..c+1], a[1] = A[r+8][c..c+1],
// a[2] = A[r][c+8..c+9], a[3] = A[r+8][c+8..c+9], low half the lower column.
// All fragments stay live until the wait (the instruction reads them late).
template <class Mma, int kNOut>
__device__ __forceinline__ void wgmma_rs_test(const WrapperTestSm90Params& p) {
  constexpr int kM = Shapes::kWgmmaM, kN = Shapes::kWgmmaN, kK = Shapes::kWgmmaK;
  __shared__ __align__(1024) uint8_t raw[kN * kK * 2 + 1024];
  uint8_t* sb = align1024(raw);
  const uint16_t* A = static_cast<const uint16_t*>(p.in);
  const uint16_t* B = A + kM * kK;
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  for (int i = t; i < kK * kN; i += 128) {
    const int k = i / kN, n = i % kN;
    *reinterpret_cast<uint16_t*>(sb + (n / 64) * 8192 + swizzle128(k, n % 64)) = B[i];
  }
  fence_proxy_async_shared();
  __syncthreads();
  auto pair = [&](int r, int c) {
    return static_cast<uint32_t>(A[r * kK + c]) | (static_cast<uint32_t>(A[r * kK + c + 1]) << 16);
  };
  uint32_t a[kK / 16][4];
  const int r = 16 * warp + lane / 4;
#pragma unroll
  for (int s = 0; s < kK / 16; ++s) {
    const int c = 16 * s + 2 * (lane % 4);
    a[s][0] = pair(r, c);
    a[s][1] = pair(r + 8, c);
    a[s][2] = pair(r, c + 8);
    a[s][3] = pair(r + 8, c + 8);
  }
  float acc[kNOut / 2];
#pragma unroll
  for (int i = 0; i < kNOut / 2; ++i) acc[i] = 1.0e6f;
#pragma unroll
  for (int i = 0; i < kNOut / 2; ++i) wgmma_fence_operand(acc[i]);
  wgmma_fence();
#pragma unroll
  for (int s = 0; s < kK / 16; ++s)
    Mma::fma(acc, a[s], make_wgmma_desc(sb + 2048 * s, 8192, 1024, WgmmaSwizzle::b128), s > 0 ? 1 : 0);
  wgmma_commit();
  wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < kNOut / 2; ++i) wgmma_fence_operand(acc[i]);
#pragma unroll
  for (int s = 0; s < kK / 16; ++s)
#pragma unroll
    for (int w = 0; w < 4; ++w) wgmma_fence_operand(a[s][w]);
  float* D = static_cast<float*>(p.out);
#pragma unroll
  for (int j = 0; j < kNOut / 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int e = 0; e < 2; ++e)
        D[(16 * warp + lane / 4 + 8 * h) * kN + 8 * j + 2 * (lane % 4) + e] = acc[4 * j + 2 * h + e];
}

}  // namespace
#endif  // HAL_PTX_SM90A

#if HAL_PTX_SM90A
namespace {

// FP8: A [64 m][128 k] and B [128 n][128 k] bytes, each row one 128-byte
// swizzle row (16-byte chunk c of row r at c ^ (r & 7)), k32 step s 32 s
// bytes into the rows: the layout of ptx/kernels/gemm_fp8_sm90a.cu's stages.
__device__ __forceinline__ void wgmma_fp8_test(const WrapperTestSm90Params& p) {
  constexpr int kM = 64, kN = 128, kK = 128;
  __shared__ __align__(1024) uint8_t raw[(kM + kN) * kK + 1024];
  uint8_t* sa = align1024(raw);
  uint8_t* sb = sa + kM * kK;  // 8 KiB: 1024-byte aligned
  const uint8_t* A = static_cast<const uint8_t*>(p.in);
  const uint8_t* B = A + kM * kK;
  const int t = threadIdx.x;
  const auto at = [](int r, int k) { return r * 128 + (((k / 16) ^ (r % 8)) * 16) + k % 16; };
  for (int i = t; i < kM * kK; i += 128) sa[at(i / kK, i % kK)] = A[i];
  for (int i = t; i < kN * kK; i += 128) sb[at(i / kK, i % kK)] = B[i];
  fence_proxy_async_shared();
  __syncthreads();
  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 1.0e6f;  // scale_d = 0 on the first step must clear it
#pragma unroll
  for (int i = 0; i < 64; ++i) wgmma_fence_operand(acc[i]);
  wgmma_fence();
#pragma unroll
  for (int s = 0; s < kK / 32; ++s)
    WgmmaM64N128K32F32E4m3E4m3SS::fma(acc, make_wgmma_desc(sa + 32 * s, 16, 1024, WgmmaSwizzle::b128),
                                      make_wgmma_desc(sb + 32 * s, 16, 1024, WgmmaSwizzle::b128), s > 0 ? 1 : 0);
  wgmma_commit();
  wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < 64; ++i) wgmma_fence_operand(acc[i]);
  float* D = static_cast<float*>(p.out);
  const int warp = t / 32, lane = t % 32;
#pragma unroll
  for (int j = 0; j < 16; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int e = 0; e < 2; ++e)
        D[(16 * warp + lane / 4 + 8 * h) * kN + 8 * j + 2 * (lane % 4) + e] = acc[4 * j + 2 * h + e];
}

}  // namespace
#endif  // HAL_PTX_SM90A

extern "C" __global__ void __launch_bounds__(128, 1) hal_test_wgmma_e4m3(const __grid_constant__ WrapperTestSm90Params p) {
#if HAL_PTX_SM90A
  report_status(p, true);
  wgmma_fp8_test(p);
#else
  report_status(p, false);
#endif
}

extern "C" __global__ void __launch_bounds__(128, 1) hal_test_wgmma_bf16(const __grid_constant__ WrapperTestSm90Params p) {
#if HAL_PTX_SM90A
  report_status(p, true);
  wgmma_test<WgmmaM64N128K16F32Bf16SS<0, 0>, false>(p);
#else
  report_status(p, false);
#endif
}

extern "C" __global__ void __launch_bounds__(128, 1) hal_test_wgmma_f16(const __grid_constant__ WrapperTestSm90Params p) {
#if HAL_PTX_SM90A
  report_status(p, true);
  wgmma_test<WgmmaM64N128K16F32F16SS<0, 0>, false>(p);
#else
  report_status(p, false);
#endif
}

extern "C" __global__ void __launch_bounds__(128, 1)
    hal_test_wgmma_bf16_bn(const __grid_constant__ WrapperTestSm90Params p) {
#if HAL_PTX_SM90A
  report_status(p, true);
  wgmma_test<WgmmaM64N128K16F32Bf16SS<0, 1>, true>(p);
#else
  report_status(p, false);
#endif
}

extern "C" __global__ void __launch_bounds__(128, 1)
    hal_test_wgmma_f16_bn(const __grid_constant__ WrapperTestSm90Params p) {
#if HAL_PTX_SM90A
  report_status(p, true);
  wgmma_test<WgmmaM64N128K16F32F16SS<0, 1>, true>(p);
#else
  report_status(p, false);
#endif
}

extern "C" __global__ void __launch_bounds__(128, 1)
    hal_test_wgmma_rs_bf16_n64(const __grid_constant__ WrapperTestSm90Params p) {
#if HAL_PTX_SM90A
  report_status(p, true);
  wgmma_rs_test<WgmmaM64N64K16F32Bf16RS<1>, 64>(p);
#else
  report_status(p, false);
#endif
}

extern "C" __global__ void __launch_bounds__(128, 1)
    hal_test_wgmma_rs_bf16_n128(const __grid_constant__ WrapperTestSm90Params p) {
#if HAL_PTX_SM90A
  report_status(p, true);
  wgmma_rs_test<WgmmaM64N128K16F32Bf16RS<1>, 128>(p);
#else
  report_status(p, false);
#endif
}

extern "C" __global__ void __launch_bounds__(128, 1)
    hal_test_wgmma_rs_f16_n64(const __grid_constant__ WrapperTestSm90Params p) {
#if HAL_PTX_SM90A
  report_status(p, true);
  wgmma_rs_test<WgmmaM64N64K16F32F16RS<1>, 64>(p);
#else
  report_status(p, false);
#endif
}

extern "C" __global__ void __launch_bounds__(128, 1)
    hal_test_wgmma_rs_f16_n128(const __grid_constant__ WrapperTestSm90Params p) {
#if HAL_PTX_SM90A
  report_status(p, true);
  wgmma_rs_test<WgmmaM64N128K16F32F16RS<1>, 128>(p);
#else
  report_status(p, false);
#endif
}
