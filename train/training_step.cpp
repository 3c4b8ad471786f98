#include "train/training_step.h"

#include <fmt/format.h>

#include <cmath>

#include "hal/error.h"
#include "ops/ops.h"

namespace hal::train {

namespace {

GemmCall gemm(const Tensor& a, const Tensor& b, const Tensor& c, bool trans_a = false, bool trans_b = false,
              float beta = 0.0f) {
  GemmCall g;
  g.a = a;
  g.b = b;
  g.c = c;
  g.trans_a = trans_a;
  g.trans_b = trans_b;
  g.beta = beta;
  return g;
}

// [rows, n_heads * head_dim] read as [batch, seq, n_heads, head_dim] (same memory).
Tensor heads(const Tensor& t, const ModelShape& m, std::int64_t n_heads) {
  return Tensor::contiguous(t.data, t.device, t.dtype, Shape{m.batch, m.seq, n_heads, m.head_dim});
}

bool is_16_bit(DType dt) { return dt == DType::f16 || dt == DType::bf16; }

// How each parameter starts: N(mean, stddev) from Philox.
struct Init {
  float mean, stddev;
};

}  // namespace

Tensor& TrainingStep::add(const std::string& name, DType dt, const Shape& shape) {
  buffers_.push_back(Buffer::for_tensor(*device_, dt, shape));
  auto [it, inserted] = tensors_.emplace(name, buffers_.back().view(dt, shape));
  if (!inserted) throw Error(ErrorCode::invalid_argument, fmt::format("TrainingStep: tensor '{}' added twice", name));
  return it->second;
}

void TrainingStep::add_parameter(const std::string& name, const Shape& shape, float weight_decay) {
  const DType state = dtype_ == DType::f64 ? DType::f64 : DType::f32;
  Parameter p;
  p.name = name;
  p.param = add(name, dtype_, shape);
  p.grad = add("d." + name, dtype_, shape);
  p.m = add("adam_m." + name, state, shape);
  p.v = add("adam_v." + name, state, shape);
  if (is_16_bit(dtype_)) p.master = add("master." + name, DType::f32, shape);
  p.weight_decay = weight_decay;
  parameters_.push_back(std::move(p));
}

TrainingStep::TrainingStep(Device& device, DType dtype, const ModelShape& shape)
    : device_(&device), dtype_(dtype), shape_(shape) {
  if (!is_floating(dtype) || dtype_size(dtype) < 2)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("TrainingStep: argument 'dtype': expected f32, f16, bf16 or f64, given {}", dtype_name(dtype)));
  const ModelShape& m = shape_;
  if (m.layers < 1 || m.hidden < 1 || m.heads < 1 || m.kv_heads < 1 || m.heads % m.kv_heads != 0 ||
      m.head_dim < 2 || m.head_dim % 2 != 0 || m.ffn < 1 || m.vocab < 1 || m.batch < 1 || m.seq < 1)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("TrainingStep: argument 'shape': expected positive sizes, kv_heads dividing heads and an "
                            "even head_dim, given layers {} hidden {} heads {} kv_heads {} head_dim {} ffn {} vocab {} "
                            "batch {} seq {}",
                            m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.ffn, m.vocab, m.batch, m.seq));
  const std::int64_t n = m.rows(), h = m.hidden;
  const DType loss_dt = dtype_ == DType::f64 ? DType::f64 : DType::f32;

  // Parameters, in the order AdamW visits them (and global_norm would).
  add_parameter("tok_embed", {m.vocab, h}, 0.0f);
  for (std::int64_t l = 0; l < m.layers; ++l) {
    const std::string p = fmt::format("l{}.", l);
    add_parameter(p + "attn_norm", {h}, 0.0f);
    add_parameter(p + "wq", {h, m.q_width()}, 1.0f);
    add_parameter(p + "wk", {h, m.kv_width()}, 1.0f);
    add_parameter(p + "wv", {h, m.kv_width()}, 1.0f);
    add_parameter(p + "wo", {m.q_width(), h}, 1.0f);
    add_parameter(p + "mlp_norm", {h}, 0.0f);
    add_parameter(p + "wg", {h, m.ffn}, 1.0f);
    add_parameter(p + "wu", {h, m.ffn}, 1.0f);
    add_parameter(p + "wd", {m.ffn, h}, 1.0f);
  }
  add_parameter("final_norm", {h}, 0.0f);
  add_parameter("lm_head", {h, m.vocab}, 1.0f);

  // Data.
  add("ids", DType::i32, {n});
  add("targets", DType::i32, {n});
  add("positions", DType::i32, {m.seq});

  // Activations and their gradients (one buffer each, written once per step,
  // except the gemm-accumulated dh / dh2).
  add("x0", dtype_, {n, h});
  add("d.x0", dtype_, {n, h});
  for (std::int64_t l = 0; l < m.layers; ++l) {
    const std::string p = fmt::format("l{}.", l);
    for (const char* a : {"h", "x2", "h2", "out", "d.h", "d.x2_norm", "d.x2", "d.h2", "d.in_norm"})
      add(p + a, dtype_, {n, h});
    if (l > 0) add(p + "d.in", dtype_, {n, h});  // layer 0's is d.x0
    for (const char* a : {"q", "q_rot", "attn", "d.attn", "d.q_rot", "d.q"}) add(p + a, dtype_, {n, m.q_width()});
    for (const char* a : {"k", "k_rot", "v", "d.k_rot", "d.k", "d.v"}) add(p + a, dtype_, {n, m.kv_width()});
    add(p + "attn_out", dtype_, {n, h});
    add(p + "lse", loss_dt, {m.batch, m.seq, m.heads});  // attention's row log-sum-exp, [b, sq, hq]
    for (const char* a : {"gate", "up", "act", "d.act", "d.gate", "d.up"}) add(p + a, dtype_, {n, m.ffn});
    add(p + "mlp_out", dtype_, {n, h});
  }
  add("hf", dtype_, {n, h});
  add("d.hf", dtype_, {n, h});
  add("d.final_in", dtype_, {n, h});
  add("logits", dtype_, {n, m.vocab});
  add("d.logits", dtype_, {n, m.vocab});
  add("loss", loss_dt, {});
  build_stages();
}

const Tensor& TrainingStep::tensor(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end())
    throw Error(ErrorCode::invalid_argument, fmt::format("TrainingStep: no tensor named '{}'", name));
  return it->second;
}

void TrainingStep::build_stages() {
  const ModelShape& m = shape_;
  const auto t = [this](const std::string& name) { return tensor(name); };
  std::vector<Stage>& st = forward_backward_;
  const auto norm = [&](const std::string& x, const std::string& w, const std::string& y) -> OpCall {
    return NormCall{t(x), t(w), std::nullopt, t(y), m.norm_eps, true};
  };
  const auto norm_backward = [&](const std::string& x, const std::string& w, const std::string& dy,
                                 const std::string& dx, const std::string& dw) -> OpCall {
    return NormBackwardCall{t(x), t(w), t(dy), t(dx), t(dw), std::nullopt, m.norm_eps, true};
  };
  const auto add_call = [&](const std::string& a, const std::string& b, const std::string& y) -> OpCall {
    return BinaryCall{BinaryKind::add, t(a), t(b), t(y)};
  };
  const auto rope = [&](const std::string& x, const std::string& y, std::int64_t n_heads) -> OpCall {
    return RopeCall{heads(t(x), m, n_heads), t("positions"), heads(t(y), m, n_heads), m.rope_theta, RopeStyle::neox, 0};
  };
  const auto rope_backward = [&](const std::string& dy, const std::string& dx, std::int64_t n_heads) -> OpCall {
    return RopeBackwardCall{heads(t(dy), m, n_heads), t("positions"), heads(t(dx), m, n_heads), m.rope_theta,
                            RopeStyle::neox, 0};
  };
  const auto layer_in = [&](std::int64_t l) { return l == 0 ? std::string("x0") : fmt::format("l{}.out", l - 1); };
  const std::string last = fmt::format("l{}.out", m.layers - 1);

  // Forward.
  st.push_back({"embed", EmbeddingCall{t("tok_embed"), t("ids"), t("x0")}});
  for (std::int64_t l = 0; l < m.layers; ++l) {
    const std::string p = fmt::format("l{}.", l), in = layer_in(l);
    st.push_back({p + "attn_norm", norm(in, p + "attn_norm", p + "h")});
    st.push_back({p + "q_proj", gemm(t(p + "h"), t(p + "wq"), t(p + "q"))});
    st.push_back({p + "k_proj", gemm(t(p + "h"), t(p + "wk"), t(p + "k"))});
    st.push_back({p + "v_proj", gemm(t(p + "h"), t(p + "wv"), t(p + "v"))});
    st.push_back({p + "rope_q", rope(p + "q", p + "q_rot", m.heads)});
    st.push_back({p + "rope_k", rope(p + "k", p + "k_rot", m.kv_heads)});
    AttentionCall attn{heads(t(p + "q_rot"), m, m.heads), heads(t(p + "k_rot"), m, m.kv_heads),
                       heads(t(p + "v"), m, m.kv_heads), heads(t(p + "attn"), m, m.heads), 0.0f, true};
    attn.lse = t(p + "lse");
    st.push_back({p + "attention", attn});
    st.push_back({p + "o_proj", gemm(t(p + "attn"), t(p + "wo"), t(p + "attn_out"))});
    st.push_back({p + "residual_1", add_call(in, p + "attn_out", p + "x2")});
    st.push_back({p + "mlp_norm", norm(p + "x2", p + "mlp_norm", p + "h2")});
    st.push_back({p + "gate_proj", gemm(t(p + "h2"), t(p + "wg"), t(p + "gate"))});
    st.push_back({p + "up_proj", gemm(t(p + "h2"), t(p + "wu"), t(p + "up"))});
    st.push_back({p + "swiglu", SwigluCall{t(p + "gate"), t(p + "up"), t(p + "act")}});
    st.push_back({p + "down_proj", gemm(t(p + "act"), t(p + "wd"), t(p + "mlp_out"))});
    st.push_back({p + "residual_2", add_call(p + "x2", p + "mlp_out", p + "out")});
  }
  st.push_back({"final_norm", norm(last, "final_norm", "hf")});
  st.push_back({"lm_head", gemm(t("hf"), t("lm_head"), t("logits"))});
  // The loss and its gradient in one pass (mean over the batch's tokens).
  st.push_back({"cross_entropy", CrossEntropyCall{t("logits"), t("targets"), t("loss"), t("d.logits"), -100, 0.0f,
                                                  LossReduction::mean}});

  // Backward: every forward stage in reverse, each gradient written once
  // (dh and dh2 gather their gemms with beta = 1, in a fixed order).
  st.push_back({"lm_head_dweight", gemm(t("hf"), t("d.logits"), t("d.lm_head"), true, false)});
  st.push_back({"lm_head_dx", gemm(t("d.logits"), t("lm_head"), t("d.hf"), false, true)});
  st.push_back({"final_norm_backward", norm_backward(last, "final_norm", "d.hf", "d.final_in", "d.final_norm")});
  for (std::int64_t l = m.layers - 1; l >= 0; --l) {
    const std::string p = fmt::format("l{}.", l), in = layer_in(l);
    // d(out): from the final norm for the last layer, else from the layer above.
    const std::string dout = l == m.layers - 1 ? std::string("d.final_in") : fmt::format("l{}.d.in", l + 1);
    st.push_back({p + "down_proj_dweight", gemm(t(p + "act"), t(dout), t("d." + p + "wd"), true, false)});
    st.push_back({p + "down_proj_dx", gemm(t(dout), t(p + "wd"), t(p + "d.act"), false, true)});
    st.push_back({p + "swiglu_backward", SwigluBackwardCall{t(p + "gate"), t(p + "up"), t(p + "d.act"),
                                                           t(p + "d.gate"), t(p + "d.up")}});
    st.push_back({p + "gate_proj_dweight", gemm(t(p + "h2"), t(p + "d.gate"), t("d." + p + "wg"), true, false)});
    st.push_back({p + "up_proj_dweight", gemm(t(p + "h2"), t(p + "d.up"), t("d." + p + "wu"), true, false)});
    st.push_back({p + "gate_proj_dx", gemm(t(p + "d.gate"), t(p + "wg"), t(p + "d.h2"), false, true)});
    st.push_back({p + "up_proj_dx", gemm(t(p + "d.up"), t(p + "wu"), t(p + "d.h2"), false, true, 1.0f)});
    st.push_back({p + "mlp_norm_backward", norm_backward(p + "x2", p + "mlp_norm", p + "d.h2", p + "d.x2_norm",
                                                         "d." + p + "mlp_norm")});
    st.push_back({p + "residual_2_backward", add_call(dout, p + "d.x2_norm", p + "d.x2")});
    st.push_back({p + "o_proj_dweight", gemm(t(p + "attn"), t(p + "d.x2"), t("d." + p + "wo"), true, false)});
    st.push_back({p + "o_proj_dx", gemm(t(p + "d.x2"), t(p + "wo"), t(p + "d.attn"), false, true)});
    st.push_back({p + "attention_backward",
                  AttentionBackwardCall{heads(t(p + "q_rot"), m, m.heads), heads(t(p + "k_rot"), m, m.kv_heads),
                                        heads(t(p + "v"), m, m.kv_heads), heads(t(p + "attn"), m, m.heads),
                                        heads(t(p + "d.attn"), m, m.heads), t(p + "lse"),
                                        heads(t(p + "d.q_rot"), m, m.heads), heads(t(p + "d.k_rot"), m, m.kv_heads),
                                        heads(t(p + "d.v"), m, m.kv_heads), 0.0f, true}});
    st.push_back({p + "rope_q_backward", rope_backward(p + "d.q_rot", p + "d.q", m.heads)});
    st.push_back({p + "rope_k_backward", rope_backward(p + "d.k_rot", p + "d.k", m.kv_heads)});
    st.push_back({p + "q_proj_dweight", gemm(t(p + "h"), t(p + "d.q"), t("d." + p + "wq"), true, false)});
    st.push_back({p + "k_proj_dweight", gemm(t(p + "h"), t(p + "d.k"), t("d." + p + "wk"), true, false)});
    st.push_back({p + "v_proj_dweight", gemm(t(p + "h"), t(p + "d.v"), t("d." + p + "wv"), true, false)});
    st.push_back({p + "q_proj_dx", gemm(t(p + "d.q"), t(p + "wq"), t(p + "d.h"), false, true)});
    st.push_back({p + "k_proj_dx", gemm(t(p + "d.k"), t(p + "wk"), t(p + "d.h"), false, true, 1.0f)});
    st.push_back({p + "v_proj_dx", gemm(t(p + "d.v"), t(p + "wv"), t(p + "d.h"), false, true, 1.0f)});
    st.push_back({p + "attn_norm_backward", norm_backward(in, p + "attn_norm", p + "d.h", p + "d.in_norm",
                                                          "d." + p + "attn_norm")});
    const std::string din = l == 0 ? std::string("d.x0") : p + "d.in";
    st.push_back({p + "residual_1_backward", add_call(p + "d.x2", p + "d.in_norm", din)});
  }
  st.push_back({"embed_backward", EmbeddingBackwardCall{t("ids"), t("d.x0"), t("d.tok_embed")}});
}

void TrainingStep::init_parameters(Stream& s, std::uint64_t seed) {
  const ModelShape& m = shape_;
  // Residual-branch outputs start smaller so that the stream stays O(1) deep.
  const float depth = 1.0f / std::sqrt(2.0f * static_cast<float>(m.layers));
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    const Parameter& p = parameters_[i];
    Init init{0.0f, 1.0f / std::sqrt(static_cast<float>(p.param.shape[0]))};  // fan-in for [in, out] matrices
    if (p.param.rank() == 1) init = {1.0f, 0.1f};                             // norm weights around 1
    if (p.name == "tok_embed") init = {0.0f, 1.0f};
    if (p.name.ends_with(".wo") || p.name.ends_with(".wd")) init.stddev *= depth;
    ops::fill_random(s, p.param, {.seed = seed * 0x9E3779B97F4A7C15ull + i + 1,
                                  .distribution = RandomDistribution::normal, .a = init.mean, .b = init.stddev});
    if (p.master) ops::cast(s, p.param, *p.master);  // exact widening: master and param agree
    for (const Tensor* state : {&p.m, &p.v})
      s.memset(state->data, 0, static_cast<std::size_t>(state->numel()) * dtype_size(state->dtype));
  }
  std::vector<std::int32_t> positions(static_cast<std::size_t>(m.seq));
  for (std::int64_t i = 0; i < m.seq; ++i) positions[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i);
  s.upload(tensor("positions"), positions.data());
}

void TrainingStep::set_batch(Stream& s, const std::vector<std::int32_t>& ids, const std::vector<std::int32_t>& targets) {
  const auto n = static_cast<std::size_t>(shape_.rows());
  if (ids.size() != n || targets.size() != n)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("TrainingStep::set_batch: expected {} ids and targets (batch {} x seq {}), given {} and {}",
                            n, shape_.batch, shape_.seq, ids.size(), targets.size()));
  s.upload(tensor("ids"), ids.data());
  s.upload(tensor("targets"), targets.data());
}

void TrainingStep::zero_accumulated_gradients(Stream& s) {
  std::vector<std::string> names = {"d.tok_embed"};
  for (const std::string& name : names) {
    const Tensor& g = tensor(name);
    s.memset(g.data, 0, static_cast<std::size_t>(g.numel()) * dtype_size(g.dtype));  // 0.0 in every float dtype
  }
}

std::vector<Stage> TrainingStep::optimizer(std::int64_t t, const OptimizerSettings& o) const {
  std::vector<Stage> st;
  for (const Parameter& p : parameters_) {
    AdamwCall a{p.param, p.grad, p.m, p.v, p.master, o.lr, o.beta1, o.beta2, o.eps, o.weight_decay * p.weight_decay, t};
    st.push_back({"adamw." + p.name, a});
  }
  return st;
}

void run_stages(Stream& s, const std::vector<Stage>& stages) {
  for (const Stage& st : stages) ops::run(s, st.call);
}

}  // namespace hal::train
