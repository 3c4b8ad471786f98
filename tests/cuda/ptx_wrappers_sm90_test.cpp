// Each sm_90 / sm_90a PTX wrapper run alone (ptx/kernels/wrapper_tests_sm90.cu)
// against a CPU model of the layout or protocol its header documents:
// elect.sync, stmatrix x4 (plain, .trans), mbarrier phases and its bounded
// wait, a TMA 2-D tile load (map encoded by the GEMM's helper, 128B swizzle,
// zero fill at the edges), setmaxnreg in the GEMM's warpgroup configuration,
// and wgmma m64n128k16 (bf16, f16; B K-major and N-major) from the GEMM's
// shared-memory layout, and its register-A form (m64n64 / m64n128) as the
// sm_90a attention kernel uses it. A wrong layout fails here, not inside the GEMM.
//
// Skips without a GPU, below compute capability 9.0 (sm_90 wrappers) or
// without sm_90a code for the device (wgmma, setmaxnreg), and when the
// device runs a build of the kernel file without the wrapper code (each
// kernel reports whether its body was compiled in).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cuda_test_util.h"
#include "hal/dtype.h"
#include "hal/error.h"
#include "ptx/kernels/wrapper_tests_params.h"

#if __has_include(<cuda.h>)
#include "backends/cuda/cuda_gemm_sm90a.h"
#include "backends/cuda/cuda_launch.h"
#include "backends/cuda/cuda_stream.h"
#define HAL_WRAPPER_TESTS_CAN_LAUNCH 1
#else
#define HAL_WRAPPER_TESTS_CAN_LAUNCH 0
#endif

namespace hal::cuda_test {
namespace {

using Shapes = ptx::WrapperTestSm90Shapes;

bool has_feature(const char* f) {
  const auto& fs = cuda_device()->info().features;
  return std::find(fs.begin(), fs.end(), f) != fs.end();
}

// `feature`: "mbarrier.tx" (compute capability 9.x) for the sm_90 wrappers,
// "wgmma" (sm_90a code loaded for this device) for wgmma and setmaxnreg.
#define HAL_REQUIRE_SM90_FEATURE(feature)                                                             \
  do {                                                                                              \
    HAL_REQUIRE_CUDA();                                                                             \
    if (!HAL_WRAPPER_TESTS_CAN_LAUNCH) GTEST_SKIP() << "built without <cuda.h> on the include path"; \
    if (!has_feature(feature)) GTEST_SKIP() << "device lacks " << (feature);                        \
  } while (0)

struct KernelRun {
  std::vector<unsigned char> out;
  std::uint32_t status = 0;
};

// Launches one block of `threads` threads of test kernel `name`: uploads
// `in`, zeroes `out_bytes` of output, lets `prepare` fill the rest of the
// parameters (it sees p.in as the device copy of `in`; returning false
// cancels the launch), returns the output.
KernelRun run_kernel(const char* name, unsigned threads, const std::vector<unsigned char>& in, std::size_t out_bytes,
                     const std::function<bool(ptx::WrapperTestSm90Params&)>& prepare = {}) {
  KernelRun r;
  r.out.resize(out_bytes);
#if HAL_WRAPPER_TESTS_CAN_LAUNCH
  Device& dev = *cuda_device();
  Stream s(dev);
  Buffer bin(dev, std::max<std::size_t>(in.size(), 16)), bout(dev, out_bytes + 16);
  if (!in.empty()) s.copy_from_host(bin.data(), in.data(), in.size());
  s.memset(bout.data(), 0, out_bytes + 16);
  ptx::WrapperTestSm90Params p;
  p.in = bin.data();
  p.out = bout.data();
  p.status = reinterpret_cast<std::uint32_t*>(static_cast<unsigned char*>(bout.data()) + out_bytes);
  if (prepare && !prepare(p)) return r;
  cuda::LaunchShape shape;
  shape.block[0] = threads;
  cuda::launch(static_cast<cuda::CudaStream&>(s.impl()), name, shape, p);
  s.copy_to_host(r.out.data(), bout.data(), out_bytes);
  s.copy_to_host(&r.status, p.status, sizeof(r.status));
  s.synchronize();
#else
  (void)name, (void)threads, (void)in, (void)prepare;
#endif
  return r;
}

// Skips when the device ran a build of the kernel without the wrapper code.
#define HAL_REQUIRE_KERNEL_RAN(run)                                                                \
  do {                                                                                             \
    if ((run).status == ptx::kWrapperTestCompiledOut)                                              \
      GTEST_SKIP() << "the kernel build this device runs has no sm_90 code";                       \
    ASSERT_EQ((run).status, ptx::kWrapperTestRan) << "kernel did not report its status";           \
  } while (0)

template <class T>
std::vector<unsigned char> bytes_of(const std::vector<T>& v) {
  std::vector<unsigned char> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <class T>
std::vector<T> values_of(const std::vector<unsigned char>& b, std::size_t offset, std::size_t n) {
  std::vector<T> v(n);
  std::memcpy(v.data(), b.data() + offset, n * sizeof(T));
  return v;
}

TEST(CudaPtxWrappersSm90, ElectSyncElectsOneLaneOfTheMask) {
  HAL_REQUIRE_SM90_FEATURE("mbarrier.tx");
  const std::vector<std::uint32_t> masks = {0xffffffffu, 0xaaaaaaaau, 0xffff0000u, 0x00010000u, 0x80000001u,
                                            0x7ffffffeu};
  constexpr unsigned kThreads = 128;
  const auto run = run_kernel("hal_test_elect_sync", kThreads, bytes_of(masks), masks.size() * kThreads,
                              [&](ptx::WrapperTestSm90Params& p) {
                                p.variant = static_cast<std::int32_t>(masks.size());
                                return true;
                              });
  HAL_REQUIRE_KERNEL_RAN(run);
  for (std::size_t m = 0; m < masks.size(); ++m) {
    int leader_of_warp0 = -1;
    for (unsigned w = 0; w < kThreads / 32; ++w) {
      int first = -1, elected = 0, elected_again = 0;
      for (int lane = 0; lane < 32; ++lane) {
        const unsigned char r = run.out[m * kThreads + w * 32 + lane];
        const bool in_mask = (masks[m] >> lane) & 1u;
        if (!in_mask) {
          EXPECT_EQ(r, 0) << "mask " << std::hex << masks[m] << std::dec << " warp " << w << " lane " << lane
                          << " is outside the mask but wrote a result";
          continue;
        }
        EXPECT_EQ(r & 0x10, 0x10) << "mask " << std::hex << masks[m] << std::dec << " warp " << w << " lane " << lane
                                  << " did not run";
        if (r & 1) {
          ++elected;
          first = lane;
        }
        if (r & 2) ++elected_again;
        // The election is deterministic: the same mask elects the same lane.
        EXPECT_EQ((r & 1) != 0, (r & 2) != 0) << "mask " << std::hex << masks[m] << std::dec << " warp " << w
                                              << " lane " << lane << ": two identical elections differ";
      }
      EXPECT_EQ(elected, 1) << "mask " << std::hex << masks[m] << std::dec << " warp " << w;
      EXPECT_EQ(elected_again, 1) << "mask " << std::hex << masks[m] << std::dec << " warp " << w;
      if (w == 0) {
        leader_of_warp0 = first;
      } else {
        EXPECT_EQ(first, leader_of_warp0) << "mask " << std::hex << masks[m] << std::dec << ": warp " << w
                                          << " elected another lane than warp 0";
      }
    }
    // Which lane wins is not specified by PTX (observed: the lowest); recorded for the log.
    RecordProperty("elect_leader_mask_" + std::to_string(m), leader_of_warp0);
  }
}

TEST(CudaPtxWrappersSm90, StmatrixStoresTheDocumentedFragments) {
  HAL_REQUIRE_SM90_FEATURE("mbarrier.tx");
  // Register i of lane t holds two element ids (1..256, all distinct).
  auto id = [](int lane, int i, int e) { return static_cast<std::uint32_t>(1 + lane * 8 + i * 2 + e); };
  std::vector<std::uint32_t> regs(32 * 4);
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i) regs[lane * 4 + i] = id(lane, i, 0) | (id(lane, i, 1) << 16);
  for (int trans = 0; trans < 2; ++trans) {
    const auto run = run_kernel("hal_test_stmatrix", 32, bytes_of(regs), 256 * 2,
                                [&](ptx::WrapperTestSm90Params& p) {
                                  p.variant = trans;
                                  return true;
                                });
    HAL_REQUIRE_KERNEL_RAN(run);
    const auto M = values_of<std::uint16_t>(run.out, 0, 256);
    // Header: register i of lane t = row t/4, elements 2(t%4), 2(t%4)+1 of
    // matrix i (.trans: column t/4); matrix i's origin is row (i%2)*8, column (i/2)*8.
    // The 4 x 32 x 2 ids cover the 256 elements exactly once.
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < 4; ++i)
        for (int e = 0; e < 2; ++e) {
          const int r0 = (i % 2) * 8, c0 = (i / 2) * 8;
          const int row = trans ? r0 + 2 * (lane % 4) + e : r0 + lane / 4;
          const int col = trans ? c0 + lane / 4 : c0 + 2 * (lane % 4) + e;
          EXPECT_EQ(M[row * 16 + col], id(lane, i, e))
              << (trans ? "trans " : "") << "lane " << lane << " reg " << i << " half " << e << " -> M[" << row
              << "][" << col << "]";
        }
  }
}

TEST(CudaPtxWrappersSm90, MbarrierPhasesCompleteOnTheLastArrival) {
  HAL_REQUIRE_SM90_FEATURE("mbarrier.tx");
  constexpr int kWords = 2 + 4 * Shapes::kMbarPhases;
  const auto run = run_kernel("hal_test_mbarrier", Shapes::kMbarThreads, {}, kWords * 4);
  HAL_REQUIRE_KERNEL_RAN(run);
  const auto o = values_of<std::uint32_t>(run.out, 0, kWords);
  EXPECT_EQ(o[0], 1u) << "fresh barrier: try_wait.parity(1) (the phase before phase 0) must report complete";
  EXPECT_EQ(o[1], 0u) << "fresh barrier: try_wait.parity(0) must report phase 0 open";
  for (int ph = 0; ph < Shapes::kMbarPhases; ++ph) {
    const std::uint32_t* w = &o[2 + 4 * ph];
    EXPECT_EQ(w[0], 0u) << "phase " << ph << " completed with " << Shapes::kMbarArrivals - 1 << " of "
                        << Shapes::kMbarArrivals << " arrivals";
    EXPECT_EQ(w[1], static_cast<std::uint32_t>(Shapes::kMbarThreads)) << "phase " << ph << ": threads past wait";
    EXPECT_EQ(w[2], 1u) << "phase " << ph << " not reported complete after the last arrival";
    EXPECT_EQ(w[3], 0u) << "phase " << ph + 1 << " reported complete before any arrival";
  }
}

// The bounded wait (HAL_PTX_BOUNDED_WAITS) must end a wait nobody completes
// with a trap, i.e. a failed launch, not a hang. A trap poisons the CUDA
// context, so the kernel runs in a child process (gtest death test,
// "threadsafe" style: the child re-executes this binary).
TEST(CudaPtxWrappersSm90, MbarrierBoundedWaitTrapsInsteadOfHanging) {
  HAL_REQUIRE_SM90_FEATURE("mbarrier.tx");
  // The device must run the sm_90 build of the kernels, or the timeout
  // kernel is empty and returns.
  const auto probe = run_kernel("hal_test_mbarrier", Shapes::kMbarThreads, {}, (2 + 4 * Shapes::kMbarPhases) * 4);
  HAL_REQUIRE_KERNEL_RAN(probe);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  constexpr int kTrapped = 42, kReturned = 43;
  EXPECT_EXIT(
      {
#if HAL_WRAPPER_TESTS_CAN_LAUNCH
        // Leaked on purpose: after the trap the context must not be touched again.
        Device& dev = *cuda_device();
        auto* s = new Stream(dev);
        auto* out = new Buffer(dev, 16);
        ptx::WrapperTestSm90Params p;
        p.out = out->data();
        try {
          cuda::LaunchShape shape;
          shape.block[0] = 1;
          cuda::launch(static_cast<cuda::CudaStream&>(s->impl()), "hal_test_mbarrier_timeout", shape, p);
          s->synchronize();
        } catch (const Error&) {
          std::_Exit(kTrapped);
        }
#endif
        std::_Exit(kReturned);
      },
      testing::ExitedWithCode(kTrapped), "");
}

TEST(CudaPtxWrappersSm90, TmaLoadsSwizzledTilesWithZeroFill) {
  HAL_REQUIRE_SM90_FEATURE("mbarrier.tx");
  if (has_feature("no-tensor-map-encode")) GTEST_SKIP() << "driver lacks cuTensorMapEncodeTiled";
  // Global bf16 matrix [100][96]: element (r, c) has the distinct nonzero bits r * 96 + c + 1.
  constexpr int kRows = 100, kCols = 96;
  std::vector<std::uint16_t> g(kRows * kCols);
  for (int i = 0; i < kRows * kCols; ++i) g[i] = static_cast<std::uint16_t>(i + 1);
  // Loads: interior; right edge (columns 96..127 outside); bottom-right corner
  // (rows 100..111 and columns 96..127 outside).
  const int cols[Shapes::kTmaLoads] = {0, 64, 64}, rows[Shapes::kTmaLoads] = {0, 32, 80};
  constexpr std::size_t kBox = Shapes::kTmaBoxBytes;
  bool encoded = false;
  const auto run = run_kernel("hal_test_tma_load", 128, bytes_of(g), Shapes::kTmaLoads * kBox + 4 * Shapes::kTmaLoads,
                              [&](ptx::WrapperTestSm90Params& p) {
#if HAL_WRAPPER_TESTS_CAN_LAUNCH
                                encoded = cuda::encode_gemm_sm90a_tile_map(p.map, p.in, DType::bf16, kRows, kCols,
                                                                           kCols, Shapes::kTmaBoxRows);
#endif
                                for (int i = 0; i < Shapes::kTmaLoads; ++i) {
                                  p.tile_col[i] = cols[i];
                                  p.tile_row[i] = rows[i];
                                }
                                return encoded;  // never launch TMA with an unencoded map
                              });
  ASSERT_TRUE(encoded) << "cuTensorMapEncodeTiled rejected the GEMM's map parameters";
  HAL_REQUIRE_KERNEL_RAN(run);
  const auto early = values_of<std::uint32_t>(run.out, Shapes::kTmaLoads * kBox, Shapes::kTmaLoads);
  for (int i = 0; i < Shapes::kTmaLoads; ++i) {
    EXPECT_EQ(early[i], 0u) << "load " << i << ": phase complete before the copy delivered its bytes";
    const auto tile = values_of<std::uint16_t>(run.out, i * kBox, kBox / 2);
    int bad = 0;
    for (int br = 0; br < Shapes::kTmaBoxRows; ++br)
      for (int bc = 0; bc < Shapes::kTmaBoxCols; ++bc) {
        // 128B swizzle: 16-byte chunk bc/8 of box row br sits at chunk (bc/8) ^ (br%8).
        const int off = br * 128 + ((bc / 8) ^ (br % 8)) * 16 + (bc % 8) * 2;
        const int r = rows[i] + br, c = cols[i] + bc;
        const std::uint16_t want = (r < kRows && c < kCols) ? g[r * kCols + c] : 0;
        if (tile[off / 2] != want && bad++ < 8)
          ADD_FAILURE() << "load " << i << " box (" << br << ", " << bc << ") = matrix (" << r << ", " << c
                        << "): got " << tile[off / 2] << ", want " << want;
      }
    EXPECT_EQ(bad, 0) << "load " << i << ": elements wrong";
  }
}

TEST(CudaPtxWrappersSm90, SetmaxnregWarpgroupsComputeCorrectly) {
  HAL_REQUIRE_SM90_FEATURE("wgmma");
  constexpr int kN = Shapes::kSetmaxnregInputs, kAcc = Shapes::kSetmaxnregAcc;
  std::vector<float> x(kN);
  for (int i = 0; i < kN; ++i) x[i] = static_cast<float>((i * 37) % 17 - 8);  // integers: exact sums
  const std::size_t out_floats = 256 * kAcc + 128;
  const auto run = run_kernel("hal_test_setmaxnreg", Shapes::kSetmaxnregThreads, bytes_of(x), out_floats * 4);
  HAL_REQUIRE_KERNEL_RAN(run);
  const auto o = values_of<float>(run.out, 0, out_floats);
  int bad = 0;
  for (int u = 0; u < 256; ++u)
    for (int j = 0; j < kAcc; ++j) {
      float want = 0;
      for (int k = 0; k < Shapes::kSetmaxnregSteps; ++k) want += x[(u + 7 * k) % kN] * x[(5 * j + k) % kN];
      if (o[u * kAcc + j] != want && bad++ < 8)
        ADD_FAILURE() << "consumer thread " << u << " acc " << j << ": got " << o[u * kAcc + j] << ", want " << want;
    }
  for (int t = 0; t < 128; ++t) {
    float want = 0;
    for (int i = 0; i < 16; ++i) want += x[(16 * t + i) % kN];
    if (o[256 * kAcc + t] != want && bad++ < 8)
      ADD_FAILURE() << "producer thread " << t << ": got " << o[256 * kAcc + t] << ", want " << want;
  }
  EXPECT_EQ(bad, 0);
  // Launched with one warpgroup, the inc/dec values cannot balance: the kernel
  // must refuse (status 3) rather than execute setmaxnreg.
  const auto wrong = run_kernel("hal_test_setmaxnreg", 128, bytes_of(x), out_floats * 4);
  EXPECT_EQ(wrong.status, ptx::kWrapperTestCompiledOut + 1);
}

// rs_n: 0 for the shared-memory A kernels, else the N (64 or 128) of the
// register-A kernel hal_test_wgmma_rs_<t>_n<N> (B N-major; D's first N columns).
void check_wgmma(DType t, bool b_n_major, int rs_n = 0) {
  constexpr int kM = Shapes::kWgmmaM, kN = Shapes::kWgmmaN, kK = Shapes::kWgmmaK;
  // Small integers: products and sums of 64 terms are exact in fp32, so the
  // result must equal the CPU product exactly. Hashed, so that a k-step, row
  // group or column slice read from the wrong place changes the result.
  auto val = [](std::uint32_t i, int span) {
    return static_cast<float>(static_cast<int>(((i * 2654435761u) >> 13) % (2 * span + 1)) - span);
  };
  std::vector<std::uint16_t> ab(kM * kK + kK * kN);
  for (int i = 0; i < kM * kK; ++i) ab[i] = t == DType::f16 ? f32_to_f16(val(i, 4)) : f32_to_bf16(val(i, 4));
  for (int i = 0; i < kK * kN; ++i)
    ab[kM * kK + i] = t == DType::f16 ? f32_to_f16(val(i + 7777, 3)) : f32_to_bf16(val(i + 7777, 3));
  auto f = [&](std::uint16_t v) { return t == DType::f16 ? f16_to_f32(v) : bf16_to_f32(v); };
  const std::string tn = t == DType::f16 ? "f16" : "bf16";
  const std::string name = rs_n != 0 ? "hal_test_wgmma_rs_" + tn + "_n" + std::to_string(rs_n)
                                     : "hal_test_wgmma_" + tn + (b_n_major ? "_bn" : "");
  const int n_out = rs_n != 0 ? rs_n : kN;
  const auto run = run_kernel(name.c_str(), 128, bytes_of(ab), kM * kN * 4);
  HAL_REQUIRE_KERNEL_RAN(run);
  const auto D = values_of<float>(run.out, 0, kM * kN);
  int bad = 0;
  for (int m = 0; m < kM; ++m)
    for (int n = 0; n < n_out; ++n) {
      float want = 0;
      for (int k = 0; k < kK; ++k) want += f(ab[m * kK + k]) * f(ab[kM * kK + k * kN + n]);
      if (D[m * kN + n] != want && bad++ < 8)
        ADD_FAILURE() << name << " D[" << m << "][" << n << "]: got " << D[m * kN + n] << ", want " << want;
    }
  EXPECT_EQ(bad, 0) << name;
}

TEST(CudaPtxWrappersSm90, WgmmaM64N128K16MatchesMatrixProduct) {
  HAL_REQUIRE_SM90_FEATURE("wgmma");
  for (DType t : {DType::bf16, DType::f16}) check_wgmma(t, false);
}

// FP8 wgmma (the sm_90a fp8 GEMM's instruction and stage layout): e4m3
// small integers, so every product and the 128-term sums (|D| <= 2048) are
// exact even in the ~14-bit FP8 accumulator; hashed so that a misplaced k32
// step, row group or swizzle chunk changes the result.
TEST(CudaPtxWrappersSm90, WgmmaM64N128K32E4m3MatchesMatrixProduct) {
  HAL_REQUIRE_SM90_FEATURE("wgmma");
  constexpr int kM = 64, kN = 128, kK = 128;
  auto val = [](std::uint32_t i, int span) {
    return static_cast<float>(static_cast<int>(((i * 2654435761u) >> 13) % (2 * span + 1)) - span);
  };
  std::vector<std::uint8_t> ab(kM * kK + kN * kK);
  for (int i = 0; i < kM * kK; ++i) ab[i] = f32_to_f8e4m3(val(i, 4));
  for (int i = 0; i < kN * kK; ++i) ab[kM * kK + i] = f32_to_f8e4m3(val(i + 7777, 4));
  const auto run = run_kernel("hal_test_wgmma_e4m3", 128, bytes_of(ab), kM * kN * 4);
  HAL_REQUIRE_KERNEL_RAN(run);
  const auto D = values_of<float>(run.out, 0, kM * kN);
  int bad = 0;
  for (int m = 0; m < kM; ++m)
    for (int n = 0; n < kN; ++n) {
      float want = 0;
      for (int k = 0; k < kK; ++k) want += f8e4m3_to_f32(ab[m * kK + k]) * f8e4m3_to_f32(ab[kM * kK + n * kK + k]);
      if (D[m * kN + n] != want && bad++ < 8)
        ADD_FAILURE() << "D[" << m << "][" << n << "]: got " << D[m * kN + n] << ", want " << want;
    }
  EXPECT_EQ(bad, 0);
}

TEST(CudaPtxWrappersSm90, WgmmaM64N128K16TransposedBMatchesMatrixProduct) {
  HAL_REQUIRE_SM90_FEATURE("wgmma");
  for (DType t : {DType::bf16, DType::f16}) check_wgmma(t, true);
}

// The register-A (RS) form the sm_90a attention kernel uses for O += P V:
// A's fragments from registers, B N-major (V), N = 64 (d = 64) and 128.
TEST(CudaPtxWrappersSm90, WgmmaRegisterAMatchesMatrixProduct) {
  HAL_REQUIRE_SM90_FEATURE("wgmma");
  for (DType t : {DType::bf16, DType::f16})
    for (int n : {64, 128}) check_wgmma(t, true, n);
}

}  // namespace
}  // namespace hal::cuda_test
