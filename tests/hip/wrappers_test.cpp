// Device tests of the hip/ wrappers alone (one wave each, CPU reference):
// the MFMA fragment layouts documented in hip/mfma.h and the wave64
// reductions of hip/wave.h. Skip without a HIP device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "hal/buffer.h"
#include "hal/dtype.h"

#include "backends/hip/hip_launch.h"
#include "backends/hip/hip_stream.h"
#include "hip/kernels/wrapper_tests_params.h"
#include "hip_test_util.h"

namespace hal::hip_test {

namespace {

void check_mfma(int shape, bool bf16) {
  Device& dev = *hip_device();
  Stream s(dev);
  const int M = shape == 0 ? 32 : 16, N = M, K = shape == 0 ? 8 : 16;
  const DType t = bf16 ? DType::bf16 : DType::f16;
  // Small integers: every product and sum is exact in fp32, so the check is exact.
  std::vector<float> a(M * K), b(K * N);
  for (int i = 0; i < M * K; ++i) a[i] = static_cast<float>((i * 7) % 9 - 4);
  for (int i = 0; i < K * N; ++i) b[i] = static_cast<float>((i * 5) % 7 - 3);
  auto ad = upload(dev, s, t, Shape{M, K}, a);
  auto bd = upload(dev, s, t, Shape{K, N}, b);
  Buffer dd = Buffer::for_tensor(dev, DType::f32, Shape{M, N});
  hip::kernels::MfmaTestParams p{static_cast<const std::uint16_t*>(ad.buffer.data()),
                                 static_cast<const std::uint16_t*>(bd.buffer.data()), static_cast<float*>(dd.data()),
                                 shape, bf16 ? 1 : 0};
  hip::LaunchShape one_wave;
  one_wave.block[0] = 64;
  hip::launch(dynamic_cast<hip::HipStream&>(s.impl()), "test_mfma", one_wave, p);
  const auto d = download(s, dd.view(DType::f32, Shape{M, N}));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float want = 0.0f;
      for (int k = 0; k < K; ++k) want += a[i * K + k] * b[k * N + j];
      EXPECT_EQ(d[i * N + j], want) << "D[" << i << "][" << j << "] shape " << shape << " bf16 " << bf16;
    }
}

}  // namespace

TEST(HipDevice, Mfma32x32x8FragmentLayout) {
  HAL_REQUIRE_HIP();
  check_mfma(0, false);
  check_mfma(0, true);
}

TEST(HipDevice, Mfma16x16x16FragmentLayout) {
  HAL_REQUIRE_HIP();
  check_mfma(1, false);
  check_mfma(1, true);
}

// The fp8 MFMA (gemm_fp8_mfma_fnuz_* on gfx94x) with FNUZ e4m3 small
// integers: every product and sum exact, so the check is exact; skipped on a
// target without the instruction (the kernel says so through `status`).
TEST(HipDevice, Mfma32x32x16Fp8FragmentLayout) {
  HAL_REQUIRE_HIP();
  Device& dev = *hip_device();
  Stream s(dev);
  std::vector<std::uint8_t> a(32 * 16), b(16 * 32);
  std::vector<float> af(a.size()), bf(b.size());
  for (std::size_t i = 0; i < a.size(); ++i) af[i] = static_cast<float>(static_cast<int>(i * 7 % 9) - 4);
  for (std::size_t i = 0; i < b.size(); ++i) bf[i] = static_cast<float>(static_cast<int>(i * 5 % 7) - 3);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = f32_to_f8e4m3fnuz(af[i]);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = f32_to_f8e4m3fnuz(bf[i]);
  Buffer ad(dev, a.size()), bd(dev, b.size()), dd(dev, 32 * 32 * 4), st(dev, 4);
  s.copy_from_host(ad.data(), a.data(), a.size());
  s.copy_from_host(bd.data(), b.data(), b.size());
  hip::kernels::MfmaFp8TestParams p{static_cast<const std::uint8_t*>(ad.data()),
                                    static_cast<const std::uint8_t*>(bd.data()), static_cast<float*>(dd.data()),
                                    static_cast<std::uint32_t*>(st.data())};
  hip::LaunchShape one_wave;
  one_wave.block[0] = 64;
  hip::launch(dynamic_cast<hip::HipStream&>(s.impl()), "test_mfma_fp8", one_wave, p);
  std::uint32_t status = 0;
  std::vector<float> d(32 * 32);
  s.copy_to_host(&status, st.data(), 4);
  s.copy_to_host(d.data(), dd.data(), d.size() * 4);
  s.synchronize();
  if (status == 2) GTEST_SKIP() << "this device's target has no fp8 MFMA (gfx90a)";
  ASSERT_EQ(status, 1u);
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) {
      float want = 0.0f;
      for (int k = 0; k < 16; ++k) want += af[i * 16 + k] * bf[k * 32 + j];
      EXPECT_EQ(d[i * 32 + j], want) << "D[" << i << "][" << j << "]";
    }
}

TEST(HipDevice, WaveReductionsSpanAll64Lanes) {
  HAL_REQUIRE_HIP();
  Device& dev = *hip_device();
  Stream s(dev);
  std::vector<float> in(64);
  for (int i = 0; i < 64; ++i) in[i] = static_cast<float>(i < 32 ? 1 : 2 * i);  // max in the upper half
  auto ind = upload(dev, s, DType::f32, Shape{64}, in);
  Buffer out = Buffer::for_tensor(dev, DType::f32, Shape{2});
  hip::kernels::WaveTestParams p{static_cast<const float*>(ind.buffer.data()), static_cast<float*>(out.data())};
  hip::LaunchShape one_wave;
  one_wave.block[0] = 64;
  hip::launch(dynamic_cast<hip::HipStream&>(s.impl()), "test_wave_reduce", one_wave, p);
  const auto got = download(s, out.view(DType::f32, Shape{2}));
  float sum = 0.0f;
  for (float v : in) sum += v;
  EXPECT_EQ(got[0], sum);
  EXPECT_EQ(got[1], 126.0f);
}

}  // namespace hal::hip_test
