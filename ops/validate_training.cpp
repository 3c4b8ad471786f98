// Validation of the training ops: every tensor checked like a forward op's
// (layout, device, dtype, shape), every output distinct from every input and
// from the other outputs, and the attributes in range.
#include "ops/validate_training.h"

#include <fmt/format.h>

#include <cmath>
#include <initializer_list>
#include <utility>
#include <vector>

#include "hal/device.h"
#include "hal/error.h"
#include "ops/validate_util.h"

namespace hal::ops::detail {

namespace {

// Layout of each tensor, one device for all, and no output overlapping an
// input or another output.
void check_tensors(std::string_view op, const std::vector<Named>& inputs, const std::vector<Named>& outputs) {
  for (const Named& n : inputs) check_tensor(op, n.name, *n.tensor, Role::input);
  for (const Named& n : outputs) check_tensor(op, n.name, *n.tensor, Role::output);
  const Named& first = inputs.empty() ? outputs.front() : inputs.front();
  auto same_device = [&](const Named& n) {
    if (n.tensor->device != first.tensor->device)
      throw_invalid_argument(op, n.name,
                             fmt::format("a tensor on the same device as '{}' ({})", first.name,
                                         first.tensor->device ? first.tensor->device->name() : "none"),
                             n.tensor->str());
  };
  for (const Named& n : inputs) same_device(n);
  for (const Named& n : outputs) same_device(n);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    for (const Named& in : inputs) check_no_overlap(op, outputs[i], {in});
    for (std::size_t j = 0; j < i; ++j) check_no_overlap(op, outputs[i], {outputs[j]});
  }
}

void check_like(std::string_view op, const Named& t, const Named& ref) {
  check_dtype_equals(op, t.name, *t.tensor, ref.tensor->dtype, fmt::format("same as {}", ref.name));
  check_shape_equals(op, t.name, *t.tensor, ref.tensor->shape, fmt::format("same as {}", ref.name));
}

}  // namespace

SoftmaxBackwardCall validate_softmax_backward(const SoftmaxBackwardCall& c) {
  const std::string_view op = c.log ? "log_softmax_backward" : "softmax_backward";
  const Named y{"y", &c.y}, dy{"dy", &c.dy}, dx{"dx", &c.dx};
  check_tensors(op, {y, dy}, {dx});
  check_compute_dtype(op, "y", c.y);
  check_rank(op, "y", c.y, c.causal ? 2 : 1, kMaxRank);  // a causal mask needs [..., Lq, Lk]
  check_like(op, dy, y);
  check_like(op, dx, y);
  check_finite(op, "scale", c.scale);
  return c;
}

NormBackwardCall validate_norm_backward(const NormBackwardCall& c) {
  const std::string_view op = c.rms ? "rmsnorm_backward" : "layernorm_backward";
  const Named x{"x", &c.x}, w{"weight", &c.weight}, dy{"dy", &c.dy}, dx{"dx", &c.dx}, dw{"dweight", &c.dweight};
  std::vector<Named> outputs = {dx, dw};
  if (c.dbias) {
    if (c.rms) throw_invalid_argument(op, "dbias", "no dbias (rmsnorm has no bias)", c.dbias->str());
    outputs.push_back({"dbias", &*c.dbias});
  }
  check_tensors(op, {x, w, dy}, outputs);
  check_compute_dtype(op, "x", c.x);
  check_rank(op, "x", c.x, 1, kMaxRank);
  const Shape features{c.x.shape.back()};
  check_dtype_equals(op, "weight", c.weight, c.x.dtype, "same as x");
  check_shape_equals(op, "weight", c.weight, features, "[D], the last dim of x");
  check_like(op, dy, x);
  check_like(op, dx, x);
  check_like(op, dw, w);
  if (c.dbias) check_like(op, {"dbias", &*c.dbias}, w);
  if (!(c.eps > 0) || !std::isfinite(c.eps))
    throw_invalid_argument(op, "eps", "a finite value > 0", fmt::format("{}", c.eps));
  return c;
}

UnaryBackwardCall validate_unary_backward(const UnaryBackwardCall& c) {
  const std::string_view op = unary_backward_name(c.kind);
  switch (c.kind) {
    case UnaryKind::gelu:
    case UnaryKind::gelu_tanh:
    case UnaryKind::silu:
    case UnaryKind::relu:
    case UnaryKind::sigmoid:
    case UnaryKind::tanh:
    case UnaryKind::exp: break;
    default:
      throw_invalid_argument(op, "kind", "gelu, gelu_tanh, silu, relu, sigmoid, tanh or exp",
                             std::string(to_string(c.kind)));
  }
  const Named x{"x", &c.x}, dy{"dy", &c.dy}, dx{"dx", &c.dx};
  check_tensors(op, {x, dy}, {dx});
  check_compute_dtype(op, "x", c.x);
  check_like(op, dy, x);
  check_like(op, dx, x);
  return c;
}

SwigluBackwardCall validate_swiglu_backward(const SwigluBackwardCall& c) {
  const std::string_view op = "swiglu_backward";
  const Named gate{"gate", &c.gate}, up{"up", &c.up}, dy{"dy", &c.dy}, dgate{"dgate", &c.dgate}, dup{"dup", &c.dup};
  check_tensors(op, {gate, up, dy}, {dgate, dup});
  check_compute_dtype(op, "gate", c.gate);
  for (const Named& n : {up, dy, dgate, dup}) check_like(op, n, gate);
  return c;
}

CrossEntropyCall validate_cross_entropy(const CrossEntropyCall& c) {
  const std::string_view op = "cross_entropy";
  const Named logits{"logits", &c.logits}, targets{"targets", &c.targets}, loss{"loss", &c.loss};
  std::vector<Named> outputs = {loss};
  if (c.dlogits) outputs.push_back({"dlogits", &*c.dlogits});
  check_tensors(op, {logits, targets}, outputs);
  check_compute_dtype(op, "logits", c.logits);
  check_rank(op, "logits", c.logits, 2, 2);
  if (c.targets.dtype != DType::i32 && c.targets.dtype != DType::i64)
    throw_invalid_argument(op, "targets", "dtype i32 or i64", c.targets.str());
  const std::int64_t n = c.logits.shape[0];
  check_shape_equals(op, "targets", c.targets, Shape{n}, "[N], the rows of logits");
  const DType loss_dtype = c.logits.dtype == DType::f64 ? DType::f64 : DType::f32;
  check_dtype_equals(op, "loss", c.loss, loss_dtype, "f32, f64 with f64 logits");
  check_shape_equals(op, "loss", c.loss, c.reduction == LossReduction::none ? Shape{n} : Shape{},
                     c.reduction == LossReduction::none ? "[N] for reduction none" : "[] for reduction mean or sum");
  if (c.dlogits) check_like(op, {"dlogits", &*c.dlogits}, logits);
  if (!(c.label_smoothing >= 0.0f && c.label_smoothing <= 1.0f))
    throw_invalid_argument(op, "label_smoothing", "a value in [0, 1]", fmt::format("{}", c.label_smoothing));
  return c;
}

EmbeddingBackwardCall validate_embedding_backward(const EmbeddingBackwardCall& c) {
  const std::string_view op = "embedding_backward";
  const Named ids{"ids", &c.ids}, dy{"dy", &c.dy}, dtable{"dtable", &c.dtable};
  check_tensors(op, {ids, dy}, {dtable});
  if (c.ids.dtype != DType::i32 && c.ids.dtype != DType::i64)
    throw_invalid_argument(op, "ids", "dtype i32 or i64", c.ids.str());
  check_compute_dtype(op, "dy", c.dy);
  check_rank(op, "dtable", c.dtable, 2, 2);
  if (c.dtable.dtype != c.dy.dtype && c.dtable.dtype != DType::f32)
    throw_invalid_argument(op, "dtable", fmt::format("dtype f32 or {} (dy's)", dtype_name(c.dy.dtype)), c.dtable.str());
  check_rank(op, "ids", c.ids, 0, kMaxRank - 1);
  Shape want = c.ids.shape;
  want.push_back(c.dtable.shape[1]);
  check_shape_equals(op, "dy", c.dy, want, "ids.shape + [D], D = dtable's columns");
  return c;
}

AdamwCall validate_adamw(const AdamwCall& c) {
  const std::string_view op = "adamw_step";
  const Named param{"param", &c.param}, grad{"grad", &c.grad}, m{"m", &c.m}, v{"v", &c.v};
  std::vector<Named> outputs = {param, m, v};
  if (c.master) outputs.push_back({"master", &*c.master});
  check_tensors(op, {grad}, outputs);
  check_compute_dtype(op, "param", c.param);
  check_like(op, grad, param);
  const DType state = c.m.dtype == DType::f64 ? DType::f64 : DType::f32;
  check_dtype_equals(op, "m", c.m, state, "f32 moments (f64 for the oracle)");
  check_shape_equals(op, "m", c.m, c.param.shape, "same as param");
  check_like(op, v, m);
  if (c.master) {
    check_like(op, {"master", &*c.master}, m);
  } else if (c.param.dtype != state) {
    throw_invalid_argument(op, "param", fmt::format("dtype {} like m, or a master copy for a 16-bit param", dtype_name(state)),
                           c.param.str());
  }
  using Attr = std::pair<const char*, float>;
  for (auto [name, value] : std::initializer_list<Attr>{{"lr", c.lr}, {"eps", c.eps}, {"weight_decay", c.weight_decay}})
    if (!(value >= 0.0f) || !std::isfinite(value))
      throw_invalid_argument(op, name, "a finite value >= 0", fmt::format("{}", value));
  for (auto [name, value] : std::initializer_list<Attr>{{"beta1", c.beta1}, {"beta2", c.beta2}})
    if (!(value >= 0.0f && value < 1.0f)) throw_invalid_argument(op, name, "a value in [0, 1)", fmt::format("{}", value));
  if (c.step < 1) throw_invalid_argument(op, "step", "a step >= 1", std::to_string(c.step));
  return c;
}

GlobalNormCall validate_global_norm(const GlobalNormCall& c) {
  const std::string_view op = "global_norm";
  if (c.xs.empty() || c.xs.size() > kMaxGlobalNormTensors)
    throw_invalid_argument(op, "xs", fmt::format("1 to {} tensors", kMaxGlobalNormTensors), std::to_string(c.xs.size()));
  std::vector<Named> inputs;
  bool all_f64 = true;
  for (std::size_t i = 0; i < c.xs.size(); ++i) {
    inputs.push_back({global_norm_input_name(i), &c.xs[i]});
    check_compute_dtype(op, global_norm_input_name(i), c.xs[i]);
    all_f64 = all_f64 && c.xs[i].dtype == DType::f64;
  }
  check_tensors(op, inputs, {{"y", &c.y}});
  check_dtype_equals(op, "y", c.y, all_f64 ? DType::f64 : DType::f32, "f32, f64 when every x is f64");
  check_shape_equals(op, "y", c.y, Shape{}, "a scalar");
  return c;
}

RopeBackwardCall validate_rope_backward(const RopeBackwardCall& c) {
  // rope's checks with (dy, dx) for (x, y); the messages name this op's arguments.
  const std::string_view op = "rope_backward";
  const Named dy{"dy", &c.dy}, pos{"positions", &c.positions}, dx{"dx", &c.dx};
  std::vector<Named> inputs = {dy, pos};
  if (c.inv_freq) inputs.push_back({"inv_freq", &*c.inv_freq});
  check_tensors(op, inputs, {dx});
  check_compute_dtype(op, "dy", c.dy);
  check_dtype_equals(op, "positions", c.positions, DType::i32, "token positions");
  check_rank(op, "dy", c.dy, 4, 4);
  check_like(op, dx, dy);
  RopeBackwardCall out = c;
  out.rotary_dim = check_rope_options(op, "dy", c.dy, c.positions, c.rotary_dim, c.theta, c.style, c.inv_freq);
  return out;
}

AttentionBackwardCall validate_attention_backward(const AttentionBackwardCall& c) {
  // The forward's checks on q, k, v, y, then the gradients' shapes.
  const std::string_view op = "attention_backward";
  const Named q{"q", &c.q}, k{"k", &c.k}, v{"v", &c.v}, y{"y", &c.y}, dy{"dy", &c.dy}, lse{"lse", &c.lse};
  const Named dq{"dq", &c.dq}, dk{"dk", &c.dk}, dv{"dv", &c.dv};
  check_tensors(op, {q, k, v, y, dy, lse}, {dq, dk, dv});
  AttentionBackwardCall out = c;
  out.scale = check_attention_inputs(op, c.q, c.k, c.v, c.scale);
  check_dtype_equals(op, "y", c.y, c.q.dtype, "same as q");
  check_shape_equals(op, "y", c.y, Shape{c.q.shape[0], c.q.shape[1], c.q.shape[2], c.v.shape[3]},
                     "[batch, sq, hq, dv] (the forward's output)");
  check_like(op, dy, y);
  check_attention_lse(op, c.lse, c.q);
  check_like(op, dq, q);
  check_like(op, dk, k);
  check_like(op, dv, v);
  return out;
}

}  // namespace hal::ops::detail
