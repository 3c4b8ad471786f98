// Validation of the element-wise ops: binary (with broadcasting), unary,
// swiglu, cast, copy and fill_random.
#include <fmt/format.h>

#include <cmath>

#include "hal/error.h"
#include "ops/validate_util.h"

namespace hal::ops::detail {

namespace {

void check_same_dtype(std::string_view op, std::string_view arg, const Tensor& t, std::string_view ref_name,
                      const Tensor& ref) {
  check_dtype_equals(op, arg, t, ref.dtype, fmt::format("same as {}", ref_name));
}

}  // namespace

BinaryCall validate_binary(const BinaryCall& c) {
  // An out-of-range kind would reach the kernels' tables ("?" is to_string's
  // answer for a value outside the enum).
  if (to_string(c.kind) == "?")
    throw_invalid_argument("binary", "kind", "add, sub, mul, div, maximum or minimum",
                           fmt::format("BinaryKind value {}", static_cast<int>(c.kind)));
  const std::string_view op = to_string(c.kind);
  check_tensor(op, "a", c.a, Role::input);
  check_tensor(op, "b", c.b, Role::input);
  check_tensor(op, "y", c.y, Role::output);
  check_same_device(op, {{"a", &c.a}, {"b", &c.b}, {"y", &c.y}});
  check_compute_dtype(op, "a", c.a);
  check_same_dtype(op, "b", c.b, "a", c.a);
  check_output_dtype(op, c.y, "a", c.a);
  const Shape out = broadcast_shapes(c.a.shape, c.b.shape, op);
  check_shape_equals(op, "y", c.y, out, fmt::format("broadcast of a {} and b {}", c.a.shape.str(), c.b.shape.str()));
  check_no_overlap(op, {"y", &c.y}, {{"a", &c.a}, {"b", &c.b}});
  return c;
}

UnaryCall validate_unary(const UnaryCall& c) {
  if (to_string(c.kind) == "?")
    throw_invalid_argument("unary", "kind",
                           "neg, abs, exp, log, sqrt, rsqrt, tanh, sigmoid, relu, gelu, gelu_tanh or silu",
                           fmt::format("UnaryKind value {}", static_cast<int>(c.kind)));
  const std::string_view op = to_string(c.kind);
  check_tensor(op, "x", c.x, Role::input);
  check_tensor(op, "y", c.y, Role::output);
  check_same_device(op, {{"x", &c.x}, {"y", &c.y}});
  check_compute_dtype(op, "x", c.x);
  check_output_dtype(op, c.y, "x", c.x);
  check_shape_equals(op, "y", c.y, c.x.shape, "same as x");
  check_no_overlap(op, {"y", &c.y}, {{"x", &c.x}});
  return c;
}

SwigluCall validate_swiglu(const SwigluCall& c) {
  const std::string_view op = "swiglu";
  check_tensor(op, "gate", c.gate, Role::input);
  check_tensor(op, "up", c.up, Role::input);
  check_tensor(op, "y", c.y, Role::output);
  check_same_device(op, {{"gate", &c.gate}, {"up", &c.up}, {"y", &c.y}});
  check_compute_dtype(op, "gate", c.gate);
  check_same_dtype(op, "up", c.up, "gate", c.gate);
  check_output_dtype(op, c.y, "gate", c.gate);
  check_shape_equals(op, "up", c.up, c.gate.shape, "same as gate");
  check_shape_equals(op, "y", c.y, c.gate.shape, "same as gate");
  check_no_overlap(op, {"y", &c.y}, {{"gate", &c.gate}, {"up", &c.up}});
  return c;
}

CastCall validate_cast(const CastCall& c) {
  const std::string_view op = "cast";
  check_tensor(op, "x", c.x, Role::input);
  check_tensor(op, "y", c.y, Role::output);
  check_same_device(op, {{"x", &c.x}, {"y", &c.y}});
  if (!is_floating(c.x.dtype))
    throw_invalid_argument(op, "x", "a floating dtype (f32, f16, bf16, f8e4m3, f8e5m2 or f64)", c.x.str());
  if (!is_floating(c.y.dtype))
    throw_invalid_argument(op, "y", "a floating dtype (f32, f16, bf16, f8e4m3, f8e5m2 or f64)", c.y.str());
  check_shape_equals(op, "y", c.y, c.x.shape, "same as x");
  check_finite(op, "scale", c.scale);
  check_no_overlap(op, {"y", &c.y}, {{"x", &c.x}});
  return c;
}

CopyCall validate_copy(const CopyCall& c) {
  const std::string_view op = "copy";
  check_tensor(op, "x", c.x, Role::input);
  check_tensor(op, "y", c.y, Role::output);
  check_same_device(op, {{"x", &c.x}, {"y", &c.y}});
  check_same_dtype(op, "y", c.y, "x", c.x);
  check_shape_equals(op, "y", c.y, c.x.shape, "same as x");
  check_no_overlap(op, {"y", &c.y}, {{"x", &c.x}});
  return c;
}

FillRandomCall validate_fill_random(const FillRandomCall& c) {
  const std::string_view op = "fill_random";
  check_tensor(op, "y", c.y, Role::output);
  if (!is_floating(c.y.dtype))
    throw_invalid_argument(op, "y", "a floating dtype (f32, f16, bf16, f8e4m3, f8e5m2 or f64)", c.y.str());
  check_finite(op, "a", c.a);
  check_finite(op, "b", c.b);
  switch (c.distribution) {
    case RandomDistribution::uniform:
      if (!(c.a < c.b)) throw_invalid_argument(op, "b", fmt::format("b > a = {} for uniform [a, b)", c.a), fmt::format("{}", c.b));
      // The value is a + (b - a) * u in float (hal/philox.h): a width beyond
      // float's range would give +inf, outside [a, b).
      if (!std::isfinite(c.b - c.a))
        throw_invalid_argument(op, "b", fmt::format("b - a finite in f32 (at most {:g}) for uniform [a, b)", 0x1.fffffep127),
                               fmt::format("a = {:g}, b = {:g}", c.a, c.b));
      break;
    case RandomDistribution::normal:
      if (!(c.b >= 0)) throw_invalid_argument(op, "b", "a standard deviation b >= 0", fmt::format("{}", c.b));
      break;
    default:
      throw_invalid_argument(op, "distribution", "uniform or normal",
                             std::to_string(static_cast<int>(c.distribution)));
  }
  return c;
}

}  // namespace hal::ops::detail
