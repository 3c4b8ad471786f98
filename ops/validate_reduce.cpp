// Validation of the row-wise ops: reductions, softmax and the norms.
#include <fmt/format.h>

#include <cmath>

#include "hal/error.h"
#include "ops/validate_util.h"

namespace hal::ops::detail {

ReduceCall validate_reduce(const ReduceCall& c) {
  if (to_string(c.kind) == "?")
    throw_invalid_argument("reduce", "kind", "sum, mean, max, min or argmax",
                           fmt::format("ReduceKind value {}", static_cast<int>(c.kind)));
  const std::string_view op = to_string(c.kind);
  check_tensor(op, "x", c.x, Role::input);
  check_tensor(op, "y", c.y, Role::output);
  check_same_device(op, {{"x", &c.x}, {"y", &c.y}});
  check_compute_dtype(op, "x", c.x);
  if (c.kind == ReduceKind::argmax)
    check_dtype_equals(op, "y", c.y, DType::i64, "argmax writes indices");
  else
    check_output_dtype(op, c.y, "x", c.x);
  check_rank(op, "x", c.x, 1, kMaxRank);

  ReduceCall out = c;
  out.axis = normalize_axis(c.axis, c.x.rank(), op, "axis");
  Shape want = c.x.shape;
  if (c.keepdim)
    want[out.axis] = 1;
  else
    want.erase(out.axis);
  check_shape_equals(op, "y", c.y, want,
                     fmt::format("x {} reduced over axis {}{}", c.x.shape.str(), out.axis, c.keepdim ? ", keepdim" : ""));
  // max, min and argmax have no identity: an empty axis has no answer.
  const bool needs_element = c.kind == ReduceKind::max || c.kind == ReduceKind::min || c.kind == ReduceKind::argmax;
  if (needs_element && c.x.shape[out.axis] == 0 && c.y.numel() != 0)
    throw_invalid_argument(op, "x", fmt::format("a non-empty axis {} ({} has no identity)", out.axis, op),
                           c.x.shape.str());
  check_no_overlap(op, {"y", &c.y}, {{"x", &c.x}});
  return out;
}

SoftmaxCall validate_softmax(const SoftmaxCall& c) {
  const std::string_view op = c.log ? "log_softmax" : "softmax";
  check_tensor(op, "x", c.x, Role::input);
  check_tensor(op, "y", c.y, Role::output);
  check_same_device(op, {{"x", &c.x}, {"y", &c.y}});
  check_compute_dtype(op, "x", c.x);
  check_output_dtype(op, c.y, "x", c.x);
  // A causal mask needs a [..., Lq, Lk] input.
  check_rank(op, "x", c.x, c.causal ? 2 : 1, kMaxRank);
  check_shape_equals(op, "y", c.y, c.x.shape, "same as x");
  check_finite(op, "scale", c.scale);
  check_no_overlap(op, {"y", &c.y}, {{"x", &c.x}});
  return c;
}

NormCall validate_norm(const NormCall& c) {
  const std::string_view op = c.rms ? "rmsnorm" : "layernorm";
  check_tensor(op, "x", c.x, Role::input);
  check_tensor(op, "weight", c.weight, Role::input);
  check_tensor(op, "y", c.y, Role::output);
  if (c.bias) {
    if (c.rms) throw_invalid_argument(op, "bias", "no bias (rmsnorm has none)", c.bias->str());
    check_tensor(op, "bias", *c.bias, Role::input);
    check_same_device(op, {{"x", &c.x}, {"weight", &c.weight}, {"bias", &*c.bias}, {"y", &c.y}});
  } else {
    check_same_device(op, {{"x", &c.x}, {"weight", &c.weight}, {"y", &c.y}});
  }
  check_compute_dtype(op, "x", c.x);
  check_dtype_equals(op, "weight", c.weight, c.x.dtype, "same as x");
  if (c.bias) check_dtype_equals(op, "bias", *c.bias, c.x.dtype, "same as x");
  check_output_dtype(op, c.y, "x", c.x);
  check_rank(op, "x", c.x, 1, kMaxRank);
  const Shape features{c.x.shape.back()};
  check_shape_equals(op, "weight", c.weight, features, "[D], the last dim of x");
  if (c.bias) check_shape_equals(op, "bias", *c.bias, features, "[D], the last dim of x");
  check_shape_equals(op, "y", c.y, c.x.shape, "same as x");
  if (!(c.eps > 0) || !std::isfinite(c.eps))
    throw_invalid_argument(op, "eps", "a finite value > 0", fmt::format("{}", c.eps));
  if (c.bias)
    check_no_overlap(op, {"y", &c.y}, {{"x", &c.x}, {"weight", &c.weight}, {"bias", &*c.bias}});
  else
    check_no_overlap(op, {"y", &c.y}, {{"x", &c.x}, {"weight", &c.weight}});
  return c;
}

}  // namespace hal::ops::detail
