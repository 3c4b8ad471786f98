// Validation of gemm: C = act(alpha * op(A) @ op(B) + beta * C + bias).
#include <fmt/format.h>

#include "hal/error.h"
#include "ops/validate_util.h"

namespace hal::ops::detail {

namespace {

bool is_gemm_dtype(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

// The batch of a rank-3 operand, 1 for a rank-2 one.
std::int64_t batch_of(const Tensor& t) { return t.rank() == 3 ? t.shape[0] : 1; }
std::int64_t rows_of(const Tensor& t) { return t.shape[t.rank() - 2]; }
std::int64_t cols_of(const Tensor& t) { return t.shape[t.rank() - 1]; }

}  // namespace

GemmCall validate_gemm(const GemmCall& c) {
  const std::string_view op = "gemm";
  check_tensor(op, "a", c.a, Role::input);
  check_tensor(op, "b", c.b, Role::input);
  check_tensor(op, "c", c.c, Role::output);
  if (c.bias) {
    check_tensor(op, "bias", *c.bias, Role::input);
    check_same_device(op, {{"a", &c.a}, {"b", &c.b}, {"c", &c.c}, {"bias", &*c.bias}});
  } else {
    check_same_device(op, {{"a", &c.a}, {"b", &c.b}, {"c", &c.c}});
  }

  // A and B share one dtype: f32/f16/bf16, or f64 for the fp64 oracle.
  const bool f64_call = c.a.dtype == DType::f64;
  if (!f64_call && !is_gemm_dtype(c.a.dtype)) throw_invalid_argument(op, "a", "dtype f32, f16, bf16 or f64", c.a.str());
  if (c.b.dtype != c.a.dtype)
    throw_invalid_argument(op, "b", fmt::format("dtype {} (same as a)", dtype_name(c.a.dtype)), c.b.str());
  if (f64_call ? c.c.dtype != DType::f64 : !is_gemm_dtype(c.c.dtype))
    throw_invalid_argument(op, "c", f64_call ? "dtype f64 (a and b are f64)" : "dtype f32, f16 or bf16", c.c.str());
  if (c.bias) check_dtype_equals(op, "bias", *c.bias, c.c.dtype, "same as c");

  check_rank(op, "a", c.a, 2, 3);
  check_rank(op, "b", c.b, 2, 3);
  check_rank(op, "c", c.c, 2, 3);

  const std::int64_t m = c.trans_a ? cols_of(c.a) : rows_of(c.a);
  const std::int64_t k = c.trans_a ? rows_of(c.a) : cols_of(c.a);
  const std::int64_t kb = c.trans_b ? cols_of(c.b) : rows_of(c.b);
  const std::int64_t n = c.trans_b ? rows_of(c.b) : cols_of(c.b);
  if (kb != k)
    throw_invalid_argument(op, "b",
                           fmt::format("{} of {} rows (K of a{}){}", c.trans_b ? "[N, K]" : "[K, N]", k,
                                       c.trans_a ? " transposed" : "", c.trans_b ? ", trans_b" : ""),
                           c.b.shape.str());
  const std::int64_t batch = batch_of(c.c);
  if (batch_of(c.a) != batch && batch_of(c.a) != 1)
    throw_invalid_argument(op, "a", fmt::format("batch {} (c's) or 1", batch), c.a.shape.str());
  if (batch_of(c.b) != batch && batch_of(c.b) != 1)
    throw_invalid_argument(op, "b", fmt::format("batch {} (c's) or 1", batch), c.b.shape.str());
  Shape want_c = c.c.rank() == 3 ? Shape{batch, m, n} : Shape{m, n};
  check_shape_equals(op, "c", c.c, want_c, fmt::format("[M, N] from a {} and b {}", c.a.shape.str(), c.b.shape.str()));
  if (c.bias) {
    check_shape_equals(op, "bias", *c.bias, Shape{n}, "[N]");
  }

  check_finite(op, "alpha", c.alpha);
  check_finite(op, "beta", c.beta);
  switch (c.activation) {
    case Activation::none:
    case Activation::relu:
    case Activation::gelu_tanh:
    case Activation::silu: break;
    default:
      throw_invalid_argument(op, "activation", "none, relu, gelu_tanh or silu",
                             std::to_string(static_cast<int>(c.activation)));
  }

  // C is read (beta) and written; A, B and bias must not share its memory.
  if (c.bias)
    check_no_overlap(op, {"c", &c.c}, {{"a", &c.a}, {"b", &c.b}, {"bias", &*c.bias}});
  else
    check_no_overlap(op, {"c", &c.c}, {{"a", &c.a}, {"b", &c.b}});
  return c;
}

}  // namespace hal::ops::detail
