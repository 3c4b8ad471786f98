// The packed fp8 GEMM's kernels and packing (cpu_ref/gemm_fp8_kernel.h,
// gemm_fp8_pack.h, gemm_fp8_blocked.h): every kernel this CPU can run gives
// the documented block-sum order bit for bit, the vector pack writes the
// scalar pack's words, and the bits do not depend on the thread count.
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cpu_ref/gemm_fp8_blocked.h"
#include "cpu_ref/gemm_fp8_kernel.h"
#include "cpu_ref/gemm_fp8_pack.h"
#include "cpu_ref/half_convert.h"
#include "hal/dtype.h"
#include "hal/stream.h"
#include "ops/ops.h"
#include "unit/test_helpers.h"

namespace {

using hal::DType;
using hal::Tensor;
using hal::test::cpu;
using hal::test::view_of;

float fp8_value(DType t, std::uint8_t b) { return hal::load_element_f32(&b, t, 0); }

// Random finite fp8 bytes of format t (NaN and infinity patterns skipped).
std::vector<std::uint8_t> finite_bytes(DType t, std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v)
    do b = static_cast<std::uint8_t>(byte(gen));
    while (!std::isfinite(fp8_value(t, b)));
  return v;
}

std::vector<float> random_scales(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(0.01f, 3.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

// The contract of gemm_fp8_kernel.h in scalar code: per 128-K block, from +0,
// pairs ascending, the odd k first (a zero product where the pair has no odd
// k), then acc += (sa * sb) * S, each step one fp32 rounding.
float documented_order(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& sa,
                       const std::vector<float>& sb, std::int64_t k, std::int64_t kb, std::int64_t i, std::int64_t j) {
  float acc = 0.0f;
  for (std::int64_t blk = 0; blk < kb; ++blk) {
    float s = 0.0f;
    const std::int64_t q0 = blk * 128, q1 = std::min(k, q0 + 128);
    for (std::int64_t q = q0; q < q1; q += 2) {
      const float odd = q + 1 < q1 ? a[i * k + q + 1] * b[j * k + q + 1] : 0.0f;
      s = s + odd;
      s = s + a[i * k + q] * b[j * k + q];
    }
    const float scale = sa[i * kb + blk] * sb[(j / 128) * kb + blk];
    acc = acc + scale * s;
  }
  return acc;
}

TEST(CpuFp8Kernels, EveryKernelGivesTheDocumentedOrderBitForBit) {
  // Odd M and N (edge panels), N over one 128-column scale block, K with a
  // ragged odd last block (301 = 2 * 128 + 45).
  const std::int64_t m = 29, n = 200, k = 301, kb = 3, nb = 2;
  for (auto [fa, fb] : {std::pair{DType::f8e4m3, DType::f8e5m2}, std::pair{DType::f8e5m2fnuz, DType::f8e4m3fnuz}}) {
    std::vector<std::uint8_t> a8 = finite_bytes(fa, m * k, 1), b8 = finite_bytes(fb, n * k, 2);
    std::vector<float> a(a8.size()), b(b8.size());
    for (std::size_t x = 0; x < a.size(); ++x) a[x] = fp8_value(fa, a8[x]);
    for (std::size_t x = 0; x < b.size(); ++x) b[x] = fp8_value(fb, b8[x]);
    std::vector<float> sa = random_scales(m * kb, 3), sb = random_scales(nb * kb, 4);
    const hal::Fp8Epilogue epilogue{};
    for (const auto& kernel : hal::cpu_ref::fp8_block_kernels_available()) {
      std::vector<float> c(m * n, -7.0f);
      const hal::cpu_ref::Fp8GemmProblem p{Tensor::contiguous(a8.data(), &cpu(), fa, {m, k}),
                                           Tensor::contiguous(sa.data(), &cpu(), DType::f32, {m, kb}),
                                           Tensor::contiguous(b8.data(), &cpu(), fb, {n, k}),
                                           Tensor::contiguous(sb.data(), &cpu(), DType::f32, {nb, kb}),
                                           Tensor::contiguous(c.data(), &cpu(), DType::f32, {m, n}),
                                           std::nullopt,
                                           &epilogue,
                                           0,
                                           m};
      hal::cpu_ref::gemm_fp8_blocked({&p, 1}, kernel);
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j)
          ASSERT_EQ(std::bit_cast<std::uint32_t>(c[i * n + j]),
                    std::bit_cast<std::uint32_t>(documented_order(a, b, sa, sb, k, kb, i, j)))
              << kernel.name << " " << hal::dtype_name(fa) << " c[" << i << ", " << j << "]";
    }
  }
}

// A kernel's vector pack (where it has one) writes exactly pack_fp8_panels's
// words: every byte value of every format, ragged kc, partial panels.
TEST(CpuFp8Kernels, VectorPackEqualsScalarPack) {
  int checked = 0;
  for (const auto& kernel : hal::cpu_ref::fp8_block_kernels_available()) {
    if (kernel.pack == nullptr) continue;
    for (DType t : {DType::f8e4m3, DType::f8e5m2, DType::f8e4m3fnuz, DType::f8e5m2fnuz}) {
      const hal::cpu_ref::Fp8Table table = hal::cpu_ref::fp8_table(t);
      const std::int64_t line_stride = 131;
      std::vector<std::uint8_t> src(static_cast<std::size_t>(line_stride * 70));
      for (std::size_t x = 0; x < src.size(); ++x) src[x] = static_cast<std::uint8_t>(x * 37 + x / 256);
      for (int width : {kernel.mr, kernel.nr})
        for (std::int64_t extent : {1, 12, 13, 32, 45, 70})
          for (std::int64_t kc : {1, 2, 45, 64, 65, 127, 128}) {
            const std::int64_t panels = (extent + width - 1) / width;
            const std::int64_t words = panels * hal::cpu_ref::fp8_panel_words(kernel.packing, kc, width);
            std::vector<std::uint32_t> scalar(static_cast<std::size_t>(words), 0xDEADBEEFu), vector = scalar;
            const hal::cpu_ref::Fp8Lines lines{src.data() + 3, line_stride, 1};
            hal::cpu_ref::pack_fp8_panels(kernel.packing, lines, extent, kc, width, table, scalar.data());
            kernel.pack(lines, extent, kc, width, table, vector.data());
            ASSERT_EQ(scalar, vector) << kernel.name << " " << hal::dtype_name(t) << " width " << width << " extent "
                                      << extent << " kc " << kc;
            ++checked;
          }
    }
  }
  if (checked == 0) GTEST_SKIP() << "no kernel with a vector pack on this CPU";
}

// The packed path's output rounding to bf16 is store_element_f32's.
TEST(CpuFp8Kernels, Bf16OutputRoundingMatchesTheHostConversion) {
  std::mt19937 gen(9);
  std::uniform_int_distribution<std::uint32_t> bits;
  std::vector<std::uint32_t> cases{0u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f7fffffu, 0x00000001u,
                                   0x3f808000u, 0x3f818000u, 0x7f7f8000u};
  for (int x = 0; x < 200000; ++x) cases.push_back(bits(gen));
  for (std::uint32_t u : cases) {
    const float v = std::bit_cast<float>(u);
    ASSERT_EQ(hal::cpu_ref::float_to_bf16_bits(v), hal::f32_to_bf16(v)) << std::hex << u;
  }
}

// One thread and two threads give the same bits (tasks split over output
// tiles only), on a plain and a grouped GEMM with several row and column tasks.
TEST(CpuFp8Kernels, ThreadCountDoesNotChangeTheBits) {
  hal::Stream s(cpu());
  const std::int64_t m = 600, n = 2100, k = 300, kb = 3, nb = 17;
  std::vector<std::uint8_t> a = finite_bytes(DType::f8e4m3, m * k, 5), b = finite_bytes(DType::f8e4m3, 2 * n * k, 6);
  std::vector<float> sa = random_scales(m * kb, 7), sb = random_scales(2 * nb * kb, 8);
  std::vector<std::int32_t> offsets{0, 250, 600};
  auto plain = [&](std::vector<std::uint16_t>& c) {
    hal::ops::gemm_fp8(s, view_of(a, DType::f8e4m3, {m, k}), view_of(sa, DType::f32, {m, kb}),
                       view_of(b, DType::f8e4m3, {n, k}), view_of(sb, DType::f32, {nb, kb}),
                       view_of(c, DType::bf16, {m, n}));
  };
  auto grouped = [&](std::vector<std::uint16_t>& c) {
    hal::ops::gemm_fp8_grouped(s, view_of(a, DType::f8e4m3, {m, k}), view_of(sa, DType::f32, {m, kb}),
                               view_of(b, DType::f8e4m3, {2, n, k}), view_of(sb, DType::f32, {2, nb, kb}),
                               view_of(offsets, DType::i32, {3}), view_of(c, DType::bf16, {m, n}));
  };
  for (const auto& run : {std::function<void(std::vector<std::uint16_t>&)>(plain), std::function<void(std::vector<std::uint16_t>&)>(grouped)}) {
    std::vector<std::uint16_t> one(m * n, 1), two(m * n, 2);
    tbb::task_arena(1).execute([&] { run(one); });
    tbb::task_arena(2).execute([&] { run(two); });
    ASSERT_EQ(one, two);
  }
}

}  // namespace
