// Validation of the scaled-FP8 ops: quantize_fp8, dequantize_fp8, gemm_fp8
// and gemm_fp8_grouped (hal/op_fp8.h).
//
// The fp8 GEMMs accept one more form: every floating tensor f64 (a, b, the
// scales, c, bias). That is the fp64 oracle of the conformance suite, which
// widens the device's fp8 inputs exactly and runs the CPU backend on them.
#include <fmt/format.h>

#include "hal/error.h"
#include "ops/ops.h"
#include "ops/validate_util.h"

namespace hal::ops {

Shape fp8_scales_shape(Fp8Block block, std::int64_t m, std::int64_t k) {
  const auto blocks = [](std::int64_t n) { return (n + kFp8BlockSize - 1) / kFp8BlockSize; };
  switch (block) {
    case Fp8Block::row_1x128: return Shape{m, blocks(k)};
    case Fp8Block::block_128x128: return Shape{blocks(m), blocks(k)};
    case Fp8Block::tensor: return Shape{1};
  }
  throw_invalid_argument("fp8", "block", "1x128, 128x128 or tensor", std::to_string(static_cast<int>(block)));
}

namespace detail {

namespace {

bool is_wide_input(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

void check_block(std::string_view op, Fp8Block b) {
  switch (b) {
    case Fp8Block::row_1x128:
    case Fp8Block::block_128x128:
    case Fp8Block::tensor: return;
  }
  throw_invalid_argument(op, "block", "1x128, 128x128 or tensor", std::to_string(static_cast<int>(b)));
}

void check_fp8(std::string_view op, std::string_view arg, const Tensor& t) {
  if (!is_fp8(t.dtype))
    throw_invalid_argument(op, arg, "an fp8 dtype (f8e4m3, f8e5m2, f8e4m3fnuz or f8e5m2fnuz)", t.str());
}

void check_scales(std::string_view op, std::string_view arg, const Tensor& t, const Shape& want, std::string_view why) {
  check_dtype_equals(op, arg, t, DType::f32, "scales are f32");
  check_shape_equals(op, arg, t, want, why);
}

std::string blocks_of(std::string_view what) { return fmt::format("ceil({}/{})", what, kFp8BlockSize); }

void check_epilogue(std::string_view op, const Fp8Epilogue& e) {
  check_finite(op, "alpha", e.alpha);
  check_finite(op, "beta", e.beta);
  switch (e.activation) {
    case Activation::none:
    case Activation::relu:
    case Activation::gelu_tanh:
    case Activation::silu: return;
  }
  throw_invalid_argument(op, "activation", "none, relu, gelu_tanh or silu",
                         std::to_string(static_cast<int>(e.activation)));
}

// a, b fp8 of one family and c bf16/f32 (bias c's dtype), or all f64 (the
// oracle). Returns whether this is the oracle form.
bool check_gemm_fp8_dtypes(std::string_view op, const Tensor& a, const Tensor& a_scales, const Tensor& b,
                           const Tensor& b_scales, const Tensor& c, const std::optional<Tensor>& bias) {
  if (a.dtype == DType::f64) {
    for (const auto& [name, t] : {std::pair<std::string_view, const Tensor*>{"b", &b},
                                  {"a_scales", &a_scales},
                                  {"b_scales", &b_scales},
                                  {"c", &c}})
      check_dtype_equals(op, name, *t, DType::f64, "a is f64: the fp64 oracle form");
    if (bias) check_dtype_equals(op, "bias", *bias, DType::f64, "a is f64: the fp64 oracle form");
    return true;
  }
  check_fp8(op, "a", a);
  check_fp8(op, "b", b);
  if (is_fp8_fnuz(a.dtype) != is_fp8_fnuz(b.dtype))
    throw_invalid_argument(op, "b",
                           fmt::format("an fp8 dtype of a's family ({}: {})", is_fp8_fnuz(a.dtype) ? "FNUZ" : "OCP",
                                       is_fp8_fnuz(a.dtype) ? "f8e4m3fnuz or f8e5m2fnuz" : "f8e4m3 or f8e5m2"),
                           fmt::format("{} (re-encode it with cast first)", b.str()));
  if (c.dtype != DType::f32 && c.dtype != DType::bf16) throw_invalid_argument(op, "c", "dtype bf16 or f32", c.str());
  if (bias) check_dtype_equals(op, "bias", *bias, c.dtype, "same as c");
  (void)a_scales;
  (void)b_scales;
  return false;
}

}  // namespace

QuantizeFp8Call validate_quantize_fp8(const QuantizeFp8Call& c) {
  const std::string_view op = "quantize_fp8";
  check_tensor(op, "x", c.x, Role::input);
  check_tensor(op, "y", c.y, Role::output);
  check_tensor(op, "scales", c.scales, Role::output);
  check_same_device(op, {{"x", &c.x}, {"y", &c.y}, {"scales", &c.scales}});
  if (!is_wide_input(c.x.dtype)) throw_invalid_argument(op, "x", "dtype f32, f16 or bf16", c.x.str());
  check_fp8(op, "y", c.y);
  check_block(op, c.block);
  check_rank(op, "x", c.x, 2, 2);
  check_shape_equals(op, "y", c.y, c.x.shape, "same as x");
  const std::int64_t m = c.x.shape[0], k = c.x.shape[1];
  check_scales(op, "scales", c.scales, fp8_scales_shape(c.block, m, k),
               fmt::format("the {} scales of x {}", to_string(c.block), c.x.shape.str()));
  check_no_overlap(op, {"y", &c.y}, {{"x", &c.x}, {"scales", &c.scales}});
  check_no_overlap(op, {"scales", &c.scales}, {{"x", &c.x}});
  return c;
}

DequantizeFp8Call validate_dequantize_fp8(const DequantizeFp8Call& c) {
  const std::string_view op = "dequantize_fp8";
  check_tensor(op, "y", c.y, Role::input);
  check_tensor(op, "scales", c.scales, Role::input);
  check_tensor(op, "x", c.x, Role::output);
  check_same_device(op, {{"y", &c.y}, {"scales", &c.scales}, {"x", &c.x}});
  check_fp8(op, "y", c.y);
  if (!is_wide_input(c.x.dtype)) throw_invalid_argument(op, "x", "dtype f32, f16 or bf16", c.x.str());
  check_block(op, c.block);
  check_rank(op, "y", c.y, 2, 2);
  check_shape_equals(op, "x", c.x, c.y.shape, "same as y");
  check_scales(op, "scales", c.scales, fp8_scales_shape(c.block, c.y.shape[0], c.y.shape[1]),
               fmt::format("the {} scales of y {}", to_string(c.block), c.y.shape.str()));
  check_no_overlap(op, {"x", &c.x}, {{"y", &c.y}, {"scales", &c.scales}});
  return c;
}

GemmFp8Call validate_gemm_fp8(const GemmFp8Call& c) {
  const std::string_view op = "gemm_fp8";
  const std::optional<Tensor>& bias = c.epilogue.bias;
  check_tensor(op, "a", c.a, Role::input);
  check_tensor(op, "a_scales", c.a_scales, Role::input);
  check_tensor(op, "b", c.b, Role::input);
  check_tensor(op, "b_scales", c.b_scales, Role::input);
  check_tensor(op, "c", c.c, Role::output);
  if (bias) check_tensor(op, "bias", *bias, Role::input);
  const Tensor& bias_or_c = bias ? *bias : c.c;
  check_same_device(op, {{"a", &c.a}, {"a_scales", &c.a_scales}, {"b", &c.b}, {"b_scales", &c.b_scales},
                         {"c", &c.c}, {"bias", &bias_or_c}});
  const bool oracle = check_gemm_fp8_dtypes(op, c.a, c.a_scales, c.b, c.b_scales, c.c, bias);
  check_rank(op, "a", c.a, 2, 2);
  check_rank(op, "b", c.b, 2, 2);
  const std::int64_t m = c.a.shape[0], k = c.a.shape[1], n = c.b.shape[0];
  if (c.b.shape[1] != k)
    throw_invalid_argument(op, "b", fmt::format("[N, K] with K = {} (a's columns)", k), c.b.shape.str());
  if (!oracle) {
    check_scales(op, "a_scales", c.a_scales, Shape{m, (k + kFp8BlockSize - 1) / kFp8BlockSize},
                 fmt::format("[M, {}]", blocks_of("K")));
    check_scales(op, "b_scales", c.b_scales,
                 Shape{(n + kFp8BlockSize - 1) / kFp8BlockSize, (k + kFp8BlockSize - 1) / kFp8BlockSize},
                 fmt::format("[{}, {}]", blocks_of("N"), blocks_of("K")));
  } else {
    check_shape_equals(op, "a_scales", c.a_scales, Shape{m, (k + kFp8BlockSize - 1) / kFp8BlockSize}, "[M, ceil(K/128)]");
    check_shape_equals(op, "b_scales", c.b_scales,
                       Shape{(n + kFp8BlockSize - 1) / kFp8BlockSize, (k + kFp8BlockSize - 1) / kFp8BlockSize},
                       "[ceil(N/128), ceil(K/128)]");
  }
  check_shape_equals(op, "c", c.c, Shape{m, n}, fmt::format("[M, N] from a {} and b {}", c.a.shape.str(), c.b.shape.str()));
  if (bias) check_shape_equals(op, "bias", *bias, Shape{n}, "[N]");
  check_epilogue(op, c.epilogue);
  if (bias)
    check_no_overlap(op, {"c", &c.c},
                     {{"a", &c.a}, {"a_scales", &c.a_scales}, {"b", &c.b}, {"b_scales", &c.b_scales}, {"bias", &*bias}});
  else
    check_no_overlap(op, {"c", &c.c}, {{"a", &c.a}, {"a_scales", &c.a_scales}, {"b", &c.b}, {"b_scales", &c.b_scales}});
  return c;
}

GemmFp8GroupedCall validate_gemm_fp8_grouped(const GemmFp8GroupedCall& c) {
  const std::string_view op = "gemm_fp8_grouped";
  const std::optional<Tensor>& bias = c.epilogue.bias;
  check_tensor(op, "a", c.a, Role::input);
  check_tensor(op, "a_scales", c.a_scales, Role::input);
  check_tensor(op, "b", c.b, Role::input);
  check_tensor(op, "b_scales", c.b_scales, Role::input);
  check_tensor(op, "offsets", c.offsets, Role::input);
  check_tensor(op, "c", c.c, Role::output);
  if (bias) check_tensor(op, "bias", *bias, Role::input);
  const Tensor& bias_or_c = bias ? *bias : c.c;
  check_same_device(op, {{"a", &c.a}, {"a_scales", &c.a_scales}, {"b", &c.b}, {"b_scales", &c.b_scales},
                         {"offsets", &c.offsets}, {"c", &c.c}, {"bias", &bias_or_c}});
  check_gemm_fp8_dtypes(op, c.a, c.a_scales, c.b, c.b_scales, c.c, bias);
  if (c.a.dtype != DType::f64) {
    check_dtype_equals(op, "a_scales", c.a_scales, DType::f32, "scales are f32");
    check_dtype_equals(op, "b_scales", c.b_scales, DType::f32, "scales are f32");
  }
  check_dtype_equals(op, "offsets", c.offsets, DType::i32, "group offsets are i32");
  check_rank(op, "a", c.a, 2, 2);
  check_rank(op, "b", c.b, 3, 3);
  check_rank(op, "offsets", c.offsets, 1, 1);
  const std::int64_t m = c.a.shape[0], k = c.a.shape[1], g = c.b.shape[0], n = c.b.shape[1];
  const std::int64_t kb = (k + kFp8BlockSize - 1) / kFp8BlockSize, nb = (n + kFp8BlockSize - 1) / kFp8BlockSize;
  if (c.b.shape[2] != k)
    throw_invalid_argument(op, "b", fmt::format("[G, N, K] with K = {} (a's columns)", k), c.b.shape.str());
  check_shape_equals(op, "a_scales", c.a_scales, Shape{m, kb}, fmt::format("[M, {}]", blocks_of("K")));
  check_shape_equals(op, "b_scales", c.b_scales, Shape{g, nb, kb}, fmt::format("[G, {}, {}]", blocks_of("N"), blocks_of("K")));
  check_shape_equals(op, "offsets", c.offsets, Shape{g + 1}, "[G + 1] (group g owns rows offsets[g] .. offsets[g+1])");
  check_shape_equals(op, "c", c.c, Shape{m, n}, fmt::format("[M, N] from a {} and b {}", c.a.shape.str(), c.b.shape.str()));
  if (bias) check_shape_equals(op, "bias", *bias, Shape{g, n}, "[G, N]");
  check_epilogue(op, c.epilogue);
  if (bias)
    check_no_overlap(op, {"c", &c.c},
                     {{"a", &c.a}, {"a_scales", &c.a_scales}, {"b", &c.b}, {"b_scales", &c.b_scales},
                      {"offsets", &c.offsets}, {"bias", &*bias}});
  else
    check_no_overlap(op, {"c", &c.c},
                     {{"a", &c.a}, {"a_scales", &c.a_scales}, {"b", &c.b}, {"b_scales", &c.b_scales},
                      {"offsets", &c.offsets}});
  return c;
}

}  // namespace detail
}  // namespace hal::ops
