// `hal run` for the training ops: inputs and outputs by the argument names of
// ops/training.h; every output's shape follows from the inputs.
#include "tools/run_ops_training.h"

#include <fmt/format.h>

#include "hal/error.h"
#include "tools/cli.h"

namespace hal::tools {

namespace {

constexpr UnaryKind kBackwardKinds[] = {UnaryKind::gelu,    UnaryKind::gelu_tanh, UnaryKind::silu, UnaryKind::relu,
                                        UnaryKind::sigmoid, UnaryKind::tanh,      UnaryKind::exp};

const HostArray& input(const std::map<std::string, HostArray>& inputs, const char* name) { return inputs.at(name); }

LossReduction parse_reduction(const Attrs& attrs) {
  const std::string v = attrs.get_string("reduction", "mean");
  for (LossReduction r : {LossReduction::none, LossReduction::mean, LossReduction::sum})
    if (to_string(r) == v) return r;
  throw UsageError(fmt::format("attribute 'reduction': expected none, mean or sum, given '{}'", v));
}

}  // namespace

void add_training_op_specs(std::vector<OpSpec>& v) {
  for (const char* name : {"softmax_backward", "log_softmax_backward"})
    v.push_back({name, {"y", "dy"}, {}, {"scale", "causal"},
                 "dx from the forward's output y and its gradient dy (options as the forward)", {"dx"}});
  v.push_back({"layernorm_backward", {"x", "weight", "dy"}, {}, {"eps"},
               "dx, dweight (and dbias when asked) from the forward's x and weight", {"dx", "dweight"}, {"dbias"}});
  v.push_back({"rmsnorm_backward", {"x", "weight", "dy"}, {}, {"eps"},
               "dx and dweight from the forward's x and weight", {"dx", "dweight"}});
  for (UnaryKind k : kBackwardKinds)
    v.push_back({unary_backward_name(k), {"x", "dy"}, {}, {}, "dx = dy * f'(x) element-wise", {"dx"}});
  v.push_back({"swiglu_backward", {"gate", "up", "dy"}, {}, {}, "dgate, dup of y = silu(gate) * up",
               {"dgate", "dup"}});
  v.push_back({"cross_entropy", {"logits", "targets"}, {}, {"ignore_index", "label_smoothing", "reduction"},
               "fused softmax cross-entropy; logits [N, V], integer targets [N]; reduction none|mean|sum "
               "(default mean); dlogits, when asked, is the gradient of the reduced loss",
               {"loss"}, {"dlogits"}});
  v.push_back({"embedding_backward", {"ids", "dy"}, {"dtable"}, {"vocab"},
               "dtable[ids] += dy (ascending position order per row); dtable starts from the given one, or from "
               "zeros of [vocab, D] (--attr vocab=N)",
               {"dtable"}});
  v.push_back({"adamw_step", {"param", "grad", "m", "v"}, {"master"},
               {"lr", "beta1", "beta2", "eps", "weight_decay", "step"},
               "one AdamW step; m, v (and master) are f32 (converted); writes the updated tensors",
               {"param", "m", "v"}, {"master"}});
  v.push_back({"global_norm", {"x0"}, {"x1", "x2", "x3", "x4", "x5", "x6", "x7"}, {},
               "sqrt of the sum of squares of x0, x1, ... in that order (a [] f32 result)"});
  v.push_back({"rope_backward", {"dy", "positions"}, {"inv_freq"}, {"theta", "style", "rotary_dim"},
               "dx = dy rotated back (rope's options)", {"dx"}});
  v.push_back({"attention_backward", {"q", "k", "v", "y", "dy", "lse"}, {}, {"scale", "causal"},
               "dq, dk, dv of attention from its q, k, v, its output y and lse (`hal run attention --out y=.. "
               "--out lse=..`) and dy; options as the forward",
               {"dq", "dk", "dv"}});
}

std::optional<BuiltCall> build_training_call(const OpSpec& spec, const std::map<std::string, HostArray>& in,
                                             const Attrs& attrs, const std::set<std::string>& requested,
                                             DeviceArena& arena) {
  const std::string_view op = spec.name;
  if (op == "softmax_backward" || op == "log_softmax_backward") {
    SoftmaxBackwardCall c;
    c.y = arena.upload(input(in, "y"));
    c.dy = arena.upload(input(in, "dy"));
    c.dx = arena.output("dx", c.y.dtype, c.y.shape);
    c.scale = attrs.get_float("scale", 1.0f);
    c.causal = attrs.get_bool("causal", false);
    c.log = op == "log_softmax_backward";
    return BuiltCall{c, {{"dx", c.dx}}};
  }
  if (op == "layernorm_backward" || op == "rmsnorm_backward") {
    NormBackwardCall c;
    c.x = arena.upload(input(in, "x"));
    c.weight = arena.upload(input(in, "weight"));
    c.dy = arena.upload(input(in, "dy"));
    c.dx = arena.output("dx", c.x.dtype, c.x.shape);
    c.dweight = arena.output("dweight", c.weight.dtype, c.weight.shape);
    c.eps = attrs.get_float("eps", 1e-5f);
    c.rms = op == "rmsnorm_backward";
    BuiltCall b{c, {{"dx", c.dx}, {"dweight", c.dweight}}};
    if (requested.count("dbias")) {
      const Tensor dbias = arena.output("dbias", c.weight.dtype, c.weight.shape);
      std::get<NormBackwardCall>(b.call).dbias = dbias;
      b.outputs["dbias"] = dbias;
    }
    return b;
  }
  for (UnaryKind k : kBackwardKinds) {
    if (unary_backward_name(k) != op) continue;
    UnaryBackwardCall c{k, arena.upload(input(in, "x")), arena.upload(input(in, "dy")), {}};
    c.dx = arena.output("dx", c.x.dtype, c.x.shape);
    return BuiltCall{c, {{"dx", c.dx}}};
  }
  if (op == "swiglu_backward") {
    SwigluBackwardCall c;
    c.gate = arena.upload(input(in, "gate"));
    c.up = arena.upload(input(in, "up"));
    c.dy = arena.upload(input(in, "dy"));
    c.dgate = arena.output("dgate", c.gate.dtype, c.gate.shape);
    c.dup = arena.output("dup", c.gate.dtype, c.gate.shape);
    return BuiltCall{c, {{"dgate", c.dgate}, {"dup", c.dup}}};
  }
  if (op == "cross_entropy") {
    CrossEntropyCall c;
    c.logits = arena.upload(input(in, "logits"));
    c.targets = arena.upload(input(in, "targets"));
    c.ignore_index = attrs.get_int("ignore_index", -100);
    c.label_smoothing = attrs.get_float("label_smoothing", 0.0f);
    c.reduction = parse_reduction(attrs);
    if (c.logits.rank() != 2) throw_invalid_argument("cross_entropy", "logits", "rank 2 [N, V]", c.logits.shape.str());
    const DType loss_dtype = c.logits.dtype == DType::f64 ? DType::f64 : DType::f32;
    c.loss = arena.output("loss", loss_dtype, c.reduction == LossReduction::none ? Shape{c.logits.shape[0]} : Shape{});
    BuiltCall b{c, {{"loss", c.loss}}};
    if (requested.count("dlogits")) {
      const Tensor d = arena.output("dlogits", c.logits.dtype, c.logits.shape);
      std::get<CrossEntropyCall>(b.call).dlogits = d;
      b.outputs["dlogits"] = d;
    }
    return b;
  }
  if (op == "embedding_backward") {
    EmbeddingBackwardCall c;
    c.ids = arena.upload(input(in, "ids"));
    c.dy = arena.upload(input(in, "dy"));
    if (in.count("dtable")) {
      if (attrs.has("vocab")) throw UsageError("embedding_backward: 'vocab' sizes dtable only when input dtable is absent");
      c.dtable = arena.upload(input(in, "dtable"));
    } else {
      if (!attrs.has("vocab")) throw UsageError("embedding_backward needs --in dtable=FILE or --attr vocab=N");
      const std::int64_t vocab = attrs.get_int("vocab", 0);
      if (vocab < 0 || c.dy.rank() == 0) throw_invalid_argument("embedding_backward", "vocab", "vocab >= 0 and dy of rank >= 1",
                                                                  fmt::format("vocab {} and dy {}", vocab, c.dy.shape.str()));
      c.dtable = arena.zeros(c.dy.dtype, Shape{vocab, c.dy.shape.back()});
    }
    return BuiltCall{c, {{"dtable", c.dtable}}};
  }
  if (op == "adamw_step") {
    AdamwCall c;
    c.param = arena.upload(input(in, "param"));
    c.grad = arena.upload(input(in, "grad"));
    const DType state = c.param.dtype == DType::f64 ? DType::f64 : DType::f32;
    auto state_input = [&](const char* name) {
      const HostArray& a = input(in, name);
      return arena.upload_as(a, state);
    };
    c.m = state_input("m");
    c.v = state_input("v");
    if (in.count("master")) c.master = state_input("master");
    c.lr = attrs.get_float("lr", 1e-3f);
    c.beta1 = attrs.get_float("beta1", 0.9f);
    c.beta2 = attrs.get_float("beta2", 0.999f);
    c.eps = attrs.get_float("eps", 1e-8f);
    c.weight_decay = attrs.get_float("weight_decay", 0.01f);
    c.step = attrs.get_int("step", 1);
    BuiltCall b{c, {{"param", c.param}, {"m", c.m}, {"v", c.v}}};
    if (c.master) b.outputs["master"] = *c.master;
    return b;
  }
  if (op == "global_norm") {
    GlobalNormCall c;
    for (const char* name : {"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7"})
      if (in.count(name)) c.xs.push_back(arena.upload(input(in, name)));
    if (in.size() != c.xs.size() || (in.count("x1") == 0 && in.size() > 1))
      throw UsageError("global_norm: inputs are x0, x1, ... without gaps");
    bool all_f64 = true;
    for (const Tensor& x : c.xs) all_f64 = all_f64 && x.dtype == DType::f64;
    c.y = arena.output("y", all_f64 ? DType::f64 : DType::f32, Shape{});
    return BuiltCall{c, {{"y", c.y}}};
  }
  if (op == "rope_backward") {
    RopeBackwardCall c;
    c.dy = arena.upload(input(in, "dy"));
    c.positions = upload_rope_positions(arena, input(in, "positions"), "rope_backward");
    c.dx = arena.output("dx", c.dy.dtype, c.dy.shape);
    c.theta = attrs.get_float("theta", 10000.0f);
    const std::string style = attrs.get_string("style", "neox");
    if (style != "neox" && style != "gptj")
      throw UsageError(fmt::format("attribute 'style': expected neox or gptj, given '{}'", style));
    c.style = style == "neox" ? RopeStyle::neox : RopeStyle::gptj;
    c.rotary_dim = static_cast<int>(attrs.get_int("rotary_dim", 0));
    if (in.count("inv_freq")) {
      const HostArray& f = input(in, "inv_freq");
      const DType want = c.dy.dtype == DType::f64 ? DType::f64 : DType::f32;
      c.inv_freq = arena.upload_as(f, want);
    }
    return BuiltCall{c, {{"dx", c.dx}}};
  }
  if (op == "attention_backward") {
    AttentionBackwardCall c;
    c.q = arena.upload(input(in, "q"));
    c.k = arena.upload(input(in, "k"));
    c.v = arena.upload(input(in, "v"));
    c.y = arena.upload(input(in, "y"));
    c.dy = arena.upload(input(in, "dy"));
    c.lse = arena.upload_as(input(in, "lse"), c.q.dtype == DType::f64 ? DType::f64 : DType::f32);
    c.dq = arena.output("dq", c.q.dtype, c.q.shape);
    c.dk = arena.output("dk", c.k.dtype, c.k.shape);
    c.dv = arena.output("dv", c.v.dtype, c.v.shape);
    c.scale = attrs.get_float("scale", 0.0f);
    c.causal = attrs.get_bool("causal", false);
    return BuiltCall{c, {{"dq", c.dq}, {"dk", c.dk}, {"dv", c.dv}}};
  }
  return std::nullopt;
}

}  // namespace hal::tools
