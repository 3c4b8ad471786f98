// gemm_fp8 and gemm_fp8_grouped (hal/op_fp8.h) on the CPU.
//
//   acc[i, j] = sum_kb (sa[i, kb] * sb[j / 128, kb]) * S_kb,
//   S_kb      = sum_{k in block kb} a[i, k] * b[j, k],
//   c[i, j]   = act(alpha * acc + beta * c + bias[j]).
//
// Every fp8 value is exactly an fp32 value and the product of two is exact
// in fp32 (at most 4 x 4 significant bits), so the only roundings are those
// of the block sums (fp32 here, the contract's u_blk = u32), the promotion
// (the scale product, its product with S_kb, the add into acc) and the
// epilogue. Two paths, one per process (selected_fp8_gemm_path,
// cpu_ref/gemm_fp8_kernel.h):
//  - packed (the default): fp8 panels widened to fp32 or bf16 and the GEMM's
//    register tiles, one K block at a time, promoted in the kernel
//    (cpu_ref/gemm_fp8_blocked.h). S_kb is summed by K pairs, odd k first
//    (vdpbf16ps's order), the same bits for every kernel;
//  - block dots (HAL_CPU_FP8_KERNEL=dots, the earlier path): S_kb summed in 8
//    interleaved lanes, then the lanes pairwise (cpu_ref/gemm_fp8_dot.h; the
//    AVX2 and the portable implementation give the same bits).
// Either way blocks are promoted in K order and tasks split over output
// tiles only, so the bits do not depend on the thread count or on the machine.
//
// The f64 form (every floating tensor f64) is the conformance suite's
// oracle: the same formula in fp64.
//
// A ragged K (not a multiple of 128) is handled: the last block is shorter.
#include <fmt/format.h>
#include <tbb/blocked_range2d.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "cpu_ref/activation.h"
#include "cpu_ref/cpu_features.h"
#include "cpu_ref/gemm_fp8_blocked.h"
#include "cpu_ref/gemm_fp8_dot.h"
#include "cpu_ref/kernels.h"
#include "hal/dtype.h"
#include "hal/error.h"

namespace hal::cpu_ref {

namespace {

constexpr std::int64_t kTileM = 32;  // rows of a decoded per task
constexpr std::int64_t kTileN = 64;  // rows of b decoded per task (half a scale block)
constexpr int kLanes = 8;

// The 256 values of an fp8 dtype as float, so decoding is one load.
std::array<float, 256> decode_table(DType t) {
  std::array<float, 256> lut{};
  for (int b = 0; b < 256; ++b) {
    const auto byte = static_cast<std::uint8_t>(b);
    lut[static_cast<std::size_t>(b)] = load_element_f32(&byte, t, 0);
  }
  return lut;
}

using Fp8Problem = Fp8GemmProblem;

std::int64_t at(const Tensor& t, std::int64_t i, std::int64_t j) { return t.offset + i * t.strides[0] + j * t.strides[1]; }

template <class T> T finish(const Fp8Problem& p, T acc, std::int64_t i, std::int64_t j) {
  const Fp8Epilogue& e = *p.epilogue;
  T v = static_cast<T>(e.alpha) * acc;
  if (e.beta != 0.0f) v += static_cast<T>(e.beta) * static_cast<T>(load_element(p.c.data, p.c.dtype, at(p.c, i, j)));
  if (p.bias) v += static_cast<T>(load_element(p.bias->data, p.bias->dtype, p.bias->offset + j * p.bias->strides[0]));
  return apply_activation(e.activation, v);
}

// Rows [r0, r0 + count) x columns [q0, q0 + n) of an fp8 matrix as floats,
// kFp8BlockSize apart in dst, zero from n to `padded`.
void decode_rows(const std::uint8_t* base, const Tensor& t, const std::array<float, 256>& lut, std::int64_t r0,
                 std::int64_t count, std::int64_t q0, std::int64_t n, std::int64_t padded, float* dst) {
  for (std::int64_t r = 0; r < count; ++r, dst += kFp8BlockSize) {
    const std::uint8_t* row = base + t.offset + (r0 + r) * t.strides[0] + q0 * t.strides[1];
    if (t.strides[1] == 1) {
      for (std::int64_t q = 0; q < n; ++q) dst[q] = lut[row[q]];
    } else {
      for (std::int64_t q = 0; q < n; ++q) dst[q] = lut[row[q * t.strides[1]]];
    }
    for (std::int64_t q = n; q < padded; ++q) dst[q] = 0.0f;
  }
}

// Rows [i0, i1) x columns [j0, j1) of one problem, fp32. Block by block of
// K: the block's slices of a and b are decoded into cache-sized buffers
// (zero-padded to a multiple of 8: exact), their block dots taken, and each
// promoted into its output's accumulator (blocks in K order).
void tile_fp32(const Fp8Problem& p, const std::array<float, 256>& lut_a, const std::array<float, 256>& lut_b,
               Fp8BlockDots dots, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1) {
  const std::int64_t k = p.a.shape[1], kb_count = p.a_scales.shape[1];
  const std::int64_t rows = i1 - i0, cols = j1 - j0;
  std::vector<float> a_blk(static_cast<std::size_t>(kTileM * kFp8BlockSize)), b_blk(static_cast<std::size_t>(kTileN * kFp8BlockSize));
  std::vector<float> sums(static_cast<std::size_t>(kTileM * kTileN)), acc(static_cast<std::size_t>(kTileM * kTileN), 0.0f);
  const auto* a8 = static_cast<const std::uint8_t*>(p.a.data);
  const auto* b8 = static_cast<const std::uint8_t*>(p.b.data);
  const auto* sa = static_cast<const float*>(p.a_scales.data);
  const auto* sb = static_cast<const float*>(p.b_scales.data);
  for (std::int64_t kb = 0; kb < kb_count; ++kb) {
    const std::int64_t q0 = kb * kFp8BlockSize, n = std::min(kFp8BlockSize, k - q0);
    const std::int64_t padded = (n + kLanes - 1) / kLanes * kLanes;
    decode_rows(a8, p.a, lut_a, i0, rows, q0, n, padded, a_blk.data());
    decode_rows(b8, p.b, lut_b, j0, cols, q0, n, padded, b_blk.data());
    dots(a_blk.data(), b_blk.data(), kFp8BlockSize, rows, cols, padded, sums.data(), kTileN);
    for (std::int64_t r = 0; r < rows; ++r) {
      const float sa_r = sa[at(p.a_scales, i0 + r, kb)];
      for (std::int64_t t = 0; t < cols; ++t) {
        const float scale = sa_r * sb[at(p.b_scales, (j0 + t) / kFp8BlockSize, kb)];
        const auto o = static_cast<std::size_t>(r * kTileN + t);
        acc[o] += scale * sums[o];
      }
    }
  }
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t t = 0; t < cols; ++t)
      store_element_f32(p.c.data, p.c.dtype, at(p.c, i0 + r, j0 + t),
                        finish(p, acc[static_cast<std::size_t>(r * kTileN + t)], i0 + r, j0 + t));
}

// The oracle: the same formula in fp64 (all tensors f64).
void tile_f64(const Fp8Problem& p, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1) {
  const std::int64_t k = p.a.shape[1], kb_count = p.a_scales.shape[1];
  const auto* a = static_cast<const double*>(p.a.data);
  const auto* b = static_cast<const double*>(p.b.data);
  const auto* sa = static_cast<const double*>(p.a_scales.data);
  const auto* sb = static_cast<const double*>(p.b_scales.data);
  for (std::int64_t i = i0; i < i1; ++i)
    for (std::int64_t j = j0; j < j1; ++j) {
      double acc = 0.0;
      for (std::int64_t kb = 0; kb < kb_count; ++kb) {
        double s = 0.0;
        for (std::int64_t q = kb * kFp8BlockSize; q < std::min(k, (kb + 1) * kFp8BlockSize); ++q)
          s += a[at(p.a, i, q)] * b[at(p.b, j, q)];
        acc += sa[at(p.a_scales, i, kb)] * sb[at(p.b_scales, j / kFp8BlockSize, kb)] * s;
      }
      store_element(p.c.data, p.c.dtype, at(p.c, i, j), finish(p, acc, i, j));
    }
}

// The block-dot path (and the f64 oracle): row ranges of one problem each
// (a group of the grouped GEMM, or the whole of a plain one), run together
// over output tiles.
void run_dots(const std::vector<Fp8Problem>& problems) {
  // Tiles: (problem, row tile) x column tiles.
  struct RowTile {
    std::size_t problem;
    std::int64_t i0, i1;
  };
  std::vector<RowTile> tiles;
  for (std::size_t g = 0; g < problems.size(); ++g)
    for (std::int64_t i = problems[g].row0; i < problems[g].row1; i += kTileM)
      tiles.push_back({g, i, std::min(problems[g].row1, i + kTileM)});
  if (tiles.empty()) return;
  const std::int64_t n = problems[0].c.shape[1];
  if (n == 0) return;
  const bool f64 = problems[0].a.dtype == DType::f64;
  const std::array<float, 256> lut_a = f64 ? std::array<float, 256>{} : decode_table(problems[0].a.dtype);
  const std::array<float, 256> lut_b = f64 ? std::array<float, 256>{} : decode_table(problems[0].b.dtype);
  const std::int64_t col_tiles = (n + kTileN - 1) / kTileN;
  const Fp8BlockDots dots = fp8_block_dots();
  tbb::parallel_for(tbb::blocked_range2d<std::size_t, std::int64_t>(0, tiles.size(), 0, col_tiles),
                    [&](const tbb::blocked_range2d<std::size_t, std::int64_t>& r) {
                      for (std::size_t t = r.rows().begin(); t != r.rows().end(); ++t)
                        for (std::int64_t ct = r.cols().begin(); ct != r.cols().end(); ++ct) {
                          const RowTile& rt = tiles[t];
                          const Fp8Problem& p = problems[rt.problem];
                          const std::int64_t j0 = ct * kTileN, j1 = std::min(n, j0 + kTileN);
                          if (f64) tile_f64(p, rt.i0, rt.i1, j0, j1);
                          else tile_fp32(p, lut_a, lut_b, dots, rt.i0, rt.i1, j0, j1);
                        }
                    });
}

// The packed kernels where the path selected for this process has one, else
// the block dots; f64 operands are the oracle.
void run_problems(const std::vector<Fp8Problem>& problems) {
  if (problems.empty()) return;
  const Fp8GemmPath path = selected_fp8_gemm_path();
  if (problems[0].a.dtype != DType::f64 && path.kernel != nullptr) return gemm_fp8_blocked(problems, *path.kernel);
  run_dots(problems);
}

// Slice `index` of the leading axis of t: the view of one group.
Tensor group_slice(const Tensor& t, std::int64_t index) {
  Tensor v = t;
  v.offset = t.offset + index * t.strides[0];
  v.shape.erase(0);
  v.strides.erase(0);
  return v;
}

}  // namespace

void fp8_block_dots_portable(const float* a, const float* b, std::int64_t ld, std::int64_t rows, std::int64_t cols,
                             std::int64_t len, float* out, std::int64_t out_stride) {
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t t = 0; t < cols; ++t) {
      const float* ar = a + r * ld;
      const float* bt = b + t * ld;
      float lane[kLanes] = {};
      for (std::int64_t q = 0; q < len; q += kLanes)
        for (int l = 0; l < kLanes; ++l) lane[l] += ar[q + l] * bt[q + l];
      for (int w = kLanes / 2; w >= 1; w /= 2)
        for (int l = 0; l < w; ++l) lane[l] += lane[l + w];
      out[r * out_stride + t] = lane[0];
    }
}

Fp8BlockDots fp8_block_dots() {
  static const Fp8BlockDots chosen = [] {
    const char* forced = std::getenv("HAL_CPU_GEMM_KERNEL");
    if (forced != nullptr && std::string_view(forced) == "portable") return &fp8_block_dots_portable;
    return cpu_features().has_avx2_fma() ? &fp8_block_dots_avx2 : &fp8_block_dots_portable;
  }();
  return chosen;
}

void gemm_fp8(const GemmFp8Call& c) {
  run_problems({Fp8Problem{c.a, c.a_scales, c.b, c.b_scales, c.c, c.epilogue.bias, &c.epilogue, 0, c.a.shape[0]}});
}

void gemm_fp8_grouped(const GemmFp8GroupedCall& c) {
  const std::int64_t groups = c.b.shape[0], m = c.a.shape[0];
  // The offsets are data: all are checked before anything is written.
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(groups + 1));
  for (std::int64_t g = 0; g <= groups; ++g)
    offsets[static_cast<std::size_t>(g)] =
        static_cast<const std::int32_t*>(c.offsets.data)[c.offsets.offset + g * c.offsets.strides[0]];
  for (std::int64_t g = 0; g <= groups; ++g) {
    const std::int64_t o = offsets[static_cast<std::size_t>(g)];
    const std::int64_t prev = g == 0 ? 0 : offsets[static_cast<std::size_t>(g - 1)];
    const bool ok = g == 0 ? o == 0 : (g == groups ? o == m && o >= prev : o >= prev && o <= m);
    if (!ok)
      throw_invalid_argument("gemm_fp8_grouped", "offsets",
                             fmt::format("offsets[0] = 0, non-decreasing, offsets[{}] = {} (a's rows)", groups, m),
                             fmt::format("offsets[{}] = {}{}", g, o, g > 0 ? fmt::format(" after {}", prev) : ""));
  }
  std::vector<Fp8Problem> problems;
  for (std::int64_t g = 0; g < groups; ++g) {
    std::optional<Tensor> bias;
    if (c.epilogue.bias) bias = group_slice(*c.epilogue.bias, g);
    problems.push_back({c.a, c.a_scales, group_slice(c.b, g), group_slice(c.b_scales, g), c.c, bias, &c.epilogue,
                        offsets[static_cast<std::size_t>(g)], offsets[static_cast<std::size_t>(g + 1)]});
  }
  run_problems(problems);
}

}  // namespace hal::cpu_ref
