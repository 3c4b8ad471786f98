// quantize_fp8 and dequantize_fp8 (hal/op_fp8.h) on the CPU.
//
// Each block is computed by one task from its own elements (the amax is a
// max, exact in any order), so the result is the same for any thread count.
// The arithmetic is the contract's, one fp32 operation each: the scale is
// amax / max_finite, y is x / scale (divisions, not a multiply by a
// reciprocal, so that any backend can match the bits) and x is y * scale.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cmath>

#include "cpu_ref/kernels.h"
#include "hal/dtype.h"

namespace hal::cpu_ref {

namespace {

// Element (i, j) of a rank-2 view, as an element index for load/store_element.
std::int64_t at(const Tensor& t, std::int64_t i, std::int64_t j) { return t.offset + i * t.strides[0] + j * t.strides[1]; }

// The element index of scale number (bi, bk) of `block` in `scales`.
std::int64_t scale_at(const Tensor& scales, Fp8Block block, std::int64_t bi, std::int64_t bk) {
  if (block == Fp8Block::tensor) return scales.offset;
  return scales.offset + bi * scales.strides[0] + bk * scales.strides[1];
}

// The rows and columns scale (bi, bk) covers.
struct BlockRange {
  std::int64_t r0, r1, c0, c1;
};
BlockRange block_range(Fp8Block block, std::int64_t bi, std::int64_t bk, std::int64_t m, std::int64_t k) {
  switch (block) {
    case Fp8Block::row_1x128: return {bi, bi + 1, bk * kFp8BlockSize, std::min(k, (bk + 1) * kFp8BlockSize)};
    case Fp8Block::block_128x128:
      return {bi * kFp8BlockSize, std::min(m, (bi + 1) * kFp8BlockSize), bk * kFp8BlockSize,
              std::min(k, (bk + 1) * kFp8BlockSize)};
    case Fp8Block::tensor: break;
  }
  return {0, m, 0, k};
}

struct BlockGrid {
  std::int64_t rows, cols;  // number of scales along M and K
};
BlockGrid block_grid(Fp8Block block, std::int64_t m, std::int64_t k) {
  const auto blocks = [](std::int64_t n) { return (n + kFp8BlockSize - 1) / kFp8BlockSize; };
  switch (block) {
    case Fp8Block::row_1x128: return {m, blocks(k)};
    case Fp8Block::block_128x128: return {blocks(m), blocks(k)};
    case Fp8Block::tensor: break;
  }
  return {1, 1};
}

// max |x| over the finite elements of rows [r0, r1) x columns [c0, c1).
float finite_amax(const Tensor& x, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
  float amax = 0.0f;
  for (std::int64_t i = r0; i < r1; ++i)
    for (std::int64_t j = c0; j < c1; ++j) {
      const float v = std::fabs(load_element_f32(x.data, x.dtype, at(x, i, j)));
      if (v <= 3.40282347e38f && v > amax) amax = v;  // false for NaN and Inf
    }
  return amax;
}

float fp8_block_scale(float amax, DType format, bool pow2) {
  const float fmax = static_cast<float>(dtype_max_finite(format));
  float scale = amax / fmax;
  if (!(scale >= 0x1p-126f)) scale = 0x1p-126f;  // an all-zero (or tiny) block: a defined, normal scale
  if (pow2) {
    int e = 0;
    const float m = std::frexp(scale, &e);  // scale = m * 2^e, m in [0.5, 1)
    scale = std::ldexp(1.0f, m == 0.5f ? e - 1 : e);
  }
  return scale;
}

}  // namespace

void quantize_fp8(const QuantizeFp8Call& c) {
  const std::int64_t m = c.x.shape[0], k = c.x.shape[1];
  const DType format = c.y.dtype;
  const auto quantize_range = [&](const BlockRange& r, float scale) {
    for (std::int64_t i = r.r0; i < r.r1; ++i)
      for (std::int64_t j = r.c0; j < r.c1; ++j)
        store_element_f32(c.y.data, format, at(c.y, i, j), load_element_f32(c.x.data, c.x.dtype, at(c.x, i, j)) / scale);
  };
  if (c.block == Fp8Block::tensor) {
    // One scale: the amax is reduced over row ranges (a max: exact, so any
    // split gives the same value), then rows are quantised in parallel.
    const float amax = tbb::parallel_reduce(
        tbb::blocked_range<std::int64_t>(0, m), 0.0f,
        [&](const tbb::blocked_range<std::int64_t>& rows, float acc) {
          return std::max(acc, finite_amax(c.x, rows.begin(), rows.end(), 0, k));
        },
        [](float a, float b) { return std::max(a, b); });
    const float scale = fp8_block_scale(amax, format, c.pow2_scales);
    store_element_f32(c.scales.data, DType::f32, scale_at(c.scales, c.block, 0, 0), scale);
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, m), [&](const tbb::blocked_range<std::int64_t>& rows) {
      quantize_range({rows.begin(), rows.end(), 0, k}, scale);
    });
    return;
  }
  const BlockGrid g = block_grid(c.block, m, k);
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, g.rows * g.cols), [&](const tbb::blocked_range<std::int64_t>& r) {
    for (std::int64_t b = r.begin(); b != r.end(); ++b) {
      const std::int64_t bi = b / g.cols, bk = b % g.cols;
      const BlockRange br = block_range(c.block, bi, bk, m, k);
      const float scale = fp8_block_scale(finite_amax(c.x, br.r0, br.r1, br.c0, br.c1), format, c.pow2_scales);
      store_element_f32(c.scales.data, DType::f32, scale_at(c.scales, c.block, bi, bk), scale);
      quantize_range(br, scale);
    }
  });
}

void dequantize_fp8(const DequantizeFp8Call& c) {
  const std::int64_t m = c.y.shape[0], k = c.y.shape[1];
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, m), [&](const tbb::blocked_range<std::int64_t>& rows) {
    for (std::int64_t i = rows.begin(); i != rows.end(); ++i)
      for (std::int64_t j = 0; j < k; ++j) {
        const std::int64_t bi = c.block == Fp8Block::row_1x128 ? i : i / kFp8BlockSize;
        const float scale = load_element_f32(c.scales.data, DType::f32, scale_at(c.scales, c.block, bi, j / kFp8BlockSize));
        store_element_f32(c.x.data, c.x.dtype, at(c.x, i, j), load_element_f32(c.y.data, c.y.dtype, at(c.y, i, j)) * scale);
      }
  });
}

}  // namespace hal::cpu_ref
