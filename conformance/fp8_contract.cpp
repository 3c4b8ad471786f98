// The scaled-FP8 contract: exact references of quantize_fp8 and
// dequantize_fp8, and the bound of the fp8 GEMMs (docs/accuracy.md derives it).
#include "conformance/fp8_contract.h"

#include <algorithm>
#include <cmath>

#include "conformance/contract.h"
#include "conformance/tensor_util.h"

namespace hal::conformance {

namespace {

std::int64_t at(const Tensor& t, std::int64_t i, std::int64_t j) { return t.offset + i * t.strides[0] + j * t.strides[1]; }

// Which scale covers element (i, j), as (row, column) of the scale grid.
struct ScaleGrid {
  Fp8Block block;
  std::int64_t rows, cols;
  std::int64_t row_of(std::int64_t i) const { return block == Fp8Block::row_1x128 ? i : block == Fp8Block::tensor ? 0 : i / 128; }
  std::int64_t col_of(std::int64_t j) const { return block == Fp8Block::tensor ? 0 : j / 128; }
};
ScaleGrid grid_of(Fp8Block block, std::int64_t m, std::int64_t k) {
  const std::int64_t kb = (k + 127) / 128;
  if (block == Fp8Block::row_1x128) return {block, m, kb};
  if (block == Fp8Block::block_128x128) return {block, (m + 127) / 128, kb};
  return {block, 1, 1};
}
// Storage index of scale (r, q): [1] for a tensor scale, else rank 2.
std::int64_t scale_index(const Tensor& s, const ScaleGrid& g, std::int64_t r, std::int64_t q) {
  return g.block == Fp8Block::tensor ? s.offset : at(s, r, q);
}

// The stored value of v rounded once to dtype t (exact host conversion).
double rounded(DType t, float v) {
  std::uint64_t tmp = 0;
  store_element_f32(&tmp, t, 0, v);
  return load_element(&tmp, t, 0);
}

}  // namespace

std::vector<Reference> quantize_fp8_references(const QuantizeFp8Call& c) {
  const std::int64_t m = c.x.shape[0], k = c.x.shape[1];
  const ScaleGrid g = grid_of(c.block, m, k);
  const float fmax = static_cast<float>(dtype_max_finite(c.y.dtype));
  // amax over the finite elements of each block, then the scale in fp32.
  std::vector<float> scale(static_cast<std::size_t>(g.rows * g.cols), 0.0f);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < k; ++j) {
      const float v = std::fabs(load_element_f32(c.x.data, c.x.dtype, at(c.x, i, j)));
      float& s = scale[static_cast<std::size_t>(g.row_of(i) * g.cols + g.col_of(j))];
      if (std::isfinite(v)) s = std::max(s, v);
    }
  for (float& s : scale) {
    s = s / fmax;
    if (!(s >= 0x1p-126f)) s = 0x1p-126f;
    if (c.pow2_scales) {
      float p = 0x1p-126f;
      while (p < s) p *= 2.0f;
      s = p;
    }
  }
  Reference y, scales;
  y.out_dtype = c.y.dtype;
  y.zero_sign = true;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < k; ++j) {
      const float s = scale[static_cast<std::size_t>(g.row_of(i) * g.cols + g.col_of(j))];
      y.values.push_back(rounded(c.y.dtype, load_element_f32(c.x.data, c.x.dtype, at(c.x, i, j)) / s));
    }
  y.bounds.assign(y.values.size(), 0.0);
  scales.out_dtype = DType::f32;
  scales.zero_sign = true;
  scales.values.assign(scale.begin(), scale.end());
  scales.bounds.assign(scales.values.size(), 0.0);
  return {std::move(y), std::move(scales)};
}

Reference dequantize_fp8_reference(const DequantizeFp8Call& c) {
  const std::int64_t m = c.y.shape[0], k = c.y.shape[1];
  const ScaleGrid g = grid_of(c.block, m, k);
  Reference r;
  r.out_dtype = c.x.dtype;
  r.zero_sign = true;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < k; ++j) {
      const float s = load_element_f32(c.scales.data, DType::f32, scale_index(c.scales, g, g.row_of(i), g.col_of(j)));
      r.values.push_back(rounded(c.x.dtype, load_element_f32(c.y.data, c.y.dtype, at(c.y, i, j)) * s));
    }
  r.bounds.assign(r.values.size(), 0.0);
  return r;
}

namespace contract {

namespace {

// One output row's operands: b, its scales and bias as views of one group.
struct RowOperands {
  Tensor b, b_scales;
  const Tensor* bias;
};

Tensor slice(const Tensor& t, std::int64_t index) {
  Tensor v = t;
  v.offset = t.offset + index * t.strides[0];
  v.shape.erase(0);
  v.strides.erase(0);
  return v;
}

// The bound of c[i, j] (docs/accuracy.md, "Scaled FP8"): a product a*b is
// exact; it goes through at most min(K, 128) - 1 additions of its block sum
// at u_blk, then the scale product, the product with the block sum, the add
// into the accumulator (nb - 1 at most) and alpha, beta*c, bias: nb + 4
// fp32 roundings, counted as nb + 5. A scale product below FLT_MIN rounds
// absolutely (2^-150 times the block sum).
template <class OperandsOf>
std::vector<double> bounds(const Tensor& a, const Tensor& a_scales, const Tensor& c, const Fp8Epilogue& e,
                           OperandsOf&& operands_of, std::span<const double> ref, DType out_dtype,
                           const Fp8BlockSumModel& block_sums) {
  const std::int64_t m = a.shape[0], k = a.shape[1], n = c.shape[1];
  const std::int64_t nb = (k + 127) / 128, lb = std::min<std::int64_t>(k, 128);
  const double g_blk = block_sums.block_gamma(lb);
  const double g32 = gamma(static_cast<double>(nb + 5));
  const double g = g_blk + g32 + g_blk * g32;
  const double alpha = e.alpha, beta = e.beta;
  const double u = output_roundoff(out_dtype), eta = output_underflow(out_dtype);
  const auto* ad = static_cast<const double*>(a.data);
  const auto* sad = static_cast<const double*>(a_scales.data);
  const auto* cd = static_cast<const double*>(c.data);
  std::vector<double> out(ref.size());
  for (std::int64_t i = 0; i < m; ++i) {
    const RowOperands op = operands_of(i);
    const auto* bd = static_cast<const double*>(op.b.data);
    const auto* sbd = static_cast<const double*>(op.b_scales.data);
    for (std::int64_t j = 0; j < n; ++j) {
      double t = 0, p = 0, z = 0;
      for (std::int64_t kb = 0; kb < nb; ++kb) {
        double abs_sum = 0, sum = 0;
        for (std::int64_t q = kb * 128; q < std::min(k, (kb + 1) * 128); ++q) {
          const double prod = ad[at(a, i, q)] * bd[at(op.b, j, q)];
          abs_sum += std::fabs(prod);
          sum += prod;
        }
        const double s = sad[at(a_scales, i, kb)] * sbd[at(op.b_scales, j / 128, kb)];
        t += std::fabs(s) * abs_sum;
        p += abs_sum;
        z += s * sum;
      }
      double big_s = std::fabs(alpha) * t;
      z *= alpha;
      if (beta != 0) {
        const double c0 = cd[at(c, i, j)];
        big_s += std::fabs(beta * c0);
        z += beta * c0;
      }
      if (op.bias) {
        const double bv = static_cast<const double*>(op.bias->data)[op.bias->offset + j * op.bias->strides[0]];
        big_s += std::fabs(bv);
        z += bv;
      }
      double err = g * big_s + (std::fabs(alpha) * p + static_cast<double>(nb + 5)) * 0x1p-150;
      const std::size_t o = static_cast<std::size_t>(i * n + j);
      const double y = ref[o];
      if (e.activation != Activation::none && e.activation != Activation::relu)
        err = kActivationLipschitz * err + kTranscendentalUlps * kEps32 * (std::fabs(y) + std::fabs(z)) + kFltMin;
      out[o] = kSafety * (err * (1.0 + u) + u * std::fabs(y) + eta);
    }
  }
  return out;
}

}  // namespace

std::vector<double> gemm_fp8_bounds(const GemmFp8Call& c, std::span<const double> ref, DType out_dtype,
                                    const Fp8BlockSumModel& block_sums) {
  const RowOperands ops{c.b, c.b_scales, c.epilogue.bias ? &*c.epilogue.bias : nullptr};
  return bounds(c.a, c.a_scales, c.c, c.epilogue, [&](std::int64_t) { return ops; }, ref, out_dtype, block_sums);
}

std::vector<double> gemm_fp8_grouped_bounds(const GemmFp8GroupedCall& c, std::span<const double> ref,
                                            DType out_dtype, const Fp8BlockSumModel& block_sums) {
  const std::int64_t groups = c.b.shape[0];
  std::vector<Tensor> biases;
  if (c.epilogue.bias)
    for (std::int64_t g = 0; g < groups; ++g) biases.push_back(slice(*c.epilogue.bias, g));
  const auto* off = static_cast<const std::int32_t*>(c.offsets.data);
  const auto group_of = [&](std::int64_t i) {
    std::int64_t g = 0;
    while (g + 1 < groups && off[c.offsets.offset + (g + 1) * c.offsets.strides[0]] <= i) ++g;
    return g;
  };
  return bounds(
      c.a, c.a_scales, c.c, c.epilogue,
      [&](std::int64_t i) {
        const std::int64_t g = group_of(i);
        return RowOperands{slice(c.b, g), slice(c.b_scales, g), biases.empty() ? nullptr : &biases[static_cast<std::size_t>(g)]};
      },
      ref, out_dtype, block_sums);
}

}  // namespace contract

}  // namespace hal::conformance
