// CPU gemm against a naive fp64 triple loop, with error bounds derived from
// rounding-error analysis (not tuned to the implementation), plus the
// reproducibility properties the blocked kernel promises: bitwise identical
// results for any thread count, any cache blocking, and for a sub-block
// computed on its own.
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu_ref/activation.h"
#include "cpu_ref/gemm_blocked.h"
#include "cpu_ref/gemm_microkernel.h"
#include "cpu_ref/gemm_pack.h"
#include "cpu_ref/half_convert.h"
#include "cpu_ref/kernels.h"
#include "hal/dtype.h"
#include "hal/error.h"
#include "hal/tensor.h"

namespace {

using hal::DType;
using hal::Shape;
using hal::Tensor;

// Host storage of any dtype: raw bytes, addressed through hal's element access.
struct HostArray {
  DType dtype;
  std::vector<unsigned char> bytes;
  HostArray(DType t, std::int64_t n) : dtype(t), bytes(static_cast<std::size_t>(n) * hal::dtype_size(t)) {}
  void* data() { return bytes.data(); }
  double get(std::int64_t i) const { return hal::load_element(bytes.data(), dtype, i); }
  void set(std::int64_t i, double v) { hal::store_element(bytes.data(), dtype, i, v); }
  Tensor view(const Shape& shape) { return Tensor::contiguous(data(), nullptr, dtype, shape); }
  Tensor view(const Shape& shape, const hal::Strides& strides, std::int64_t offset = 0) {
    Tensor t = view(shape);
    t.strides = strides;
    t.offset = offset;
    return t;
  }
};

// Deterministic values in [-1, 1), already rounded to the array's dtype.
void fill(HostArray& a, std::uint64_t seed) {
  std::uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(a.bytes.size() / hal::dtype_size(a.dtype)); ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    a.set(i, static_cast<double>(s >> 11) * 0x1.0p-52 - 1.0);
  }
}

double unit_roundoff(DType t) {
  switch (t) {
    case DType::f64: return 0x1.0p-53;
    case DType::f16: return 0x1.0p-11;
    case DType::bf16: return 0x1.0p-8;
    default: return 0x1.0p-24;
  }
}

// Reads element (b, i, j) of a rank-2/3 tensor as a matrix, transposed or not.
double matrix_at(const Tensor& t, std::int64_t b, std::int64_t i, std::int64_t j, bool transposed) {
  const int r = t.rank();
  if (transposed) std::swap(i, j);
  std::int64_t idx = t.offset + i * t.strides[r - 2] + j * t.strides[r - 1];
  if (r == 3 && t.shape[0] != 1) idx += b * t.strides[0];
  return hal::load_element(t.data, t.dtype, idx);
}

// C after the call, computed in fp64 from exactly the stored inputs, with the
// bound on |computed - exact|: fp32 accumulation of K products costs at most
// gamma_K = K*u/(1-K*u) times sum|a*b| (Higham 3.5), the three fp32 epilogue
// operations (alpha*, +beta*C, +bias) at most one u each of the running
// magnitude, the activation amplifies an input error by at most its Lipschitz
// constant (< 1.13 for relu, gelu_tanh, silu) and adds a few ulps of its own,
// and the final rounding to C's dtype adds u_out*|result|. With f64 C the
// oracle path sums in fp64 (u = 2^-53) and the same reasoning applies.
struct Expected {
  std::vector<double> value, bound;
};

Expected reference(const hal::GemmCall& call, const std::vector<double>& c_before) {
  const Tensor &a = call.a, &b = call.b, &c = call.c;
  const std::int64_t batch = c.rank() == 3 ? c.shape[0] : 1;
  const std::int64_t m = c.shape[c.rank() - 2], n = c.shape[c.rank() - 1];
  const std::int64_t k = a.shape[a.rank() - (call.trans_a ? 2 : 1)];
  const bool f64 = c.dtype == DType::f64;
  const double u_acc = f64 ? 0x1.0p-53 : 0x1.0p-24;
  const double gamma = (k + 3) * u_acc / (1.0 - (k + 3) * u_acc);
  const double u_out = unit_roundoff(c.dtype);
  Expected e;
  for (std::int64_t bi = 0; bi < batch; ++bi)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double sum = 0, abs_sum = 0;
        for (std::int64_t p = 0; p < k; ++p) {
          const double prod = matrix_at(a, bi, i, p, call.trans_a) * matrix_at(b, bi, p, j, call.trans_b);
          sum += prod;
          abs_sum += std::fabs(prod);
        }
        const double c0 = c_before[e.value.size()];
        const double bias = call.bias ? hal::load_element(call.bias->data, call.bias->dtype, j) : 0.0;
        double pre = call.alpha * sum + bias;
        double magnitude = std::fabs(call.alpha) * abs_sum + std::fabs(bias);
        if (call.beta != 0) {
          pre += call.beta * c0;
          magnitude += std::fabs(call.beta * c0);
        }
        const double v = hal::cpu_ref::apply_activation(call.activation, pre);
        e.value.push_back(v);
        e.bound.push_back(1.13 * gamma * magnitude + (u_out + 8 * u_acc) * std::fabs(v) +
                          std::numeric_limits<float>::denorm_min());
      }
  return e;
}

// Every element of C (as a [batch,] M x N matrix, any strides).
std::vector<double> read_matrix(const Tensor& c) {
  std::vector<double> out;
  const std::int64_t batch = c.rank() == 3 ? c.shape[0] : 1;
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t i = 0; i < c.shape[c.rank() - 2]; ++i)
      for (std::int64_t j = 0; j < c.shape[c.rank() - 1]; ++j) out.push_back(matrix_at(c, b, i, j, false));
  return out;
}

// Runs `call` (with `run`, default cpu_ref::gemm) and checks every element.
template <class Run>
void check_against_reference(const hal::GemmCall& call, Run run, const std::string& what) {
  const std::vector<double> before = read_matrix(call.c);
  const Expected e = reference(call, before);
  run(call);
  const std::vector<double> got = read_matrix(call.c);
  int failures = 0;
  for (std::size_t i = 0; i < got.size() && failures < 5; ++i) {
    if (!(std::fabs(got[i] - e.value[i]) <= e.bound[i])) {
      ++failures;
      ADD_FAILURE() << what << ": element " << i << " got " << got[i] << ", expected " << e.value[i]
                    << " +- " << e.bound[i];
    }
  }
}
void check_against_reference(const hal::GemmCall& call, const std::string& what) {
  check_against_reference(call, [](const hal::GemmCall& c) { hal::cpu_ref::gemm(c); }, what);
}

// Operands of one test problem, stored as the call's transposes require.
struct Problem {
  HostArray a, b, c;
  hal::GemmCall call;
  Problem(std::int64_t m, std::int64_t n, std::int64_t k, bool ta, bool tb, DType in = DType::f32,
          DType out = DType::f32)
      : a(in, m * k), b(in, k * n), c(out, m * n) {
    fill(a, 1 + m * 7 + k * 3 + ta);
    fill(b, 2 + n * 5 + k + tb);
    fill(c, 3 + m + n);
    call.a = a.view(ta ? Shape{k, m} : Shape{m, k});
    call.b = b.view(tb ? Shape{n, k} : Shape{k, n});
    call.c = c.view({m, n});
    call.trans_a = ta;
    call.trans_b = tb;
  }
};

struct Dims3 {
  std::int64_t m, n, k;
};
const Dims3 kOddShapes[] = {{1, 1, 1}, {7, 13, 5}, {33, 65, 129}, {127, 257, 31}};

TEST(CpuGemm, OddShapesAllTransposesMatchReference) {
  for (const auto& s : kOddShapes)
    for (int t = 0; t < 4; ++t) {
      Problem p(s.m, s.n, s.k, t & 1, t & 2);
      check_against_reference(p.call, "shape " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                                          std::to_string(s.k) + " trans " + std::to_string(t));
    }
}

// Each ISA kernel this CPU has (not only the one selected), with a blocking
// small enough to give several KC blocks and edge tiles in both directions.
// The result must not depend on the blocking at all: same bits as the default.
// bf16_pairs kernels take bf16 A and B; their odd K (83) ends on a half pair,
// and the blocking's odd KC (7) must still pair k as (2i, 2i + 1) of the whole K.
TEST(CpuGemm, EveryMicroKernelAndBlockingGivesTheSameBits) {
  for (const auto& kernel : hal::cpu_ref::gemm_microkernels_available()) {
    const bool pairs = kernel.bf16_only();
    Problem p(61, 75, 83, false, true, pairs ? DType::bf16 : DType::f32);
    const hal::cpu_ref::GemmBlocking small{2 * kernel.mr, 2 * kernel.nr, 16};
    check_against_reference(
        p.call,
        [&](const hal::GemmCall& c) {
          hal::cpu_ref::gemm_fp32_blocked(hal::cpu_ref::resolve_gemm(c), kernel, small);
        },
        kernel.name);
    const auto small_bits = p.c.bytes;
    hal::cpu_ref::gemm_fp32_blocked(hal::cpu_ref::resolve_gemm(p.call), kernel);
    EXPECT_EQ(small_bits, p.c.bytes) << kernel.name;
    // One MC block per task (no packed-B reuse across row blocks).
    hal::cpu_ref::gemm_fp32_blocked(hal::cpu_ref::resolve_gemm(p.call), kernel,
                                    {kernel.mr, kernel.nr, 7, kernel.mr});
    EXPECT_EQ(small_bits, p.c.bytes) << kernel.name << " one MC block per task";
  }
}

TEST(CpuGemm, BatchedWithBroadcastOperands) {
  const std::int64_t batch = 3, m = 9, n = 17, k = 11;
  HostArray a(DType::f32, batch * m * k), b(DType::f32, k * n), c(DType::f32, batch * m * n);
  fill(a, 10);
  fill(b, 11);
  hal::GemmCall call;
  // Rank-3 A and C, rank-2 B shared by every batch.
  call.a = a.view({batch, m, k});
  call.b = b.view({k, n});
  call.c = c.view({batch, m, n});
  check_against_reference(call, "rank-2 B");
  // A broadcast through a batch stride of 0 (only A's first matrix is read).
  call.a = a.view({batch, m, k}, {0, k, 1});
  check_against_reference(call, "batch stride 0");
  const auto got = read_matrix(call.c);
  for (std::int64_t i = 0; i < m * n; ++i) {
    EXPECT_EQ(got[i], got[m * n + i]);
    EXPECT_EQ(got[i], got[2 * m * n + i]);
  }
  // Transposed B with a batch dim of extent 1.
  call.a = a.view({batch, m, k});
  call.b = b.view({1, n, k});
  call.trans_b = true;
  check_against_reference(call, "B batch 1, transposed");
}

TEST(CpuGemm, StridedAndTransposedOutputViews) {
  const std::int64_t m = 23, n = 37, k = 19;
  Problem p(m, n, k, false, false);
  // C written through a transposed view: storage is [N, M] row-major.
  HostArray ct(DType::f32, n * m);
  fill(ct, 5);
  p.call.c = ct.view({m, n}, {1, m});
  p.call.beta = 0.5f;
  check_against_reference(p.call, "transposed C");
  // C as a window of a wider matrix (row stride n + 5, offset 3); the gaps are untouched.
  HostArray wide(DType::f32, m * (n + 5) + 3);
  fill(wide, 6);
  const auto original = wide.bytes;
  p.call.c = wide.view({m, n}, {n + 5, 1}, 3);
  check_against_reference(p.call, "padded C");
  for (std::int64_t idx = 0; idx < m * (n + 5) + 3; ++idx) {
    const std::int64_t rel = idx - 3;
    if (rel >= 0 && rel % (n + 5) < n) continue;
    EXPECT_EQ(std::memcmp(&wide.bytes[idx * 4], &original[idx * 4], 4), 0) << "gap element " << idx;
  }
}

TEST(CpuGemm, HalfPrecisionInputsAndOutputs) {
  struct Case {
    DType in, out;
  };
  for (const auto& cs : {Case{DType::f16, DType::f32}, Case{DType::bf16, DType::f32}, Case{DType::bf16, DType::bf16},
                         Case{DType::f16, DType::f16}})
    for (int t = 0; t < 4; ++t) {
      Problem p(45, 70, 67, t & 1, t & 2, cs.in, cs.out);
      p.call.beta = 1.0f;
      check_against_reference(p.call, std::string(hal::dtype_name(cs.in)) + "->" +
                                          std::string(hal::dtype_name(cs.out)) + " trans " + std::to_string(t));
    }
}

TEST(CpuGemm, AlphaBetaBiasAndEachActivation) {
  for (auto act : {hal::Activation::none, hal::Activation::relu, hal::Activation::gelu_tanh, hal::Activation::silu})
    for (DType out : {DType::f32, DType::bf16}) {
      Problem p(29, 41, 53, true, false, DType::f32, out);
      HostArray bias(out, 41);
      fill(bias, 9);
      p.call.bias = bias.view({41});
      p.call.alpha = 0.75f;
      p.call.beta = -1.5f;
      p.call.activation = act;
      check_against_reference(p.call, std::string(hal::to_string(act)) + " " + std::string(hal::dtype_name(out)));
    }
}

TEST(CpuGemm, EmptyReductionGivesZeroProduct) {
  Problem p(5, 6, 0, false, false);
  HostArray bias(DType::f32, 6);
  fill(bias, 4);
  p.call.bias = bias.view({6});
  p.call.beta = 2.0f;
  const auto before = read_matrix(p.call.c);
  hal::cpu_ref::gemm(p.call);
  const auto got = read_matrix(p.call.c);
  for (std::int64_t i = 0; i < 30; ++i)
    EXPECT_EQ(got[i], static_cast<double>(2.0f * static_cast<float>(before[i]) + static_cast<float>(bias.get(i % 6))));
}

TEST(CpuGemm, BetaZeroDoesNotReadC) {
  for (DType out : {DType::f32, DType::bf16, DType::f64}) {
    Problem p(13, 34, 21, false, true, out == DType::f64 ? DType::f64 : DType::f32, out);
    for (std::int64_t i = 0; i < 13 * 34; ++i) p.c.set(i, std::numeric_limits<double>::quiet_NaN());
    p.call.beta = 0.0f;
    hal::cpu_ref::gemm(p.call);
    for (double v : read_matrix(p.call.c)) ASSERT_FALSE(std::isnan(v)) << hal::dtype_name(out);
  }
}

TEST(CpuGemm, Fp64OracleMatchesReference) {
  for (int t = 0; t < 4; ++t) {
    Problem p(33, 65, 129, t & 1, t & 2, DType::f64, DType::f64);
    p.call.beta = 0.25f;
    p.call.activation = hal::Activation::gelu_tanh;
    check_against_reference(p.call, "f64 trans " + std::to_string(t));
  }
  // f32 inputs into an f64 C are also summed in fp64.
  Problem p(20, 30, 40, false, false, DType::f32, DType::f64);
  check_against_reference(p.call, "f32 -> f64");
}

// f32, and bf16 (the bf16-pair kernel and its packing where the CPU has
// AVX-512 BF16), each with B row-major and transposed (both pair packings).
TEST(CpuGemm, BitwiseIdenticalForAnyThreadCount) {
  for (DType t : {DType::f32, DType::bf16})
    for (bool tb : {false, true}) {
      Problem p(300, 300, 301, false, tb, t, t);
      hal::cpu_ref::gemm(p.call);
      const auto parallel = p.c.bytes;
      std::fill(p.c.bytes.begin(), p.c.bytes.end(), 0);
      tbb::task_arena one_thread(1);
      one_thread.execute([&] { hal::cpu_ref::gemm(p.call); });
      EXPECT_EQ(parallel, p.c.bytes) << hal::dtype_name(t) << (tb ? " B transposed" : "");
    }
}

// 1024 x 1024 on 2 threads cuts the columns in two (half NC: less packing
// than four thin row blocks each packing all of B) where 1 thread keeps them
// whole: the same bits. A bf16 or f16 C is the f32 C rounded once (the vector
// kernels' rounding in the epilogue), for f32 and bf16 inputs.
TEST(CpuGemm, HalvedColumnSplitAndRoundedOutputsGiveTheSameBits) {
  for (DType in : {DType::f32, DType::bf16}) {
    SCOPED_TRACE(hal::dtype_name(in));
    Problem p(1024, 1024, 64, false, false, in);
    tbb::task_arena two_threads(2), one_thread(1);
    two_threads.execute([&] { hal::cpu_ref::gemm(p.call); });
    const auto two = p.c.bytes;
    std::fill(p.c.bytes.begin(), p.c.bytes.end(), 0);
    one_thread.execute([&] { hal::cpu_ref::gemm(p.call); });
    EXPECT_EQ(two, p.c.bytes);
    for (DType out : {DType::bf16, DType::f16}) {
      HostArray c(out, 1024 * 1024);
      hal::GemmCall call = p.call;
      call.c = c.view({1024, 1024});
      two_threads.execute([&] { hal::cpu_ref::gemm(call); });
      int wrong = 0;
      for (std::int64_t i = 0; i < 1024 * 1024; ++i) {
        float f;
        std::memcpy(&f, p.c.bytes.data() + i * 4, 4);
        std::uint16_t got;
        std::memcpy(&got, c.bytes.data() + i * 2, 2);
        const std::uint16_t want = out == DType::bf16 ? hal::cpu_ref::float_to_bf16_bits(f) : hal::cpu_ref::float_to_f16_bits(f);
        if (got != want && ++wrong <= 3) ADD_FAILURE() << hal::dtype_name(out) << " element " << i;
      }
    }
  }
}

// Decode shapes split their columns across threads (one row cannot be split):
// the same bits with 1, 2 and 5 threads, for a narrow weight (N = 256, a k/v
// projection) and a wide one, f32 and bf16 (the bf16_pairs kernel where the
// CPU has AVX-512 BF16), against the fp64 reference too.
TEST(CpuGemm, DecodeShapesGiveTheSameBitsForAnyThreadCount) {
  for (DType in : {DType::f32, DType::bf16})
    for (std::int64_t n : {256, 1100})
      for (std::int64_t m : {1, 3}) {
        SCOPED_TRACE(testing::Message() << hal::dtype_name(in) << " m " << m << " n " << n);
        Problem p(m, n, 301, false, false, in);
        check_against_reference(p.call, "decode shape");
        const auto want = p.c.bytes;
        for (int threads : {1, 2, 5}) {
          std::fill(p.c.bytes.begin(), p.c.bytes.end(), 0);
          tbb::task_arena arena(threads);
          arena.execute([&] { hal::cpu_ref::gemm(p.call); });
          EXPECT_EQ(want, p.c.bytes) << threads << " threads";
        }
      }
}

TEST(CpuGemm, SubBlockEqualsTheSameRowsAndColumnsOfTheFullProduct) {
  const std::int64_t m = 200, n = 150, k = 300;
  Problem full(m, n, k, false, false);
  hal::cpu_ref::gemm(full.call);
  // Rows 64..127 and columns 40..109 via views of A's rows and B's columns:
  // these land at different tile positions than in the full product.
  const std::int64_t r0 = 64, rows = 64, c0 = 40, cols = 70;
  HostArray sub(DType::f32, rows * cols);
  hal::GemmCall call = full.call;
  call.a = full.a.view({rows, k}, {k, 1}, r0 * k);
  call.b = full.b.view({k, cols}, {n, 1}, c0);
  call.c = sub.view({rows, cols});
  hal::cpu_ref::gemm(call);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      ASSERT_EQ(std::memcmp(&sub.bytes[(i * cols + j) * 4], &full.c.bytes[((r0 + i) * n + c0 + j) * 4], 4), 0)
          << "row " << i << " col " << j;
}

// Decode-shaped tiles read a row-major f32/bf16 op(B) in place (stream_b)
// instead of packing it. Kernel level: stream_b on B where it lies gives the
// bits of `run` on packed panels, for 1..24 rows (a partial last A panel;
// every row count of one A panel: AVX2's few-row path), enough column panels
// for a multi-panel chunk and a remainder, and a k count that ends inside a group;
// B rows wider than the panels read, and rows that lie back to back (one
// row of A then reads them row by row: a column-blocked weight).
TEST(CpuGemm, StreamedBEqualsPackedBBitForBit) {
  for (const auto& kernel : hal::cpu_ref::gemm_microkernels_available()) {
    if (!kernel.stream_b || kernel.packing != hal::cpu_ref::GemmPacking::fp32) continue;  // pairs: the driver test
    const int mr = kernel.mr, nr = kernel.nr;
    const std::int64_t kc = 37, panels = 7;
    for (const std::int64_t ldb : {panels * nr + 5, panels * nr})
    for (DType bt : {DType::f32, DType::bf16}) {
      SCOPED_TRACE(testing::Message() << kernel.name << " ldb " << ldb);
      HostArray b(bt, kc * ldb);
      fill(b, 21);
      for (std::int64_t rows : {1, 2, 3, 4, 5, 6, 7, 16, 24}) {
        SCOPED_TRACE(testing::Message() << hal::dtype_name(bt) << " rows " << rows);
        const std::int64_t a_panels = (rows + mr - 1) / mr, a_stride = kc * mr + 16;
        std::vector<float> a(static_cast<std::size_t>(a_panels * a_stride), 0.0f);
        for (std::int64_t i = 0; i < rows; ++i)
          for (std::int64_t k = 0; k < kc; ++k)
            a[static_cast<std::size_t>((i / mr) * a_stride + k * mr + i % mr)] =
                std::sin(0.3f * static_cast<float>(i * kc + k)) * 1.7f;
        std::vector<float> start(static_cast<std::size_t>(panels * a_panels * mr * nr));
        for (std::size_t e = 0; e < start.size(); ++e) start[e] = 0.01f * static_cast<float>(e % 97);
        std::vector<float> want = start, got = start;
        std::vector<float> packed(static_cast<std::size_t>(kc * nr));
        for (std::int64_t jp = 0; jp < panels; ++jp) {
          for (std::int64_t k = 0; k < kc; ++k)
            for (int j = 0; j < nr; ++j)
              packed[static_cast<std::size_t>(k * nr + j)] = static_cast<float>(b.get(k * ldb + jp * nr + j));
          for (std::int64_t ip = 0; ip < a_panels; ++ip)
            kernel.run(kc, a.data() + ip * a_stride, packed.data(), want.data() + (jp * a_panels + ip) * mr * nr);
        }
        kernel.stream_b(kc, a.data(), a_stride, rows, b.bytes.data(), bt, ldb, panels, got.data(), a_panels);
        for (std::int64_t jp = 0; jp < panels; ++jp)
          for (std::int64_t i = 0; i < rows; ++i)
            for (int j = 0; j < nr; ++j) {
              const std::size_t e = static_cast<std::size_t>((jp * a_panels + i / mr) * mr * nr + (i % mr) * nr + j);
              ASSERT_EQ(std::memcmp(&want[e], &got[e], 4), 0) << "panel " << jp << " row " << i << " col " << j;
            }
      }
    }
  }
}

// Driver level: rows of a product computed on their own (a few rows: B is
// streamed) equal the same rows of a product tall enough to pack B, for
// f32 and bf16 B with a partial last column panel and several KC blocks.
TEST(CpuGemm, DecodeRowsEqualTheSameRowsOfATallProduct) {
  const std::int64_t m = 200, n = 150, k = 300;
  for (const auto& kernel : hal::cpu_ref::gemm_microkernels_available()) {
    const bool pairs = kernel.bf16_only();  // bf16 A and B only
    for (DType bt : {DType::f32, DType::bf16}) {
      if (pairs && bt != DType::bf16) continue;
      SCOPED_TRACE(testing::Message() << kernel.name << " " << hal::dtype_name(bt));
      Problem full(m, n, k, false, false, bt);
      // One task of all 200 rows: B is packed.
      const hal::cpu_ref::GemmBlocking tall{kernel.mr * 4, kernel.nr * 4, 64, 256};
      tbb::task_arena one_thread(1);
      one_thread.execute([&] { hal::cpu_ref::gemm_fp32_blocked(hal::cpu_ref::resolve_gemm(full.call), kernel, tall); });
      for (std::int64_t rows : {1, 3, 16}) {
        const std::int64_t r0 = 57;
        HostArray sub(DType::f32, rows * n);
        hal::GemmCall call = full.call;
        call.a = full.a.view({rows, k}, {k, 1}, r0 * k);
        call.c = sub.view({rows, n});
        hal::cpu_ref::gemm_fp32_blocked(hal::cpu_ref::resolve_gemm(call), kernel, tall);
        ASSERT_EQ(0, std::memcmp(sub.bytes.data(), full.c.bytes.data() + r0 * n * 4, static_cast<std::size_t>(rows * n * 4)))
            << rows << " rows";
      }
    }
  }
}

// A kernel without stream_b (AVX-512's) hands decode tiles to one with the
// same step that has it; never to one with another step or packing.
TEST(CpuGemm, DecodeKernelHasTheSameStep) {
  using hal::cpu_ref::GemmMicroKernel;
  using hal::cpu_ref::GemmPacking;
  const auto noop_stream = [](std::int64_t, const float*, std::int64_t, std::int64_t, const void*, DType, std::int64_t,
                              std::int64_t, float*, std::int64_t) {};
  const auto noop_run = [](std::int64_t, const void*, const void*, float*) {};
  const std::vector<GemmMicroKernel> kernels = {
      {"plain", 4, 8, noop_run, GemmPacking::fp32, noop_stream, false},
      {"fused_streaming", 6, 16, noop_run, GemmPacking::fp32, noop_stream, true},
      {"fused_packing_only", 12, 32, noop_run, GemmPacking::fp32, nullptr, true},
      {"pairs", 12, 32, noop_run, GemmPacking::bf16_pairs, nullptr, false}};
  EXPECT_EQ(hal::cpu_ref::decode_kernel_for(kernels[2], kernels), &kernels[1]);
  EXPECT_EQ(hal::cpu_ref::decode_kernel_for(kernels[0], kernels), &kernels[0]);
  EXPECT_EQ(hal::cpu_ref::decode_kernel_for(kernels[3], kernels), nullptr);
  const std::vector<GemmMicroKernel> no_fused_stream = {kernels[0], kernels[2]};
  EXPECT_EQ(hal::cpu_ref::decode_kernel_for(no_fused_stream[1], no_fused_stream), nullptr);
}

// The driver takes that hand-over: a fused kernel without stream_b whose own
// tile update would poison the result still gives the streaming kernel's bits
// for a decode shape (on a CPU with a fused streaming kernel, i.e. AVX2).
TEST(CpuGemm, DecodeShapesOnAKernelWithoutStreamingUseTheSameStepKernel) {
  const hal::cpu_ref::GemmMicroKernel* streaming = nullptr;
  for (const auto& k : hal::cpu_ref::gemm_microkernels_available())
    if (k.packing == hal::cpu_ref::GemmPacking::fp32 && k.fused && k.stream_b) streaming = &k;
  if (!streaming) GTEST_SKIP() << "no fused streaming kernel on this CPU";
  hal::cpu_ref::GemmMicroKernel poisoned = *streaming;
  poisoned.name = "poisoned";
  poisoned.stream_b = nullptr;
  poisoned.run = [](std::int64_t, const void*, const void*, float* acc) { acc[0] = std::nanf(""); };
  Problem want(3, 64, 40, false, false), got(3, 64, 40, false, false);
  hal::cpu_ref::gemm_fp32_blocked(hal::cpu_ref::resolve_gemm(want.call), *streaming);
  hal::cpu_ref::gemm_fp32_blocked(hal::cpu_ref::resolve_gemm(got.call), poisoned);
  EXPECT_EQ(want.c.bytes, got.c.bytes);
}

TEST(CpuGemm, MismatchedInnerDimensionThrows) {
  HostArray a(DType::f32, 12), b(DType::f32, 12), c(DType::f32, 9);
  hal::GemmCall call;
  call.a = a.view({3, 4});
  call.b = b.view({3, 4});  // needs 4 rows
  call.c = c.view({3, 3});
  EXPECT_THROW(hal::cpu_ref::gemm(call), hal::Error);
}

}  // namespace

// The bf16_pairs contract (gemm_microkernel.h) on the emulated kernel, which
// is what the AVX-512 BF16 kernel is written against: per pair the odd k is
// accumulated first, subnormal bf16 inputs read as zero, subnormal results
// flush to zero, a zero high half past an odd kc changes nothing.
namespace {

const hal::cpu_ref::GemmMicroKernel& emulated_pairs_kernel() {
  for (const auto& k : hal::cpu_ref::gemm_microkernels_available())
    if (std::string(k.name) == "bf16_pairs_emulated") return k;
  throw std::runtime_error("bf16_pairs_emulated is always available");
}

std::uint32_t pair(float even, float odd) {
  return std::uint32_t{hal::f32_to_bf16(even)} | std::uint32_t{hal::f32_to_bf16(odd)} << 16;
}

// acc[0][0] after one kernel call whose A and B panels hold `pairs` in row 0 / column 0
// (every other word zero), starting from `start`.
float run_pairs(std::int64_t kc, const std::vector<std::uint32_t>& a_words, const std::vector<std::uint32_t>& b_words,
                float start) {
  const auto& k = emulated_pairs_kernel();
  const std::int64_t pairs = (kc + 1) / 2;
  std::vector<std::uint32_t> a(static_cast<std::size_t>(pairs * k.mr)), b(static_cast<std::size_t>(pairs * k.nr));
  for (std::int64_t p = 0; p < pairs; ++p) {
    a[static_cast<std::size_t>(p * k.mr)] = a_words[static_cast<std::size_t>(p)];
    b[static_cast<std::size_t>(p * k.nr)] = b_words[static_cast<std::size_t>(p)];
  }
  std::vector<float> acc(static_cast<std::size_t>(k.mr * k.nr), 0.0f);
  acc[0] = start;
  k.run(kc, a.data(), b.data(), acc.data());
  for (std::size_t i = 1; i < acc.size(); ++i) EXPECT_EQ(acc[i], 0.0f) << "element " << i << " has no inputs";
  return acc[0];
}

}  // namespace

TEST(CpuGemmBf16Pairs, OddProductIsAccumulatedFirst) {
  // acc = 1, odd product -1, even product 2^-30: odd first gives 0 + 2^-30;
  // even first would give (1 + 2^-30 rounded to 1) - 1 = 0.
  EXPECT_EQ(run_pairs(2, {pair(0x1p-30f, -1.0f)}, {pair(1.0f, 1.0f)}, 1.0f), 0x1p-30f);
}

TEST(CpuGemmBf16Pairs, SubnormalInputsReadAsZeroAndResultsFlush) {
  // 2^-130 is a bf16 subnormal: read as zero, so 1 * 2^-130 adds nothing.
  EXPECT_EQ(run_pairs(2, {pair(1.0f, 0.0f)}, {pair(0x1p-130f, 0.0f)}, 0.0f), 0.0f);
  // 2^-70 * 2^-60 = 2^-130 is a subnormal product: it flushes to zero.
  const float flushed = run_pairs(2, {pair(0x1p-70f, 0.0f)}, {pair(0x1p-60f, 0.0f)}, 0.0f);
  EXPECT_EQ(flushed, 0.0f);
  // A normal result is kept exactly.
  EXPECT_EQ(run_pairs(2, {pair(0x1p-60f, 0.0f)}, {pair(0x1p-60f, 0.0f)}, 0.0f), 0x1p-120f);
}

TEST(CpuGemmBf16Pairs, SumsEveryPairInOrder) {
  // kc = 5: pairs (0,1), (2,3), (4, pad). Small integers: the exact sum.
  const std::vector<std::uint32_t> a{pair(1, 2), pair(3, 4), pair(5, 0)}, b{pair(6, 7), pair(8, 9), pair(10, 0)};
  EXPECT_EQ(run_pairs(5, a, b, 0.5f), 0.5f + 1 * 6 + 2 * 7 + 3 * 8 + 4 * 9 + 5 * 10);
}

TEST(CpuGemmBf16Pairs, DriverMatchesTheReferenceForEveryLayout) {
  const auto& kernel = emulated_pairs_kernel();
  for (const auto& s : kOddShapes)
    for (int t = 0; t < 4; ++t) {
      Problem p(s.m, s.n, s.k, t & 1, t & 2, DType::bf16, DType::bf16);
      check_against_reference(
          p.call,
          [&](const hal::GemmCall& c) { hal::cpu_ref::gemm_fp32_blocked(hal::cpu_ref::resolve_gemm(c), kernel); },
          "bf16 pairs " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " trans " +
              std::to_string(t));
    }
}

TEST(CpuGemmBf16Pairs, RefusesNonBf16Inputs) {
  Problem p(4, 8, 6, false, false, DType::f32);
  EXPECT_THROW(hal::cpu_ref::gemm_fp32_blocked(hal::cpu_ref::resolve_gemm(p.call), emulated_pairs_kernel()),
               hal::Error);
}

// A kernel's vectorised pair packing (GemmMicroKernel::pack_pairs, the
// AVX-512 BF16 kernel's) writes the words of the plain pack_pair_panels for
// every layout it takes and every edge: lines contiguous along k (row-major
// A), adjacent lines (row-major B), another stride (the plain fallback); an
// odd kc (a half pair), a last panel past the edge, a view's odd offset.
// Words it must not write (the panels' slack) keep their fill in both.
TEST(CpuGemmBf16Pairs, VectorisedPackingGivesThePlainWords) {
  using hal::cpu_ref::GemmMatrix;
  bool any = false;
  for (const auto& kernel : hal::cpu_ref::gemm_microkernels_available()) {
    if (kernel.pack_pairs == nullptr) continue;
    any = true;
    constexpr std::int64_t kStride = 301, kRows = 600;
    std::vector<std::uint16_t> data(static_cast<std::size_t>(kStride * kRows));
    std::uint32_t state = 12345;
    for (auto& v : data) v = static_cast<std::uint16_t>((state = state * 1664525u + 1013904223u) >> 16);
    struct Layout {
      const char* name;
      std::int64_t line_stride, k_stride;
    };
    for (const Layout& l : {Layout{"k contiguous", kStride, 1}, Layout{"lines adjacent", 1, kStride},
                            Layout{"other strides", 2 * kStride, 3}})
      for (int width : {kernel.mr, kernel.nr})
        for (std::int64_t extent : {1, 11, 12, 13, 32, 37, 64})
          for (std::int64_t kc : {1, 2, 7, 31, 32, 33, 64, 97}) {
            const GemmMatrix m{data.data(), DType::bf16, 3, 0, 0, 0};
            const std::int64_t panels = (extent + width - 1) / width;
            const std::size_t words =
                static_cast<std::size_t>(panels * hal::cpu_ref::packed_pair_panel_stride(kc, width));
            std::vector<std::uint32_t> plain(words, 0xdeadbeefu), fast(words, 0xdeadbeefu);
            const std::int64_t line0 = 5, k0 = 4;
            hal::cpu_ref::pack_pair_panels(m, 0, line0, extent, l.line_stride, k0, kc, l.k_stride, width, plain.data());
            kernel.pack_pairs(m, 0, line0, extent, l.line_stride, k0, kc, l.k_stride, width, fast.data());
            ASSERT_EQ(plain, fast) << kernel.name << " " << l.name << " width " << width << " extent " << extent
                                   << " kc " << kc;
          }
  }
  if (!any) GTEST_SKIP() << "no kernel with a vectorised pair packing on this CPU";
}
