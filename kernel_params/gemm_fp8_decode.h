#pragma once
// Parameters and lane maps of the fp8 decode GEMM (gemm_fp8 with M <= 64,
// weights streamed once): ptx/kernels/gemm_fp8_decode.cu, planned by
// backends/gpu/gemm_fp8_decode_plan.h, which also emulates the kernel on the
// host (tests/unit/gpu_gemm_fp8_decode_plan_test.cpp). The 16-bit decode
// GEMM's decomposition (kernel_params/gemm_decode.h) with gemm_fp8's scales:
//
//   pass 1 (hal_gemm_fp8_decode_*): one warp per unit = (16 rows of N, one
//     K split of whole 128-blocks); per 128-block kb it sums S_kb from zero
//     on the tensor cores, then total = fma(sa[m, kb] * sb[n / 128, kb],
//     S_kb, total) in fp32, blocks in ascending order (gemm_fp8's promotion,
//     as gemm_fp8_sm80.cu does it); the split's total goes to
//     partial[split][m][n] (kernel_params/gemm_decode.h's layout, batch 1);
//   pass 2: hal_gemm_decode_reduce (ptx/kernels/gemm_decode.cu) sums the
//     splits in order 0..splits-1 and applies gemm_fp8's epilogue (the
//     shared gemm_store on GemmFp8Params::g).
//
// Operands: A [m, k] and B [n, k] fp8 bytes contiguous along K, 16-byte
// aligned bases and rows, K % 16 == 0: every pass-1 load is one 16-byte
// chunk (16 K-values). A step of kFp8DecodeStepK = 64 K-values: lane t,
// g = t / 4, q = t % 4 loads K-values [k0 + 16q, k0 + 16q + 16) of weight
// rows n0 + g and n0 + g + 8 and of activation row m0 + g of each 8-row M
// tile; accumulator r of M tile j is output (n0 + g + 8 (r / 2),
// m0 + 8j + 2q + r % 2) (kernel_params/gemm_decode.h decode_cuda_acc_*).
// Which word of a chunk feeds which K slot: gemm_fp8_decode.cu (both
// instruction forms), mirrored by the host emulation.
#include <stdint.h>

#include "hal/host_device.h"

namespace hal::kernel_params {

inline constexpr int kFp8DecodeStepK = 64;   // K-values per warp step (4 lane groups x 16 bytes)
inline constexpr int kFp8DecodeStepsPerBlock = 2;  // 128 / 64: a scale block is two steps

struct GemmFp8DecodeParams {
  const void* a;  // A(m, k) at a[m * a_m_stride + k] (bytes)
  const void* b;  // B(n, k) at b[n * b_n_stride + k]
  float* partial; // [splits][m][n], fully written by pass 1
  const float* a_scales;  // sa(m, kb) at a_scales[m * sa_m_stride + kb * sa_k_stride]
  const float* b_scales;  // sb(n / 128, kb) at b_scales[(n / 128) * sb_n_stride + kb * sb_k_stride]
  int64_t sa_m_stride, sa_k_stride, sb_n_stride, sb_k_stride;
  int64_t m, n, k;
  int64_t a_m_stride, b_n_stride;
  int64_t n_tiles;      // ceil(n / 16)
  int64_t splits;       // K splits
  int64_t k_per_split;  // a multiple of 128; the last split may be shorter
  int64_t units;        // n_tiles * splits
};

}  // namespace hal::kernel_params

namespace hal::kernel_params {

// The sm_80 form (no fp8 tensor cores) converts each 32-bit word of fp8
// bytes {b0, b1, b2, b3} (K-values 0..3) into two f16 pairs, lo = {b0, b1},
// hi = {b2, b3} (lower K in the low half), exactly:
//   e5m2: an e5m2 byte is the top byte of the f16 with the same value
//         (same exponent width and bias, Inf and NaN included);
//   e4m3: sign to bit 15, the 7 magnitude bits to bits 13..7 give an f16
//         worth exactly 2^-8 times the e4m3 value (bias 15 vs 7; e4m3
//         subnormals land on f16 subnormals with the same factor), and the
//         NaN magnitude 0x7f gets f16's all-ones exponent (stays NaN).
// e4m3 subnormals (and the smallest normals' neighbours below 2^-14) thus
// reach the matrix unit as f16 subnormals, as e5m2 subnormals do in every
// f16 path (gemm_fp8_mfma.hip's included): the instructions must keep f16
// subnormal inputs, which the first GPU run checks (the device tests use
// random values, e4m3 subnormals among them).
// The block sum of the scaled values is then the unscaled one times
// 2^-8 per e4m3 operand, with the same roundings (a power-of-two factor in
// fp32's normal range); the kernel multiplies it back exactly
// (fp8_decode_unscale).
// `sel_hi` 0 picks bytes 0, 1, 1 picks bytes 2, 3.
HAL_HOST_DEVICE inline uint32_t fp8_decode_to_f16_pair(uint32_t word, bool e5m2, int sel_hi) {
  const uint32_t lo = sel_hi ? (word >> 16) : word;
  // Byte 0 to bits 15..8, byte 1 to bits 31..24.
  const uint32_t h = ((lo & 0xffu) << 8) | ((lo & 0xff00u) << 16);
  if (e5m2) return h;
  const uint32_t mag = h & 0x7f007f00u;
  const uint32_t nan = ((mag + 0x01000100u) & 0x80008000u) >> 15;  // bit 0 / 16 per NaN half
  return (h & 0x80008000u) | (mag >> 1) | (nan * 0x7c00u);
}

// The exact factor that undoes the e4m3 scaling of the sm_80 form.
HAL_HOST_DEVICE inline float fp8_decode_unscale(bool a_e5m2, bool b_e5m2) {
  return (a_e5m2 ? 1.0f : 256.0f) * (b_e5m2 ? 1.0f : 256.0f);
}

// The same conversion for the FNUZ encodings (MI300's fp8, bias one more
// than OCP's, no Inf, no -0, 0x80 the only NaN), for the HIP decode GEMM's
// f16 path (hip/kernels/gemm_fp8_decode.hip), exactly:
//   e4m3fnuz: the e4m3 shift above gives an f16 worth exactly 2^-7 times the
//             value (bias 15 vs 8; 0x7f is 240, a number, not NaN);
//   e5m2fnuz: a byte with an exponent field >= 2 is the f16 with the same
//             value once its exponent field is lowered by one (bias 16 vs
//             15); below that, the magnitude bits shifted right by one are
//             the f16 subnormal of the same value (f16 holds 2^-17 .. 57344);
//   0x80 becomes f16 NaN 0x7e00.
// Each half is worked on alone: no carry or borrow crosses into the other.
HAL_HOST_DEVICE inline uint32_t fp8_fnuz_decode_to_f16_pair(uint32_t word, bool e5m2, int sel_hi) {
  const uint32_t lo = sel_hi ? (word >> 16) : word;
  const uint32_t h = ((lo & 0xffu) << 8) | ((lo & 0xff00u) << 16);
  const uint32_t sign = h & 0x80008000u, mag = h & 0x7f007f00u;
  uint32_t out = mag >> 1;
  if (e5m2) {
    const uint32_t big = (mag + 0x78007800u) & 0x80008000u;  // bit 15 / 31: exponent field >= 2
    const uint32_t big_mask = (big >> 15) * 0xffffu;
    out = ((mag - (big >> 5)) & big_mask) | (out & ~big_mask);  // big >> 5: 0x0400 per such half
  }
  const uint32_t zero_mag = ~(mag + 0x7fff7fffu) & 0x80008000u;  // bit 15 / 31: magnitude 0
  const uint32_t nan = sign & zero_mag;
  return (sign & ~nan) | out | (nan >> 15) * 0x7e00u;
}

// The exact factor that undoes the FNUZ e4m3 scaling above.
HAL_HOST_DEVICE inline float fp8_fnuz_decode_unscale(bool a_e5m2, bool b_e5m2) {
  return (a_e5m2 ? 1.0f : 128.0f) * (b_e5m2 ? 1.0f : 128.0f);
}

}  // namespace hal::kernel_params
