// The fused contiguous fast path of the elementwise ops (elementwise.h:
// map_elements_fused, vector_kernels.h: map1_fused / map2_fused) and the
// 16-bit unary tables (unary_table16.h) against the general gather / compute
// / scatter path, which strided inputs take: the same
// bits for every op, dtype, odd size and misaligned offset; streaming stores
// the same bits as plain ones; the same bits for every thread count.
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "cpu_ref/vector_kernels.h"
#include "hal/dtype.h"
#include "hal/registry.h"
#include "hal/stream.h"
#include "ops/ops.h"
#include "unit/test_helpers.h"

namespace {

using hal::test::cpu;

using hal::DType;
using hal::Tensor;
using hal::cpu_ref::FusedOp;

std::int64_t esize(DType t) { return t == DType::f32 ? 4 : 2; }

// Element i's bits as a 32-bit word (16-bit dtypes zero-extended).
std::uint32_t element_bits(const void* base, DType t, std::int64_t i) {
  if (t == DType::f32) return static_cast<const std::uint32_t*>(base)[i];
  return static_cast<const std::uint16_t*>(base)[i];
}
void set_element_bits(void* base, DType t, std::int64_t i, std::uint32_t b) {
  if (t == DType::f32) static_cast<std::uint32_t*>(base)[i] = b;
  else static_cast<std::uint16_t*>(base)[i] = static_cast<std::uint16_t>(b);
}

// n values: mostly moderate numbers (so that add / sub round, exp stays in
// its common range), some random bit patterns (NaNs with payloads, infs,
// subnormals, huge values), signed zeros and values beyond exp's fast range.
std::vector<std::uint32_t> test_values(DType t, std::int64_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> moderate(-12.0f, 12.0f);
  std::vector<std::uint32_t> v(static_cast<std::size_t>(n));
  const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, 100.0f, -100.0f, 88.5f, -90.0f,
                            std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(), 1e-40f};
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint32_t pick = rng() % 16;
    std::uint32_t b;
    if (pick < 10) {
      const float f = moderate(rng);
      b = t == DType::f32 ? std::bit_cast<std::uint32_t>(f)
          : t == DType::bf16 ? hal::f32_to_bf16(f)
                             : hal::f32_to_f16(f);
    } else if (pick < 13) {
      b = t == DType::f32 ? static_cast<std::uint32_t>(rng()) : static_cast<std::uint32_t>(rng() & 0xffffu);
    } else {
      const float f = specials[rng() % std::size(specials)];
      b = t == DType::f32 ? std::bit_cast<std::uint32_t>(f)
          : t == DType::bf16 ? hal::f32_to_bf16(f)
                             : hal::f32_to_f16(f);
    }
    v[static_cast<std::size_t>(i)] = b;
  }
  return v;
}

// A 1-D view of n elements at element offset `offset` of `buf`, every
// `stride`-th element, holding `values`; the gaps hold a sentinel.
Tensor make_view(std::vector<std::uint32_t>& buf, DType t, const std::vector<std::uint32_t>& values,
                 std::int64_t offset, std::int64_t stride) {
  const auto n = static_cast<std::int64_t>(values.size());
  buf.assign(static_cast<std::size_t>((offset + n * stride) * esize(t) / 4 + 2), 0x5a5a5a5au);
  for (std::int64_t i = 0; i < n; ++i) set_element_bits(buf.data(), t, offset + i * stride, values[static_cast<std::size_t>(i)]);
  hal::test::register_host_memory(buf);
  Tensor v = Tensor::contiguous(buf.data(), &cpu(), t, {n});
  v.offset = offset;
  v.strides = hal::Strides{stride};
  return v;
}

using OpRun = std::function<void(hal::Stream&, const Tensor&, const Tensor&, const Tensor&)>;

struct NamedOp {
  const char* name;
  OpRun run;
};

std::vector<NamedOp> ops_under_test() {
  std::vector<NamedOp> ops;
  const std::pair<const char*, hal::BinaryKind> binaries[] = {
      {"add", hal::BinaryKind::add},         {"sub", hal::BinaryKind::sub},
      {"mul", hal::BinaryKind::mul},         {"div", hal::BinaryKind::div},
      {"maximum", hal::BinaryKind::maximum}, {"minimum", hal::BinaryKind::minimum}};
  for (const auto& [name, kind] : binaries)
    ops.push_back({name, [kind](hal::Stream& s, const Tensor& a, const Tensor& b, const Tensor& y) {
                     hal::ops::binary(s, kind, a, b, y);
                   }});
  // Every unary op: 16-bit ones are table lookups (unary_table16.h).
  const std::pair<const char*, hal::UnaryKind> unaries[] = {
      {"neg", hal::UnaryKind::neg},         {"abs", hal::UnaryKind::abs},
      {"exp", hal::UnaryKind::exp},         {"log", hal::UnaryKind::log},
      {"sqrt", hal::UnaryKind::sqrt},       {"rsqrt", hal::UnaryKind::rsqrt},
      {"tanh", hal::UnaryKind::tanh},       {"sigmoid", hal::UnaryKind::sigmoid},
      {"relu", hal::UnaryKind::relu},       {"gelu", hal::UnaryKind::gelu},
      {"gelu_tanh", hal::UnaryKind::gelu_tanh}, {"silu", hal::UnaryKind::silu}};
  for (const auto& [name, kind] : unaries)
    ops.push_back({name, [kind](hal::Stream& s, const Tensor& a, const Tensor&, const Tensor& y) {
                     hal::ops::unary(s, kind, a, y);
                   }});
  ops.push_back({"swiglu", [](hal::Stream& s, const Tensor& a, const Tensor& b, const Tensor& y) {
                   hal::ops::swiglu(s, a, b, y);
                 }});
  return ops;
}

TEST(CpuElementwiseFastPath, MatchesTheStridedGeneralPathBitForBit) {
  hal::Stream s(cpu());
  // Sizes around the vector widths and past one fused block (8192 elements).
  const std::int64_t sizes[] = {1, 7, 15, 16, 17, 33, 1001, 8192 + 8192 + 37};
  const std::int64_t offsets[][3] = {{0, 0, 0}, {1, 3, 5}, {3, 0, 1}};  // a, b, y element offsets
  const auto ops = ops_under_test();
  for (DType t : {DType::f32, DType::bf16, DType::f16}) {
    for (std::int64_t n : sizes) {
      const auto av = test_values(t, n, 11u + static_cast<std::uint32_t>(n));
      const auto bv = test_values(t, n, 97u + static_cast<std::uint32_t>(n));
      for (const auto& off : offsets) {
        std::vector<std::uint32_t> ad, bd, as, bs, yd, yr;
        const Tensor a_dense = make_view(ad, t, av, off[0], 1);
        const Tensor b_dense = make_view(bd, t, bv, off[1], 1);
        const Tensor a_strided = make_view(as, t, av, 1, 2);  // stride 2: the general path
        const Tensor b_strided = make_view(bs, t, bv, 0, 3);
        const std::vector<std::uint32_t> zeros(static_cast<std::size_t>(n), 0u);
        for (const NamedOp& op : ops) {
          SCOPED_TRACE(testing::Message() << hal::dtype_name(t) << " " << op.name << " n=" << n << " offsets "
                                          << off[0] << "," << off[1] << "," << off[2]);
          const Tensor y_fast = make_view(yd, t, zeros, off[2], 1);
          const Tensor y_ref = make_view(yr, t, zeros, 0, 1);
          op.run(s, a_dense, b_dense, y_fast);
          op.run(s, a_strided, b_strided, y_ref);
          s.synchronize();
          for (std::int64_t i = 0; i < n; ++i)
            ASSERT_EQ(element_bits(yd.data(), t, off[2] + i), element_bits(yr.data(), t, i)) << "element " << i;
          // Nothing written outside y.
          for (std::int64_t i = 0; i < off[2]; ++i) ASSERT_EQ(element_bits(yd.data(), t, i), t == DType::f32 ? 0x5a5a5a5au : 0x5a5au);
          ASSERT_EQ(element_bits(yd.data(), t, off[2] + n), t == DType::f32 ? 0x5a5a5a5au : 0x5a5au);
        }
      }
    }
  }
}

// The fused entries directly: streaming stores (with every head alignment)
// give the same bits as plain ones, and unary ops match the composition
// widen + the table's fp32 entry + narrow.
TEST(CpuElementwiseFastPath, StreamingStoresGiveThePlainBits) {
  for (const hal::cpu_ref::VectorKernels* k : hal::cpu_ref::vector_kernels_available()) {
    if (!k->map1_fused || !k->map2_fused) continue;
    for (DType t : {DType::f32, DType::bf16, DType::f16}) {
      constexpr std::int64_t n = 301;
      const auto av = test_values(t, n + 16, 5u);
      const auto bv = test_values(t, n + 16, 6u);
      std::vector<std::uint32_t> a(av.size()), b(bv.size());
      for (std::size_t i = 0; i < av.size(); ++i) {
        set_element_bits(a.data(), t, static_cast<std::int64_t>(i), av[i]);
        set_element_bits(b.data(), t, static_cast<std::int64_t>(i), bv[i]);
      }
      for (std::int64_t shift = 0; shift < 16; ++shift) {
        SCOPED_TRACE(testing::Message() << k->name << " " << hal::dtype_name(t) << " shift " << shift);
        alignas(64) std::uint32_t plain[512], streamed[512];
        const auto at = [&](std::vector<std::uint32_t>& v) { return reinterpret_cast<char*>(v.data()) + shift * esize(t); };
        char* const p = reinterpret_cast<char*>(plain) + shift * esize(t);
        char* const q = reinterpret_cast<char*>(streamed) + shift * esize(t);
        for (FusedOp op : {FusedOp::add, FusedOp::maximum, FusedOp::swiglu}) {
          k->map2_fused(op, at(a), at(b), t, p, n, false);
          k->map2_fused(op, at(a), at(b), t, q, n, true);
          ASSERT_EQ(std::memcmp(p, q, static_cast<std::size_t>(n * esize(t))), 0) << int(op);
        }
        // The fused unary loops work two vectors at a time (one range test
        // for both): the values mix in-range and out-of-range lanes, so this
        // also checks that the pair gives each lane the one-vector bits.
        std::vector<float> wide(n), out(n);
        k->widen(at(a), t, n, wide.data());
        using Entry = void (*)(const float*, float*, std::int64_t);
        for (const auto& [op, entry] : {std::pair<FusedOp, Entry>{FusedOp::silu, k->silu},
                                        std::pair<FusedOp, Entry>{FusedOp::sigmoid, k->sigmoid},
                                        std::pair<FusedOp, Entry>{FusedOp::exp, k->exp},
                                        std::pair<FusedOp, Entry>{FusedOp::gelu, k->gelu},
                                        std::pair<FusedOp, Entry>{FusedOp::gelu_tanh, k->gelu_tanh},
                                        std::pair<FusedOp, Entry>{FusedOp::tanh, k->tanh},
                                        std::pair<FusedOp, Entry>{FusedOp::log, k->log}}) {
          entry(wide.data(), out.data(), n);
          std::vector<std::uint32_t> composed(512);
          k->narrow(composed.data(), t, n, out.data());
          k->map1_fused(op, at(a), t, q, n, true);
          ASSERT_EQ(std::memcmp(composed.data(), q, static_cast<std::size_t>(n * esize(t))), 0) << int(op);
        }
      }
    }
  }
}

TEST(CpuElementwiseFastPath, SameBitsForEveryThreadCount) {
  constexpr std::int64_t n = 5 * 8192 + 123;
  hal::Stream s(cpu());
  const auto av = test_values(DType::bf16, n, 1u), bv = test_values(DType::bf16, n, 2u);
  std::vector<std::uint32_t> ab, bb, y1, y2;
  const Tensor a = make_view(ab, DType::bf16, av, 0, 1), b = make_view(bb, DType::bf16, bv, 0, 1);
  const std::vector<std::uint32_t> zeros(static_cast<std::size_t>(n), 0u);
  const Tensor ya = make_view(y1, DType::bf16, zeros, 0, 1), yb = make_view(y2, DType::bf16, zeros, 0, 1);
  tbb::task_arena one(1);
  one.execute([&] {
    hal::ops::swiglu(s, a, b, ya);
    s.synchronize();
  });
  hal::ops::swiglu(s, a, b, yb);
  s.synchronize();
  EXPECT_EQ(y1, y2);
}

}  // namespace
