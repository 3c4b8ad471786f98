// The amx_bf16 contract (gemm_microkernel.h): its emulated kernel on every
// CPU, the AMX kernel against it bit for bit where the CPU has AMX, and the
// AMX kernel's decode path (AVX-512 multiply-adds, no tiles) against it on any
// AVX-512 CPU.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu_ref/cpu_features.h"
#include "cpu_ref/gemm_blocked.h"
#include "cpu_ref/gemm_microkernel.h"
#include "cpu_ref/gemm_pack.h"
#include "hal/dtype.h"
#include "hal/tensor.h"

namespace {

using hal::DType;
using hal::cpu_ref::GemmMicroKernel;

const GemmMicroKernel& kernel_named(const std::string& name) {
  for (const auto& k : hal::cpu_ref::gemm_microkernels_available())
    if (k.name == name) return k;
  throw std::runtime_error(name + " is not available");
}

const GemmMicroKernel& emulated() { return kernel_named("amx_emulated_32x32"); }

std::uint16_t bf16(float v) { return hal::f32_to_bf16(v); }

// acc[0][0] after one call of `k` over kc, A row 0 and B column 0 holding
// a[i] * b[i] at k = i (every other element zero), starting from `start`.
float run_one(const GemmMicroKernel& k, std::int64_t kc, const std::vector<float>& a, const std::vector<float>& b,
              float start) {
  const std::int64_t blocks = (kc + 31) / 32;
  std::vector<std::uint16_t> ap(static_cast<std::size_t>(blocks * 32 * k.mr), 0);
  std::vector<std::uint32_t> bp(static_cast<std::size_t>(blocks * 16 * k.nr), 0);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::int64_t kb = static_cast<std::int64_t>(i) / 32, kk = static_cast<std::int64_t>(i) % 32;
    ap[static_cast<std::size_t>(kb * 32 * k.mr + kk)] = bf16(a[i]);
    bp[static_cast<std::size_t>((kb * 16 + kk / 2) * k.nr)] |= std::uint32_t{bf16(b[i])} << (16 * (kk % 2));
  }
  std::vector<float> acc(static_cast<std::size_t>(k.mr * k.nr), 0.0f);
  acc[0] = start;
  k.run(kc, ap.data(), bp.data(), acc.data());
  for (std::size_t i = 1; i < acc.size(); ++i) EXPECT_EQ(acc[i], 0.0f) << "element " << i << " has no inputs";
  return acc[0];
}

constexpr float kHalfUlp = 0x1p-24f;  // of 1.0

}  // namespace

TEST(CpuGemmAmx, EvenAndOddLanesAreSummedBeforeTheAccumulator) {
  // Two even products of half an ulp each (k = 0, 2): the lane holds a whole
  // ulp before it meets acc = 1. One chain from acc would round both away.
  EXPECT_EQ(run_one(emulated(), 4, {kHalfUlp, 0, kHalfUlp, 0}, {1, 0, 1, 0}, 1.0f), 1.0f + 2 * kHalfUlp);
  // 1 (even, k = 0) then half an ulp (even, k = 2) in one lane rounds to 1;
  // half an ulp in the odd lane (k = 1) then meets 1 and rounds to 1 again.
  EXPECT_EQ(run_one(emulated(), 4, {1, kHalfUlp, kHalfUlp, 0}, {1, 1, 1, 0}, 0.0f), 1.0f);
  // Half an ulp in each lane (k = 0 even, k = 1 odd): the lanes' sum is a
  // whole ulp; adding the lanes to acc one after the other would round twice.
  EXPECT_EQ(run_one(emulated(), 2, {kHalfUlp, kHalfUlp}, {1, 1}, 1.0f), 1.0f + 2 * kHalfUlp);
}

TEST(CpuGemmAmx, LanesStartAgainAtEveryBlockOf32) {
  // Block 0: 1 (k = 0). Block 1: half an ulp at k = 32 and k = 34, a whole ulp
  // in the new lane. Lanes carried over from block 0 would round both away.
  std::vector<float> a(64, 0.0f), b(64, 0.0f);
  a[0] = b[0] = 1;
  a[32] = a[34] = kHalfUlp;
  b[32] = b[34] = 1;
  EXPECT_EQ(run_one(emulated(), 64, a, b, 0.0f), 1.0f + 2 * kHalfUlp);
}

TEST(CpuGemmAmx, SubnormalInputsReadAsZeroAndResultsFlush) {
  EXPECT_EQ(run_one(emulated(), 2, {1}, {0x1p-130f}, 0.0f), 0.0f);      // a bf16 subnormal input
  EXPECT_EQ(run_one(emulated(), 2, {0x1p-70f}, {0x1p-60f}, 0.0f), 0.0f);  // a subnormal product
  EXPECT_EQ(run_one(emulated(), 2, {0x1p-60f}, {0x1p-60f}, 0.0f), 0x1p-120f);
}

TEST(CpuGemmAmx, SumsEveryProductOfAPaddedTail) {
  // kc = 5 ends inside the first block: the zero tail adds nothing.
  EXPECT_EQ(run_one(emulated(), 5, {1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}, 0.5f), 0.5f + 6 + 14 + 24 + 36 + 50);
}

namespace {

// bf16 values over a wide range of exponents, with either sign: sums that
// cancel and sums that round, and (rarely) subnormal inputs and products.
std::vector<std::uint16_t> wide_bf16(std::size_t n, std::uint64_t seed, int exponent_range) {
  std::vector<std::uint16_t> out(n);
  std::uint64_t s = seed * 6364136223846793005ULL + 1;
  for (auto& v : out) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    const int e = static_cast<int>((s >> 33) % static_cast<std::uint64_t>(2 * exponent_range + 1)) - exponent_range;
    const float m = 1.0f + static_cast<float>((s >> 20) & 127) / 128.0f;
    v = bf16(std::ldexp((s >> 60) & 1 ? -m : m, e));
  }
  return out;
}

// C = A @ B^T-or-not through gemm_fp32_blocked with `kernel`, bf16 in, f32 out.
std::vector<float> product(const GemmMicroKernel& kernel, const std::vector<std::uint16_t>& a,
                           const std::vector<std::uint16_t>& b, std::int64_t m, std::int64_t n, std::int64_t k,
                           bool trans_b, const hal::cpu_ref::GemmBlocking& blocking = {}) {
  std::vector<float> c(static_cast<std::size_t>(m * n), 0.0f);
  hal::GemmCall call;
  call.a = hal::Tensor::contiguous(const_cast<std::uint16_t*>(a.data()), nullptr, DType::bf16, {m, k});
  call.b = hal::Tensor::contiguous(const_cast<std::uint16_t*>(b.data()), nullptr, DType::bf16,
                                   trans_b ? hal::Shape{n, k} : hal::Shape{k, n});
  call.trans_b = trans_b;
  call.c = hal::Tensor::contiguous(c.data(), nullptr, DType::f32, {m, n});
  hal::cpu_ref::gemm_fp32_blocked(hal::cpu_ref::resolve_gemm(call), kernel, blocking);
  return c;
}

void expect_same_bits(const std::vector<float>& want, const std::vector<float>& got, const std::string& what) {
  ASSERT_EQ(want.size(), got.size());
  int shown = 0;
  for (std::size_t i = 0; i < want.size() && shown < 5; ++i)
    if (std::bit_cast<std::uint32_t>(want[i]) != std::bit_cast<std::uint32_t>(got[i])) {
      ++shown;
      ADD_FAILURE() << what << ": element " << i << " want " << want[i] << " got " << got[i];
    }
}

struct Shape3 {
  std::int64_t m, n, k;
};

}  // namespace

// The hardware against its model: one micro-kernel call on random tiles
// (products over +-2^40 that cancel and round, subnormals at the edges), for
// K inside one block, at a block edge and across several blocks.
TEST(CpuGemmAmx, TileKernelMatchesTheEmulatedContractBitForBit) {
  if (!hal::cpu_ref::cpu_features().amx_bf16) GTEST_SKIP() << "no AMX on this CPU (or not granted by the OS)";
  const GemmMicroKernel& amx = kernel_named("amx_32x32");
  for (int range : {3, 20, 70})
    for (std::int64_t kc : {1, 2, 31, 32, 33, 96, 256}) {
      SCOPED_TRACE(testing::Message() << "kc " << kc << " exponents +-" << range);
      const std::int64_t blocks = (kc + 31) / 32;
      auto a = wide_bf16(static_cast<std::size_t>(blocks * 32 * 32), 1 + kc, range);
      auto b = wide_bf16(static_cast<std::size_t>(blocks * 32 * 32), 2 + kc, range);
      // The zero padding past kc, as pack_a / pack_b write it: A [block][row][32],
      // B [block][pair][column] pair words (two bf16 each).
      for (std::int64_t kb = 0; kb < blocks; ++kb)
        for (int line = 0; line < 32; ++line)
          for (int kk = 0; kk < 32; ++kk)
            if (kb * 32 + kk >= kc) {
              a[static_cast<std::size_t>((kb * 32 + line) * 32 + kk)] = 0;
              b[static_cast<std::size_t>(((kb * 16 + kk / 2) * 32 + line) * 2 + kk % 2)] = 0;
            }
      std::vector<float> start(32 * 32);
      const auto seeds = wide_bf16(start.size(), 3 + kc, range);
      for (std::size_t i = 0; i < start.size(); ++i) start[i] = hal::bf16_to_f32(seeds[i]) * 1.5f;
      std::vector<float> want = start, got = start;
      emulated().run(kc, a.data(), b.data(), want.data());
      amx.begin_task();
      amx.run(kc, a.data(), b.data(), got.data());
      amx.end_task();
      expect_same_bits(want, got, "tile kernel");
    }
}

// Through the driver: every shape, transposes of B, a blocking that splits K
// in several blocks and a partial last one, and the decode rows (<= 24: the
// AMX kernel streams B through AVX-512 multiply-adds, the emulated one packs).
TEST(CpuGemmAmx, DriverMatchesTheEmulatedContractBitForBit) {
  if (!hal::cpu_ref::cpu_features().amx_bf16) GTEST_SKIP() << "no AMX on this CPU (or not granted by the OS)";
  const GemmMicroKernel& amx = kernel_named("amx_32x32");
  const Shape3 shapes[] = {{1, 64, 96}, {3, 100, 77}, {24, 65, 300}, {25, 33, 64}, {70, 130, 200}};
  for (const auto& s : shapes)
    for (bool trans_b : {false, true}) {
      SCOPED_TRACE(testing::Message() << s.m << "x" << s.n << "x" << s.k << (trans_b ? " B^T" : ""));
      const auto a = wide_bf16(static_cast<std::size_t>(s.m * s.k), 5 + s.m, 20);
      const auto b = wide_bf16(static_cast<std::size_t>(s.k * s.n), 6 + s.n, 20);
      const hal::cpu_ref::GemmBlocking small{64, 64, 64};
      expect_same_bits(product(emulated(), a, b, s.m, s.n, s.k, trans_b),
                       product(amx, a, b, s.m, s.n, s.k, trans_b, small), "gemm");
    }
}

// The decode path of fewer than kAmxStreamTileRows rows needs AVX-512 only:
// checked on every AVX-512 CPU, AMX or not, against the emulated kernel's
// packed path; the tile path of more rows where AMX runs.
TEST(CpuGemmAmx, StreamedDecodeRowsMatchTheEmulatedContract) {
  if (!hal::cpu_ref::cpu_features().has_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
  const bool amx = hal::cpu_ref::cpu_features().amx_bf16;
  GemmMicroKernel stream_only = hal::cpu_ref::gemm_microkernel_amx();
  stream_only.run = [](std::int64_t, const void*, const void*, float* acc) { acc[0] = std::nanf(""); };
  if (!amx) stream_only.begin_task = stream_only.end_task = nullptr;  // no tile state to load
  // N a multiple of 32: every column panel is streamed (a partial one would take `run`).
  const Shape3 shapes[] = {{1, 64, 96},  {3, 96, 77},  {2, 32, 31},  {4, 64, 33},
                           {7, 32, 31},  {17, 96, 77}, {24, 128, 300}};
  for (const auto& s : shapes) {
    if (s.m >= hal::cpu_ref::kAmxStreamTileRows && !amx) continue;  // the tiles need AMX
    SCOPED_TRACE(testing::Message() << s.m << "x" << s.n << "x" << s.k);
    const auto a = wide_bf16(static_cast<std::size_t>(s.m * s.k), 7 + s.m, 20);
    const auto b = wide_bf16(static_cast<std::size_t>(s.k * s.n), 8 + s.n, 20);
    expect_same_bits(product(emulated(), a, b, s.m, s.n, s.k, false),
                     product(stream_only, a, b, s.m, s.n, s.k, false, {64, 64, 64}), "streamed");
  }
}
