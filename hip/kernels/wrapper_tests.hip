// Single-wave test kernels for the hip/ wrappers (run by tests/hip, which
// compares with a CPU reference). Each fragment is loaded and stored with
// exactly the layout documented in hip/mfma.h, so a wrong layout comment or a
// wrong wrapper shows up as a wrong product.
#include <hip/hip_runtime.h>

#include "hip/mfma.h"
#include "hip/wave.h"
#include "wrapper_tests_params.h"

using namespace hal::hip;
using namespace hal::hip::kernels;

namespace {

template <class Mma, class Vec>
__device__ void run_mfma(const MfmaTestParams& p) {
  constexpr int M = Mma::M, N = Mma::N, K = Mma::K;
  constexpr int kGroups = kWaveSize / M;  // lanes l and l + M*g hold k-groups g
  const int l = lane_id();
  struct Bits4 {
    uint16_t v[4];
  } ab, bb;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int k = 4 * (l / M) + j;
    ab.v[j] = p.a[(l % M) * K + k];
    bb.v[j] = p.b[k * N + (l % N)];
  }
  const Vec a = __builtin_bit_cast(Vec, ab), b = __builtin_bit_cast(Vec, bb);
  static_assert(kGroups * 4 == K, "one MFMA's K is spread over the wave's lane groups");
  typename Mma::D d;
  for (int r = 0; r < static_cast<int>(sizeof(d) / sizeof(float)); ++r) d[r] = 0.0f;
  d = Mma::fma(a, b, d);
  for (int r = 0; r < static_cast<int>(sizeof(d) / sizeof(float)); ++r) {
    const int row = M == 32 ? 8 * (r / 4) + 4 * (l / 32) + r % 4 : 4 * (l / 16) + r;
    p.d[row * N + l % N] = d[r];
  }
}

}  // namespace

extern "C" __global__ __launch_bounds__(64) void test_mfma(MfmaTestParams p) {
  if (p.shape == 0) {
    if (p.bf16) run_mfma<Mfma_F32_32x32x8_BF16_1K, Bf16x4>(p);
    else run_mfma<Mfma_F32_32x32x8_F16, Half4>(p);
  } else {
    if (p.bf16) run_mfma<Mfma_F32_16x16x16_BF16_1K, Bf16x4>(p);
    else run_mfma<Mfma_F32_16x16x16_F16, Half4>(p);
  }
}

// The fp8 MFMA's fragments as hip/mfma.h documents them: lane l holds
// A[l%32][8*(l/32) + 0..7] and B[8*(l/32) + 0..7][l%32], D as 32x32x8.
extern "C" __global__ __launch_bounds__(64) void test_mfma_fp8(MfmaFp8TestParams p) {
  const int l = lane_id();
  if (l == 0) *p.status = HAL_HIP_MFMA_FP8 ? 1u : 2u;
#if HAL_HIP_MFMA_FP8
  struct Bytes8 {
    uint8_t v[8];
  } ab, bb;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    ab.v[j] = p.a[(l % 32) * 16 + 8 * (l / 32) + j];
    bb.v[j] = p.b[(8 * (l / 32) + j) * 32 + l % 32];
  }
  using Mma = Mfma_F32_32x32x16_Fp8<false, false>;
  typename Mma::D d;
  for (int r = 0; r < 16; ++r) d[r] = 0.0f;
  d = Mma::fma(__builtin_bit_cast(Fp8x8, ab), __builtin_bit_cast(Fp8x8, bb), d);
  for (int r = 0; r < 16; ++r) p.d[(8 * (r / 4) + 4 * (l / 32) + r % 4) * 32 + l % 32] = d[r];
#endif
}

extern "C" __global__ __launch_bounds__(64) void test_wave_reduce(WaveTestParams p) {
  const float v = p.in[lane_id()];
  const float s = wave_sum(v), m = wave_max(v);
  if (lane_id() == 63) {  // the last lane: a 32-wide reduction would leave it without lanes 0-31
    p.out[0] = s;
    p.out[1] = m;
  }
}
