// The fp8 decode GEMM's planner and its host emulation
// (backends/gpu/gemm_fp8_decode_plan.h), on the CPU: which gemm_fp8 calls
// qualify, that splits are whole 128-blocks covering K exactly, that the
// sm_80 form's fp8 -> f16 conversion is exact for every byte, and that the
// emulated kernel (both instruction forms: the documented mma.sync fragment
// layouts, the lane maps of kernel_params/gemm_fp8_decode.h, the promotion
// and pass 2's split order) gives cpu_ref gemm_fp8's bits on exact inputs
// and stays within gemm_fp8's bound (docs/accuracy.md) on random ones.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

#include "backends/gpu/gemm_fp8_decode_plan.h"
#include "backends/gpu/kernel_args.h"
#include "conformance/fp8_accumulator.h"
#include "hal/dtype.h"
#include "hal/fp8_codec.h"
#include "hal/stream.h"
#include "ops/ops.h"
#include "unit/test_helpers.h"

namespace hal::gpu_test {

namespace kp = kernel_params;
namespace codec = fp8_codec;
using test::cpu;
using test::view_of;

static_assert(std::is_trivially_copyable_v<kp::GemmFp8DecodeParams> &&
              std::is_standard_layout_v<kp::GemmFp8DecodeParams>);

namespace {

alignas(16) std::uint8_t g_bytes[64];  // a 16-byte aligned address for the plan's checks

// gemm_fp8's parameters for A [m, k] row-major, B [n, k], dense scales.
kp::GemmFp8Params fp8_call(std::int64_t m, std::int64_t n, std::int64_t k, DType at = DType::f8e4m3,
                           DType bt = DType::f8e4m3) {
  kp::GemmFp8Params p{};
  p.g.a = g_bytes;
  p.g.b = g_bytes;
  p.g.m = m;
  p.g.n = n;
  p.g.k = k;
  p.g.batch = 1;
  p.g.a_m_stride = k;
  p.g.a_k_stride = 1;
  p.g.b_n_stride = k;
  p.g.b_k_stride = 1;
  p.g.c_type = 0;
  p.g.alpha = 1.0f;
  p.k_blocks = static_cast<std::int32_t>((k + 127) / 128);
  p.sa_m_stride = p.k_blocks;
  p.sa_k_stride = 1;
  p.sb_n_stride = p.k_blocks;
  p.sb_k_stride = 1;
  p.a_type = static_cast<std::int32_t>(at);
  p.b_type = static_cast<std::int32_t>(bt);
  return p;
}

}  // namespace

TEST(GpuGemmFp8DecodePlan, QualifiesOnlySmallMOcpAlignedKContiguousCalls) {
  EXPECT_TRUE(gpu::plan_fp8_decode_gemm(fp8_call(1, 4096, 7168), 132).ok);
  EXPECT_TRUE(gpu::plan_fp8_decode_gemm(fp8_call(64, 4096, 7168, DType::f8e5m2, DType::f8e4m3), 132).ok);
  EXPECT_TRUE(gpu::plan_fp8_decode_gemm(fp8_call(3, 20, 48), 132).ok);  // ragged K (one short block), ragged N
  EXPECT_FALSE(gpu::plan_fp8_decode_gemm(fp8_call(65, 4096, 7168), 132).ok);
  EXPECT_FALSE(gpu::plan_fp8_decode_gemm(fp8_call(8, 4096, 7160), 132).ok);  // K % 16 != 0
  EXPECT_FALSE(gpu::plan_fp8_decode_gemm(fp8_call(8, 4096, 7168, DType::f8e4m3fnuz), 132).ok);
  EXPECT_FALSE(gpu::plan_fp8_decode_gemm(fp8_call(8, 4096, 7168, DType::f8e4m3, DType::f8e5m2fnuz), 132).ok);
  EXPECT_FALSE(gpu::plan_fp8_decode_gemm(fp8_call(0, 4096, 7168), 132).ok);
  EXPECT_FALSE(gpu::plan_fp8_decode_gemm(fp8_call(8, 4096, 0), 132).ok);
  kp::GemmFp8Params p = fp8_call(8, 4096, 7168);
  p.groups = 4;
  EXPECT_FALSE(gpu::plan_fp8_decode_gemm(p, 132).ok);
  p = fp8_call(8, 4096, 7168);
  p.g.a = g_bytes + 1;
  EXPECT_FALSE(gpu::plan_fp8_decode_gemm(p, 132).ok);
  p = fp8_call(8, 4096, 7168);
  p.g.b_n_stride = 7168 + 8;  // rows 8 bytes off 16
  EXPECT_FALSE(gpu::plan_fp8_decode_gemm(p, 132).ok);
  p = fp8_call(8, 4096, 7168);
  p.g.a_k_stride = 8;
  p.g.a_m_stride = 1;  // A stored K-major the other way
  EXPECT_FALSE(gpu::plan_fp8_decode_gemm(p, 132).ok);
  p = fp8_call(8, 4096, 7168);
  p.g.b_k_stride = 4096;
  p.g.b_n_stride = 1;  // B stored [K, N]
  const gpu::Fp8DecodePlan r = gpu::plan_fp8_decode_gemm(p, 132);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.why.find("b is not K-contiguous"), std::string::npos) << r.why;
}

TEST(GpuGemmFp8DecodePlan, TakesARealGemmFp8CallAndNamesTheKernel) {
  // The packing of ops::gemm_fp8's call (kernel_args.cpp) gives the strides the plan reads.
  alignas(16) static std::uint8_t a[4 * 256], b[32 * 256];
  alignas(16) static float sa[4 * 2], sb[1 * 2];
  GemmFp8Call c;
  c.a = Tensor::contiguous(a, nullptr, DType::f8e5m2, Shape{4, 256});
  c.a_scales = Tensor::contiguous(sa, nullptr, DType::f32, Shape{4, 2});
  c.b = Tensor::contiguous(b, nullptr, DType::f8e4m3, Shape{32, 256});
  c.b_scales = Tensor::contiguous(sb, nullptr, DType::f32, Shape{1, 2});
  c.c = Tensor::contiguous(nullptr, nullptr, DType::bf16, Shape{4, 32});
  const kp::GemmFp8Params p = gpu::gemm_fp8_params(c);
  const gpu::Fp8DecodePlan plan = gpu::plan_fp8_decode_gemm(p, 132);
  ASSERT_TRUE(plan.ok) << plan.why;
  EXPECT_EQ(plan.m_tiles, 1);
  EXPECT_STREQ(gpu::fp8_decode_kernel_name(p, plan), "hal_gemm_fp8_decode_e5m2_e4m3_m8");
  const kp::GemmFp8DecodeParams d = gpu::fp8_decode_params(p, plan);
  EXPECT_EQ(d.a, a);
  EXPECT_EQ(d.b, b);
  EXPECT_EQ(d.a_scales, sa);
  EXPECT_EQ(d.b_scales, sb);
  EXPECT_EQ(d.sa_m_stride, 2);
  EXPECT_EQ(d.sb_k_stride, 1);
  EXPECT_EQ(d.b_n_stride, 256);
  c.a.offset = 1;  // unaligned A
  EXPECT_FALSE(gpu::plan_fp8_decode_gemm(gpu::gemm_fp8_params(c), 132).ok);
}

TEST(GpuGemmFp8DecodePlan, VariantIsThePowerOfTwoOfEightRowTiles) {
  const int want[] = {1, 1, 2, 4, 4, 8, 8, 8};
  const std::int64_t ms[] = {1, 8, 9, 17, 32, 33, 48, 64};
  for (int i = 0; i < 8; ++i) {
    const kp::GemmFp8Params p = fp8_call(ms[i], 256, 1024);
    const gpu::Fp8DecodePlan plan = gpu::plan_fp8_decode_gemm(p, 132);
    ASSERT_TRUE(plan.ok);
    EXPECT_EQ(plan.m_tiles, want[i]) << "m = " << ms[i];
    EXPECT_EQ(std::string(gpu::fp8_decode_kernel_name(p, plan)),
              "hal_gemm_fp8_decode_e4m3_e4m3_m" + std::to_string(8 * want[i]));
  }
}

TEST(GpuGemmFp8DecodePlan, SplitsAreWhole128BlocksCoveringKAndFillTheDevice) {
  for (const std::int64_t n : {16, 576, 2048, 4096, 18432})
    for (const std::int64_t k : {128, 1536, 2048, 7168, 16384 + 48})
      for (const int sms : {1, 108, 132}) {
        const kp::GemmFp8Params p = fp8_call(8, n, k);
        const gpu::Fp8DecodePlan plan = gpu::plan_fp8_decode_gemm(p, sms);
        ASSERT_TRUE(plan.ok) << plan.why;
        const std::int64_t blocks = (k + 127) / 128;
        EXPECT_EQ(plan.k_per_split % 128, 0);
        EXPECT_GE(plan.splits * plan.k_per_split, k);
        EXPECT_LT((plan.splits - 1) * plan.k_per_split, k) << "an empty split";
        EXPECT_EQ(plan.n_tiles, (n + 15) / 16);
        EXPECT_EQ(plan.units, plan.n_tiles * plan.splits);
        EXPECT_EQ(plan.ctas, (plan.units + 3) / 4);
        EXPECT_EQ(plan.workspace_floats, plan.splits * 8 * n);
        // At least 4 blocks per split unless K has fewer; enough units, or as many splits as allowed.
        if (plan.splits > 1) {
          EXPECT_GE(plan.k_per_split / 128, 4);
        }
        // The splits wanted (enough units for 16 per SM, at most blocks / 4) are
        // rounded to whole blocks per split: at least half of them remain.
        const std::int64_t max_splits = std::max<std::int64_t>(1, blocks / 4);
        const std::int64_t wanted = std::min(max_splits, (std::int64_t{sms} * 16 + plan.n_tiles - 1) / plan.n_tiles);
        EXPECT_GE(2 * plan.splits, wanted) << "n " << n << " k " << k << " splits " << plan.splits;
        // Fixed: the same call plans the same every time.
        EXPECT_EQ(gpu::plan_fp8_decode_gemm(p, sms).splits, plan.splits);
      }
  // Decode of a 4096 x 7168 weight on 132 SMs: 256 N tiles, 56 blocks: 9 splits
  // wanted, 7 blocks each, so 8 splits.
  const gpu::Fp8DecodePlan d = gpu::plan_fp8_decode_gemm(fp8_call(1, 4096, 7168), 132);
  EXPECT_EQ(d.splits, 8);
  EXPECT_EQ(d.k_per_split, 7 * 128);
}

namespace {

using ToF16Pair = std::uint32_t (*)(std::uint32_t word, bool e5m2, int sel_hi);

// Every byte of fp8 type `t` through `convert` next to every byte (a word's
// four bytes vary independently: no half leaks into the other): a finite byte
// gives exactly its value times `factor`, sign included; a NaN byte gives an
// f16 NaN, exactly `nan_bits` when that is not 0. Returns how many distinct
// bytes were NaN.
int expect_exact_for_every_byte(ToF16Pair convert, std::int32_t t, bool e5m2, float factor,
                                std::uint16_t nan_bits = 0) {
  bool nan_byte[256] = {};
  for (std::uint32_t lo = 0; lo < 256; ++lo)
    for (std::uint32_t hi = 0; hi < 256; ++hi) {
      const std::uint32_t word = lo | (hi << 8) | ((255 - hi) << 16) | (((lo + 91) & 255) << 24);
      for (int sel = 0; sel < 2; ++sel) {
        const std::uint32_t pair = convert(word, e5m2, sel);
        for (int h = 0; h < 2; ++h) {
          const auto byte = static_cast<std::uint8_t>(word >> (8 * (2 * sel + h)));
          const float want = codec::fp8_to_f32(byte, t);
          const auto bits = static_cast<std::uint16_t>(pair >> (16 * h));
          const float got = f16_to_f32(bits);
          if (std::isnan(want)) {
            nan_byte[byte] = true;
            EXPECT_TRUE(std::isnan(got)) << "type " << t << " byte " << int{byte};
            if (nan_bits != 0) EXPECT_EQ(bits, nan_bits) << "type " << t << " byte " << int{byte};
          } else {
            EXPECT_EQ(got, want * factor) << "type " << t << " byte " << int{byte};
            EXPECT_EQ(std::signbit(got), std::signbit(want)) << "type " << t << " byte " << int{byte};
          }
          if (::testing::Test::HasFailure()) return -1;
        }
      }
    }
  int nans = 0;
  for (const bool n : nan_byte) nans += n;
  return nans;
}

}  // namespace

TEST(GpuGemmFp8DecodePlan, F16ConversionIsExactForEveryByteAndKeepsNan) {
  EXPECT_EQ(expect_exact_for_every_byte(&kp::fp8_decode_to_f16_pair, codec::kF8E4M3, false, 0x1p-8f), 2);
  EXPECT_EQ(expect_exact_for_every_byte(&kp::fp8_decode_to_f16_pair, codec::kF8E5M2, true, 1.0f), 6);
  EXPECT_EQ(kp::fp8_decode_unscale(false, false), 65536.0f);
  EXPECT_EQ(kp::fp8_decode_unscale(true, false), 256.0f);
  EXPECT_EQ(kp::fp8_decode_unscale(true, true), 1.0f);
}

TEST(GpuGemmFp8DecodePlan, FnuzF16ConversionIsExactForEveryByteAndMakesNanOfMinusZero) {
  // 0x80, FNUZ's only NaN, is f16's quiet NaN; 0x7f is a number (e4m3fnuz 240).
  EXPECT_EQ(expect_exact_for_every_byte(&kp::fp8_fnuz_decode_to_f16_pair, codec::kF8E4M3Fnuz, false, 0x1p-7f, 0x7e00),
            1);
  EXPECT_EQ(expect_exact_for_every_byte(&kp::fp8_fnuz_decode_to_f16_pair, codec::kF8E5M2Fnuz, true, 1.0f, 0x7e00), 1);
  EXPECT_EQ(kp::fp8_fnuz_decode_unscale(false, false), 16384.0f);
  EXPECT_EQ(kp::fp8_fnuz_decode_unscale(false, true), 128.0f);
  EXPECT_EQ(kp::fp8_fnuz_decode_unscale(true, true), 1.0f);
}

namespace {

struct Fp8Case {
  std::int64_t m, n, k;
  DType at, bt;
};

struct Fp8Data {
  std::vector<std::uint8_t> a, b;
  std::vector<float> sa, sb;
};

// exact: small integers and power-of-two scales (every sum exact in fp32,
// so any order gives the exact result); otherwise random values spanning
// the formats and random scales.
Fp8Data make_data(const Fp8Case& c, bool exact, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> small(-4, 4), e(-3, 3), byte(0, 255);
  std::uniform_real_distribution<float> scale(0.01f, 2.0f);
  const std::int64_t kb = (c.k + 127) / 128, nb = (c.n + 127) / 128;
  Fp8Data d{std::vector<std::uint8_t>(static_cast<std::size_t>(c.m * c.k)),
            std::vector<std::uint8_t>(static_cast<std::size_t>(c.n * c.k)),
            std::vector<float>(static_cast<std::size_t>(c.m * kb)), std::vector<float>(static_cast<std::size_t>(nb * kb))};
  const auto fill = [&](std::vector<std::uint8_t>& v, DType t) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (exact) {
        store_element_f32(v.data(), t, static_cast<std::int64_t>(i), static_cast<float>(small(gen)));
      } else {
        std::uint8_t x = static_cast<std::uint8_t>(byte(gen));
        if (std::isnan(codec::fp8_to_f32(x, static_cast<std::int32_t>(t))) ||
            std::isinf(codec::fp8_to_f32(x, static_cast<std::int32_t>(t))))
          x = 0;  // finite data: the bound is for finite sums
        v[i] = x;
      }
    }
  };
  fill(d.a, c.at);
  fill(d.b, c.bt);
  for (float& v : d.sa) v = exact ? std::ldexp(1.0f, e(gen)) : scale(gen);
  for (float& v : d.sb) v = exact ? std::ldexp(1.0f, e(gen)) : scale(gen);
  return d;
}

// cpu_ref gemm_fp8 (f32 output, no epilogue beyond alpha = 1).
std::vector<float> cpu_gemm_fp8(const Fp8Case& c, Fp8Data& d) {
  hal::Stream s(cpu());
  const std::int64_t kb = (c.k + 127) / 128, nb = (c.n + 127) / 128;
  std::vector<float> out(static_cast<std::size_t>(c.m * c.n), -99.0f);
  ops::gemm_fp8(s, view_of(d.a, c.at, {c.m, c.k}), view_of(d.sa, DType::f32, {c.m, kb}), view_of(d.b, c.bt, {c.n, c.k}),
                view_of(d.sb, DType::f32, {nb, kb}), view_of(out, DType::f32, {c.m, c.n}));
  s.synchronize();
  return out;
}

constexpr Fp8Case kCases[] = {
    {1, 16, 128, DType::f8e4m3, DType::f8e4m3},     {5, 40, 1040, DType::f8e4m3, DType::f8e4m3},
    {8, 256, 2048, DType::f8e4m3, DType::f8e5m2},   {13, 130, 784, DType::f8e5m2, DType::f8e4m3},
    {33, 48, 1536, DType::f8e5m2, DType::f8e5m2},   {64, 32, 640, DType::f8e4m3, DType::f8e4m3},
};

}  // namespace

TEST(GpuGemmFp8DecodePlan, EmulatedKernelGivesCpuRefBitsOnExactInputsForBothForms) {
  for (const Fp8Case& c : kCases)
    for (const int sms : {1, 4, 132}) {
      Fp8Data d = make_data(c, true, static_cast<std::uint32_t>(c.m * 31 + c.k));
      const kp::GemmFp8Params p = fp8_call(c.m, c.n, c.k, c.at, c.bt);
      const gpu::Fp8DecodePlan plan = gpu::plan_fp8_decode_gemm(p, sms, {16, 1});  // many splits
      ASSERT_TRUE(plan.ok) << plan.why;
      const std::vector<float> want = cpu_gemm_fp8(c, d);
      for (const bool fp8_mma : {true, false}) {
        const std::vector<float> got = gpu::emulate_fp8_decode_gemm(plan, fp8_mma, c.m, c.n, c.k,
                                                                    static_cast<std::int32_t>(c.at),
                                                                    static_cast<std::int32_t>(c.bt), d.a, d.b, d.sa, d.sb);
        for (std::size_t i = 0; i < want.size(); ++i)
          ASSERT_EQ(got[i], want[i]) << "m " << c.m << " n " << c.n << " k " << c.k << " splits " << plan.splits
                                     << (fp8_mma ? " fp8 mma" : " f16 mma") << " output " << i;
      }
    }
}

TEST(GpuGemmFp8DecodePlan, EmulatedKernelIsWithinTheGemmFp8BoundOnRandomInputs) {
  // docs/accuracy.md's bound with the fp32 block-sum model (the emulation
  // adds in fp32; the device's instructions are held to fp8_block_sum_model's
  // model for its kind, which conformance/fp8_accumulator.h holds).
  const conformance::Fp8BlockSumModel model = conformance::kFp8BlockSumFp32;
  for (const Fp8Case& c : kCases) {
    Fp8Data d = make_data(c, false, static_cast<std::uint32_t>(c.n * 7 + c.k));
    const kp::GemmFp8Params p = fp8_call(c.m, c.n, c.k, c.at, c.bt);
    const gpu::Fp8DecodePlan plan = gpu::plan_fp8_decode_gemm(p, 132, {16, 1});
    ASSERT_TRUE(plan.ok);
    const std::int64_t kb = (c.k + 127) / 128, l = std::min<std::int64_t>(c.k, 128);
    const double g_blk = model.block_gamma(l), nu = static_cast<double>(kb + 5) * 0x1p-24,
                 g_pro = nu / (1 - nu);
    for (const bool fp8_mma : {true, false}) {
      const std::vector<float> got =
          gpu::emulate_fp8_decode_gemm(plan, fp8_mma, c.m, c.n, c.k, static_cast<std::int32_t>(c.at),
                                       static_cast<std::int32_t>(c.bt), d.a, d.b, d.sa, d.sb);
      double worst = 0;
      for (std::int64_t i = 0; i < c.m; ++i)
        for (std::int64_t j = 0; j < c.n; ++j) {
          double exact = 0, mag = 0, p_sum = 0;
          for (std::int64_t b = 0; b < kb; ++b) {
            double s = 0, sabs = 0;
            for (std::int64_t q = b * 128; q < std::min(c.k, (b + 1) * 128); ++q) {
              const double x = codec::fp8_to_f32(d.a[static_cast<std::size_t>(i * c.k + q)], static_cast<std::int32_t>(c.at)) *
                               static_cast<double>(codec::fp8_to_f32(d.b[static_cast<std::size_t>(j * c.k + q)],
                                                                     static_cast<std::int32_t>(c.bt)));
              s += x;
              sabs += std::fabs(x);
            }
            const double sc = static_cast<double>(d.sa[static_cast<std::size_t>(i * kb + b)]) *
                              d.sb[static_cast<std::size_t>((j / 128) * kb + b)];
            exact += sc * s;
            mag += std::fabs(sc) * sabs;
            p_sum += sabs;
          }
          const double bound = (g_blk + g_pro + g_blk * g_pro) * mag + (p_sum + kb + 5) * 0x1p-150;
          const double err = std::fabs(got[static_cast<std::size_t>(i * c.n + j)] - exact);
          ASSERT_LE(err, bound) << "m " << c.m << " n " << c.n << " k " << c.k << " (" << i << ", " << j << ")"
                                << (fp8_mma ? " fp8 mma" : " f16 mma");
          if (bound > 0) worst = std::max(worst, err / bound);
        }
      RecordProperty(fmt::format("worst_error_over_bound_m{}_k{}_{}", c.m, c.k, fp8_mma ? "fp8" : "f16"),
                     std::to_string(worst));
    }
  }
}

TEST(GpuGemmFp8DecodePlan, HipVariantsAreSixteenRowTilesAndItsEmulationGivesCpuRefBits) {
  const int want[] = {1, 1, 2, 4, 4};
  const std::int64_t ms[] = {1, 16, 17, 33, 64};
  for (int i = 0; i < 5; ++i) {
    const kp::GemmFp8Params p = fp8_call(ms[i], 256, 1024, DType::f8e5m2, DType::f8e4m3);
    const gpu::Fp8DecodePlan plan = gpu::plan_fp8_decode_gemm(p, 304, gpu::kFp8DecodeTuning, kp::kDecodeHipTileM);
    ASSERT_TRUE(plan.ok);
    EXPECT_EQ(plan.m_tiles, want[i]) << "m = " << ms[i];
    EXPECT_EQ(std::string(gpu::fp8_decode_kernel_name(p, plan, true)),
              "gemm_fp8_decode_e5m2_e4m3_m" + std::to_string(16 * want[i]));
  }
  EXPECT_FALSE(gpu::plan_fp8_decode_gemm(fp8_call(8, 256, 1024), 304, {}, 32).ok);  // no such tile height
  for (const Fp8Case& c : kCases)
    for (const int cus : {1, 304}) {
      Fp8Data d = make_data(c, true, static_cast<std::uint32_t>(c.m * 17 + c.n));
      const gpu::Fp8DecodePlan plan =
          gpu::plan_fp8_decode_gemm(fp8_call(c.m, c.n, c.k, c.at, c.bt), cus, {16, 1}, kp::kDecodeHipTileM);
      ASSERT_TRUE(plan.ok) << plan.why;
      const std::vector<float> want = cpu_gemm_fp8(c, d);
      const std::vector<float> got =
          gpu::emulate_fp8_decode_gemm_hip(plan, c.m, c.n, c.k, static_cast<std::int32_t>(c.at),
                                           static_cast<std::int32_t>(c.bt), d.a, d.b, d.sa, d.sb);
      for (std::size_t i = 0; i < want.size(); ++i)
        ASSERT_EQ(got[i], want[i]) << "hip m " << c.m << " n " << c.n << " k " << c.k << " splits " << plan.splits
                                   << " output " << i;
    }
}

// MI300's own fp8: the HIP kernel's FNUZ variants (fp8_fnuz_decode_to_f16_pair
// into the same f16 path). Both operands of one family; CUDA's plan still
// refuses FNUZ.
TEST(GpuGemmFp8DecodePlan, HipTakesFnuzOperandsAndItsEmulationGivesCpuRefBits) {
  const int hip_m = kp::kDecodeHipTileM;
  const auto plan_hip = [&](const kp::GemmFp8Params& p, int cus, const gpu::DecodeGemmTuning& t) {
    return gpu::plan_fp8_decode_gemm(p, cus, t, hip_m, /*accept_fnuz=*/true);
  };
  const kp::GemmFp8Params p = fp8_call(17, 256, 1024, DType::f8e5m2fnuz, DType::f8e4m3fnuz);
  const gpu::Fp8DecodePlan plan = plan_hip(p, 304, gpu::kFp8DecodeTuning);
  ASSERT_TRUE(plan.ok) << plan.why;
  EXPECT_STREQ(gpu::fp8_decode_kernel_name(p, plan, true), "gemm_fp8_decode_fnuz_e5m2_e4m3_m32");
  EXPECT_STREQ(gpu::fp8_decode_kernel_name(fp8_call(1, 256, 1024, DType::f8e4m3fnuz, DType::f8e5m2fnuz),
                                           plan_hip(fp8_call(1, 256, 1024), 304, gpu::kFp8DecodeTuning), true),
               "gemm_fp8_decode_fnuz_e4m3_e5m2_m16");
  EXPECT_FALSE(gpu::plan_fp8_decode_gemm(p, 304, gpu::kFp8DecodeTuning, hip_m).ok);  // not asked for
  EXPECT_FALSE(gpu::plan_fp8_decode_gemm(p, 132).ok);                                 // CUDA
  const gpu::Fp8DecodePlan mixed =
      plan_hip(fp8_call(8, 256, 1024, DType::f8e4m3fnuz, DType::f8e4m3), 304, gpu::kFp8DecodeTuning);
  EXPECT_FALSE(mixed.ok);
  EXPECT_NE(mixed.why.find("neither both OCP nor both FNUZ"), std::string::npos) << mixed.why;

  constexpr Fp8Case kFnuzCases[] = {
      {1, 16, 128, DType::f8e4m3fnuz, DType::f8e4m3fnuz},  {13, 130, 784, DType::f8e5m2fnuz, DType::f8e4m3fnuz},
      {33, 48, 1536, DType::f8e4m3fnuz, DType::f8e5m2fnuz}, {64, 32, 640, DType::f8e5m2fnuz, DType::f8e5m2fnuz},
  };
  for (const Fp8Case& c : kFnuzCases)
    for (const int cus : {1, 304}) {
      Fp8Data d = make_data(c, true, static_cast<std::uint32_t>(c.m * 29 + c.n));
      const gpu::Fp8DecodePlan cp = plan_hip(fp8_call(c.m, c.n, c.k, c.at, c.bt), cus, {16, 1});
      ASSERT_TRUE(cp.ok) << cp.why;
      const std::vector<float> want = cpu_gemm_fp8(c, d);
      const std::vector<float> got = gpu::emulate_fp8_decode_gemm_hip(
          cp, c.m, c.n, c.k, static_cast<std::int32_t>(c.at), static_cast<std::int32_t>(c.bt), d.a, d.b, d.sa, d.sb);
      for (std::size_t i = 0; i < want.size(); ++i)
        ASSERT_EQ(got[i], want[i]) << "fnuz m " << c.m << " n " << c.n << " k " << c.k << " splits " << cp.splits
                                   << " output " << i;
    }
}

TEST(GpuGemmFp8DecodePlan, TheSuiteBoundsCudaWithAFused32ProductModel) {
  // The sm_89+ form issues m16n8k32 (32 products per instruction, 4 per
  // 128-block, the first from zero): the structure of the wgmma model the
  // suite picks for cuda devices, so the conformance gemm_fp8 cases bound it.
  const conformance::Fp8BlockSumModel m = conformance::fp8_block_sum_model("cuda:0");
  EXPECT_EQ(m.products_per_step, 32);
  EXPECT_EQ(m.u, 0x1p-13);
  EXPECT_EQ(kp::kFp8Block / 32, 2 * kp::kFp8DecodeStepsPerBlock);  // 2 steps x 2 instructions
}

}  // namespace hal::gpu_test
