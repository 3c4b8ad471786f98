// Each sm_80 PTX wrapper run alone on one warp (ptx/kernels/wrapper_tests.cu)
// against a CPU model of the fragment layout its header documents: mma.sync
// m16n8k16 (f16, bf16), ldmatrix x4 (plain and .trans), cp.async with
// zero-fill, and the warp shuffles. A wrong layout fails here, not inside a
// GEMM.
//
// Launching a kernel by name needs the backend's internal launch API, whose
// stream type includes <cuda.h>: without the CUDA include path the tests skip.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "cuda_test_util.h"
#include "hal/dtype.h"
#include "ptx/kernels/wrapper_tests_params.h"

#if __has_include(<cuda.h>)
#include "backends/cuda/cuda_launch.h"
#include "backends/cuda/cuda_stream.h"
#define HAL_WRAPPER_TESTS_CAN_LAUNCH 1
#else
#define HAL_WRAPPER_TESTS_CAN_LAUNCH 0
#endif

namespace hal::cuda_test {
namespace {

#define HAL_REQUIRE_LAUNCH()                                                              \
  do {                                                                                    \
    HAL_REQUIRE_CUDA();                                                                   \
    if (!HAL_WRAPPER_TESTS_CAN_LAUNCH) GTEST_SKIP() << "built without <cuda.h> on the include path"; \
  } while (0)

// Runs a one-warp test kernel: uploads `in`, returns `out_bytes` of output.
std::vector<unsigned char> run_warp_kernel(const char* name, const std::vector<unsigned char>& in,
                                           std::size_t out_bytes, int variant) {
  std::vector<unsigned char> out(out_bytes);
#if HAL_WRAPPER_TESTS_CAN_LAUNCH
  Device& dev = *cuda_device();
  Stream s(dev);
  Buffer bin(dev, in.size()), bout(dev, out_bytes);
  s.copy_from_host(bin.data(), in.data(), in.size());
  s.memset(bout.data(), 0, out_bytes);
  ptx::WrapperTestParams p;
  p.in = bin.data();
  p.out = bout.data();
  p.variant = variant;
  cuda::LaunchShape shape;
  shape.block[0] = 32;
  cuda::launch(static_cast<cuda::CudaStream&>(s.impl()), name, shape, p);
  s.copy_to_host(out.data(), bout.data(), out_bytes);
  s.synchronize();
#else
  (void)name, (void)in, (void)variant;
#endif
  return out;
}

std::uint16_t to_b16(DType t, float v) { return t == DType::f16 ? f32_to_f16(v) : f32_to_bf16(v); }
float from_b16(DType t, std::uint16_t v) { return t == DType::f16 ? f16_to_f32(v) : bf16_to_f32(v); }

TEST(CudaPtxWrappers, MmaM16N8K16MatchesMatrixProduct) {
  HAL_REQUIRE_LAUNCH();
  for (DType t : {DType::f16, DType::bf16}) {
    // Small integers and halves: every product and sum is exact in fp32, so
    // the result must equal the CPU product exactly.
    std::vector<std::uint16_t> ab(16 * 16 + 16 * 8);
    std::vector<float> A(16 * 16), B(16 * 8);
    for (int i = 0; i < 256; ++i) A[i] = static_cast<float>((i * 7) % 11 - 5) * 0.5f;
    for (int i = 0; i < 128; ++i) B[i] = static_cast<float>((i * 5) % 13 - 6);
    for (int i = 0; i < 256; ++i) ab[i] = to_b16(t, A[i]);
    for (int i = 0; i < 128; ++i) ab[256 + i] = to_b16(t, B[i]);
    std::vector<unsigned char> in(ab.size() * 2);
    std::memcpy(in.data(), ab.data(), in.size());
    const auto out = run_warp_kernel("hal_test_mma_sm80", in, 16 * 8 * 4, t == DType::f16 ? 0 : 1);
    std::vector<float> D(128);
    std::memcpy(D.data(), out.data(), out.size());
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 8; ++n) {
        float want = 0;
        for (int k = 0; k < 16; ++k) want += from_b16(t, ab[m * 16 + k]) * from_b16(t, ab[256 + k * 8 + n]);
        EXPECT_EQ(D[m * 8 + n], want) << dtype_name(t) << " D[" << m << "][" << n << "]";
      }
  }
}

TEST(CudaPtxWrappers, LdmatrixFragmentsMatchDocumentedLayout) {
  HAL_REQUIRE_LAUNCH();
  std::vector<std::uint16_t> M(256);
  for (int i = 0; i < 256; ++i) M[i] = static_cast<std::uint16_t>(1000 + i);  // element id
  std::vector<unsigned char> in(512);
  std::memcpy(in.data(), M.data(), 512);
  for (int trans = 0; trans < 2; ++trans) {
    const auto out = run_warp_kernel("hal_test_ldmatrix", in, 32 * 4 * 4, trans);
    std::vector<std::uint32_t> regs(128);
    std::memcpy(regs.data(), out.data(), out.size());
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < 4; ++i) {
        const int r0 = (i % 2) * 8, c0 = (i / 2) * 8;  // matrix i's origin (see the kernel)
        std::uint32_t lo, hi;
        if (!trans) {
          lo = M[(r0 + lane / 4) * 16 + c0 + 2 * (lane % 4)];
          hi = M[(r0 + lane / 4) * 16 + c0 + 2 * (lane % 4) + 1];
        } else {
          lo = M[(r0 + 2 * (lane % 4)) * 16 + c0 + lane / 4];
          hi = M[(r0 + 2 * (lane % 4) + 1) * 16 + c0 + lane / 4];
        }
        EXPECT_EQ(regs[lane * 4 + i], lo | (hi << 16)) << (trans ? "trans " : "") << "lane " << lane << " reg " << i;
      }
  }
}

TEST(CudaPtxWrappers, CpAsyncCopiesAndZeroFills) {
  HAL_REQUIRE_LAUNCH();
  std::vector<unsigned char> in(512);
  for (int i = 0; i < 512; ++i) in[i] = static_cast<unsigned char>(1 + i % 251);
  const auto out = run_warp_kernel("hal_test_cp_async", in, 512, 0);
  for (int lane = 0; lane < 32; ++lane)
    for (int b = 0; b < 16; ++b) {
      const unsigned char want = b < lane % 17 ? in[lane * 16 + b] : 0;
      EXPECT_EQ(out[lane * 16 + b], want) << "chunk " << lane << " byte " << b;
    }
}

TEST(CudaPtxWrappers, WarpShufflesReduceAndPermute) {
  HAL_REQUIRE_LAUNCH();
  std::vector<float> v(32);
  float sum = 0;
  for (int i = 0; i < 32; ++i) sum += (v[i] = static_cast<float>(i * 3 - 40));
  std::vector<unsigned char> in(128);
  std::memcpy(in.data(), v.data(), 128);
  const auto out = run_warp_kernel("hal_test_shfl", in, 256, 0);
  std::vector<float> r(64);
  std::memcpy(r.data(), out.data(), 256);
  for (int lane = 0; lane < 32; ++lane) {
    EXPECT_EQ(r[lane], sum) << "sum in lane " << lane;
    EXPECT_EQ(r[32 + lane], v[31 - lane]) << "shfl_idx in lane " << lane;
  }
}

}  // namespace
}  // namespace hal::cuda_test
