#pragma once
// The 16-bit element types of the sm_90a attention kernels (the forward,
// attention_sm90a.cu, and the backward, attention_sm90a_backward.cu) and the
// register-level steps both build on: fp32 scores split into 16-bit parts
// (the numerics of the verified mma.sync kernels, docs/accuracy.md), the
// operand fences around wgmma, and the two products (SS: both operands in
// shared memory; RS: the A fragments from registers). One copy, so that the
// forward and the backward cannot drift apart in how they round or issue.
//
// Fragments: an m64nN fp32 accumulator is N / 2 floats a thread, column
// group j (8 columns) at 4j; element e is row 16 warp + lane / 4 + 8 (e / 2),
// column 8j + 2 (lane % 4) + e % 2. Packed in pairs, column groups 2kj and
// 2kj + 1 are the A fragment of k16 slice kj (4 registers).
#include <stdint.h>

#include <type_traits>

#include "ptx/arch_config.cuh"
#include "ptx/kernels/attention_mma_tile.cuh"  // F16Traits, Bf16Traits
#include "ptx/wgmma_sm90a.cuh"

namespace hal::ptx::attention_sm90a_elements {

// kParts (the 16-bit parts a value is split into, x = hi + mid [+ lo]: f16
// 2, bf16 3, enough that the products stay within fp32-accumulation error),
// pack and unpack are the mma.sync kernels' (attention_mma_tile.cuh F16Traits
// / Bf16Traits: the same rounding as the verified kernels; their m16n8k16
// Mma is not used here). MmaSS<N>: m64nNk16, both operands K-major in shared
// memory (N = 32, 64 or 128). MmaRS<N>: m64nNk16 with A from registers and B
// MN-major (the transpose bit; N = 64 or 128). The wgmma structs are only
// instantiated (and checked) in the sm_90a pass.
template <class Traits, template <int, int> class SS32, template <int, int> class SS64, template <int, int> class SS128,
          template <int> class RS64, template <int> class RS128>
struct Element : Traits {
  template <int N>
  using MmaSS = typename std::conditional<
      N == 32, SS32<0, 0>, typename std::conditional<N == 64, SS64<0, 0>, SS128<0, 0>>::type>::type;
  template <int N>
  using MmaRS = typename std::conditional<N == 64, RS64<1>, RS128<1>>::type;
};
using F16 = Element<attention_tile::F16Traits, WgmmaM64N32K16F32F16SS, WgmmaM64N64K16F32F16SS, WgmmaM64N128K16F32F16SS,
                    WgmmaM64N64K16F32F16RS, WgmmaM64N128K16F32F16RS>;
using Bf16 = Element<attention_tile::Bf16Traits, WgmmaM64N32K16F32Bf16SS, WgmmaM64N64K16F32Bf16SS,
                     WgmmaM64N128K16F32Bf16SS, WgmmaM64N64K16F32Bf16RS, WgmmaM64N128K16F32Bf16RS>;

#if HAL_PTX_SM90A

// Keeps the compiler from moving accesses of x across a wgmma that reads or
// writes it (until a wgmma_wait covers that wgmma).
template <int N>
__device__ __forceinline__ void fence_acc(float (&x)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) wgmma_fence_operand(x[i]);
}

// x's 16-bit parts as A fragments (N / 8 k16 slices): part 0 = round(x),
// part k = round(what the earlier parts missed) (the mma.sync kernels'
// accumulate_xb).
template <class T, int N>
__device__ __forceinline__ void split_parts(const float (&x)[N], uint32_t (&xa)[T::kParts][N / 8][4]) {
#pragma unroll
  for (int kj = 0; kj < N / 8; ++kj)
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      float lo = x[8 * kj + 2 * w], hi = x[8 * kj + 2 * w + 1];
#pragma unroll
      for (int part = 0; part < T::kParts; ++part) {
        xa[part][kj][w] = T::pack(lo, hi);
        const float2 back = T::unpack(xa[part][kj][w]);
        lo -= back.x, hi -= back.y;
      }
    }
}

template <class T, int kSlices>
__device__ __forceinline__ void fence_parts(uint32_t (&xa)[T::kParts][kSlices][4]) {
#pragma unroll
  for (int part = 0; part < T::kParts; ++part)
#pragma unroll
    for (int kj = 0; kj < kSlices; ++kj)
#pragma unroll
      for (int w = 0; w < 4; ++w) wgmma_fence_operand(xa[part][kj][w]);
}

// out[64 x N] = A[64 rows from a_row0][D] B[N][D]^T, both K-major
// 128B-swizzled tiles of D / 64 boxes (a_box / b_box bytes apart); k16
// slice k is box k / 4, 32 bytes into its 128-byte rows; the first slice
// overwrites out. Issued, not fenced or committed.
template <class MmaSS, int D, int kAcc>
__device__ __forceinline__ void product_ss(float (&out)[kAcc], const uint8_t* a_tile, int a_box, int a_row0,
                                           const uint8_t* b_tile, int b_box) {
#pragma unroll
  for (int k = 0; k < D / 16; ++k) {
    const uint8_t* pa = a_tile + (k / 4) * a_box + a_row0 * 128 + 32 * (k % 4);
    const uint8_t* pb = b_tile + (k / 4) * b_box + 32 * (k % 4);
    MmaSS::fma(out, make_wgmma_desc(pa, 16, 1024, WgmmaSwizzle::b128), make_wgmma_desc(pb, 16, 1024, WgmmaSwizzle::b128),
               k > 0 ? 1 : 0);
  }
}

// acc[64 x D] += X[64 x 16 kSlices] B[16 kSlices][D], X as its parts, B a
// MN-major 128B-swizzled tile (rows = the k index): rows 16kj.. of every box
// are 2048 bytes in (LBO = box bytes, SBO = 1024 per 8 rows). Terms in slice
// order, then part order (as accumulate_xb). Issued, not fenced or committed.
template <class T, int D, int kSlices>
__device__ __forceinline__ void product_rs(float (&acc)[D / 2], const uint32_t (&xa)[T::kParts][kSlices][4],
                                           const uint8_t* b_tile, int b_box) {
  using MmaRS = typename T::template MmaRS<D>;
#pragma unroll
  for (int kj = 0; kj < kSlices; ++kj) {
    const uint64_t desc = make_wgmma_desc(b_tile + 2048 * kj, b_box, 1024, WgmmaSwizzle::b128);
#pragma unroll
    for (int part = 0; part < T::kParts; ++part) MmaRS::fma(acc, xa[part][kj], desc, 1);
  }
}

#endif  // HAL_PTX_SM90A

}  // namespace hal::ptx::attention_sm90a_elements
