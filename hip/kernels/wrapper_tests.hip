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

extern "C" __global__ __launch_bounds__(64) void test_wave_reduce(WaveTestParams p) {
  const float v = p.in[lane_id()];
  const float s = wave_sum(v), m = wave_max(v);
  if (lane_id() == 63) {  // the last lane: a 32-wide reduction would leave it without lanes 0-31
    p.out[0] = s;
    p.out[1] = m;
  }
}
