// One-warp test kernels for the sm_80 PTX wrappers: each builds or reads
// fragments exactly as the wrapper header documents, so the host test can
// check the documented layout against a CPU reference. Launch with 32 threads.
//
//   hal_test_mma_sm80   in: A[16][16], B[16][8] (row-major b16); out: D[16][8] f32
//   hal_test_ldmatrix   in: M[16][16] b16; out: uint32 regs[32 lanes][4]
//   hal_test_cp_async   in: 32 chunks of 16 bytes; lane l copies chunk l with
//                       src_bytes = l % 17; out: the 512 bytes of shared memory
//   hal_test_shfl       in: float[32]; out: [32] warp sums, [32] lane-(31-l) values
#include <stdint.h>

#include "ptx/arch_config.cuh"
#include "ptx/cp_async.cuh"
#include "ptx/kernels/wrapper_tests_params.h"
#include "ptx/ldmatrix.cuh"
#include "ptx/mma_sm80.cuh"
#include "ptx/shfl.cuh"

using namespace hal::ptx;

namespace {
__device__ __forceinline__ uint32_t pack(uint16_t lo, uint16_t hi) {
  return static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
}
}  // namespace

extern "C" __global__ void hal_test_mma_sm80(WrapperTestParams p) {
#if HAL_PTX_SM80
  const uint16_t* A = static_cast<const uint16_t*>(p.in);
  const uint16_t* B = A + 16 * 16;
  const int lane = threadIdx.x, g = lane / 4, q = lane % 4;
  uint32_t a[4] = {pack(A[g * 16 + 2 * q], A[g * 16 + 2 * q + 1]), pack(A[(g + 8) * 16 + 2 * q], A[(g + 8) * 16 + 2 * q + 1]),
                   pack(A[g * 16 + 2 * q + 8], A[g * 16 + 2 * q + 9]),
                   pack(A[(g + 8) * 16 + 2 * q + 8], A[(g + 8) * 16 + 2 * q + 9])};
  uint32_t b[2] = {pack(B[(2 * q) * 8 + g], B[(2 * q + 1) * 8 + g]), pack(B[(2 * q + 8) * 8 + g], B[(2 * q + 9) * 8 + g])};
  float c[4] = {0.0f, 0.0f, 0.0f, 0.0f}, d[4];
  if (p.variant == 0) MmaM16N8K16F32F16F16F32::fma(d, a, b, c);
  else MmaM16N8K16F32Bf16Bf16F32::fma(d, a, b, c);
  float* D = static_cast<float*>(p.out);
  D[g * 8 + 2 * q] = d[0];
  D[g * 8 + 2 * q + 1] = d[1];
  D[(g + 8) * 8 + 2 * q] = d[2];
  D[(g + 8) * 8 + 2 * q + 1] = d[3];
#endif
}

extern "C" __global__ void hal_test_ldmatrix(WrapperTestParams p) {
#if HAL_PTX_SM80
  __shared__ __align__(16) uint16_t M[16 * 16];
  const int lane = threadIdx.x;
  for (int i = lane; i < 256; i += 32) M[i] = static_cast<const uint16_t*>(p.in)[i];
  __syncwarp();
  // Matrix i = lane / 8: rows (i % 2) * 8.., columns (i / 2) * 8..
  const int row = (lane % 8) + ((lane / 8) % 2) * 8, col = (lane / 16) * 8;
  uint32_t r[4];
  if (p.variant == 0) LdMatrixX4::copy(&M[row * 16 + col], r);
  else LdMatrixX4Trans::copy(&M[row * 16 + col], r);
  uint32_t* out = static_cast<uint32_t*>(p.out);
  for (int i = 0; i < 4; ++i) out[lane * 4 + i] = r[i];
#endif
}

extern "C" __global__ void hal_test_cp_async(WrapperTestParams p) {
#if HAL_PTX_SM80
  __shared__ __align__(16) uint8_t S[32 * 16];
  const int lane = threadIdx.x;
  for (int i = lane; i < 32 * 16; i += 32) S[i] = 0xFF;
  __syncwarp();
  const uint8_t* in = static_cast<const uint8_t*>(p.in);
  CpAsyncCg16::copy(&S[lane * 16], in + lane * 16, static_cast<uint32_t>(lane % 17));
  cp_async_commit();
  cp_async_wait<0>();
  __syncwarp();
  for (int i = lane; i < 32 * 16; i += 32) static_cast<uint8_t*>(p.out)[i] = S[i];
#endif
}

extern "C" __global__ void hal_test_shfl(WrapperTestParams p) {
  const int lane = threadIdx.x;
  const float v = static_cast<const float*>(p.in)[lane];
  float* out = static_cast<float*>(p.out);
  out[lane] = warp_allreduce_sum(v);
  out[32 + lane] = shfl_idx(v, 31 - lane);
}
