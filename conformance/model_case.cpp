// The model-level case: one Llama-style decoder layer built from hal::ops
// (hidden 256, 4 query heads, 2 kv heads, head_dim 64, ffn 512, seq 33):
//   h = rmsnorm(x); q, k, v = h Wq, h Wk, h Wv; q, k = rope(q), rope(k);
//   a = attention(q, k, v, causal, GQA); x2 = x + a Wo;
//   h2 = rmsnorm(x2); y = x2 + (swiglu(h2 Wg, h2 Wu)) Wd.
// How it is scored: every stage runs on the device; its output is scored
// against the fp64 oracle run on that stage's inputs as the device produced
// them (downloaded), with the stage op's own contract bound. Propagating the
// per-op bounds through the whole layer by hand would be sound too, but this
// per-stage scoring is sound by construction (each stage is one op under the
// contract) and names the stage that fails. Separately, the end-to-end
// relative error ||y - y_oracle|| / ||y_oracle|| against the whole layer
// evaluated in fp64 is reported (informative: it is not a contract).
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "conformance/cases.h"
#include "conformance/harness.h"
#include "conformance/oracle.h"
#include "conformance/tensor_util.h"
#include "ops/ops.h"

namespace hal::conformance::cases {

namespace {

constexpr std::int64_t kSeq = 33, kHidden = 256, kHeads = 4, kKvHeads = 2, kHeadDim = 64, kFfn = 512;

struct TensorDef {
  std::string name;
  Shape shape;
  bool is_input;  // generated (x, weights); otherwise produced by a stage
  Generator gen;
  DType dtype_override = DType::f32;
  bool integer = false;  // positions
};

std::vector<TensorDef> tensor_defs() {
  const double wq = 1.0 / std::sqrt(double(kHidden)), wf = 1.0 / std::sqrt(double(kFfn));
  const std::int64_t kv = kKvHeads * kHeadDim;
  return {
      {"x", {kSeq, kHidden}, true, normal()},
      {"w_attn_norm", {kHidden}, true, normal(1.0, 0.1)},
      {"wq", {kHidden, kHidden}, true, normal(0.0, wq)},
      {"wk", {kHidden, kv}, true, normal(0.0, wq)},
      {"wv", {kHidden, kv}, true, normal(0.0, wq)},
      {"wo", {kHidden, kHidden}, true, normal(0.0, wq)},
      {"w_mlp_norm", {kHidden}, true, normal(1.0, 0.1)},
      {"wg", {kHidden, kFfn}, true, normal(0.0, wq)},
      {"wu", {kHidden, kFfn}, true, normal(0.0, wq)},
      {"wd", {kFfn, kHidden}, true, normal(0.0, wf)},
      {"positions", {kSeq}, true, {}, DType::i32, true},
      {"h", {kSeq, kHidden}, false, {}},
      {"q", {kSeq, kHidden}, false, {}},
      {"k", {kSeq, kv}, false, {}},
      {"v", {kSeq, kv}, false, {}},
      {"q_rot", {kSeq, kHidden}, false, {}},
      {"k_rot", {kSeq, kv}, false, {}},
      {"attn", {kSeq, kHidden}, false, {}},
      {"attn_out", {kSeq, kHidden}, false, {}},
      {"x2", {kSeq, kHidden}, false, {}},
      {"h2", {kSeq, kHidden}, false, {}},
      {"gate", {kSeq, kFfn}, false, {}},
      {"up", {kSeq, kFfn}, false, {}},
      {"act", {kSeq, kFfn}, false, {}},
      {"mlp_out", {kSeq, kHidden}, false, {}},
      {"y", {kSeq, kHidden}, false, {}},
  };
}

using Tensors = std::map<std::string, Tensor>;

// [seq, heads * head_dim] read as [1, seq, heads, head_dim] (same memory).
Tensor heads(const Tensor& t, std::int64_t n_heads) {
  return Tensor::contiguous(t.data, t.device, t.dtype, Shape{1, kSeq, n_heads, kHeadDim});
}

struct Stage {
  std::string name;
  std::function<OpCall(Tensors&)> call;
};

std::vector<Stage> stages() {
  auto gemm = [](std::string a, std::string b, std::string c) {
    return [a, b, c](Tensors& t) -> OpCall {
      GemmCall g;
      g.a = t[a];
      g.b = t[b];
      g.c = t[c];
      return g;
    };
  };
  return {
      {"attn_norm", [](Tensors& t) -> OpCall { return NormCall{t["x"], t["w_attn_norm"], std::nullopt, t["h"], 1e-5f, true}; }},
      {"q_proj", gemm("h", "wq", "q")},
      {"k_proj", gemm("h", "wk", "k")},
      {"v_proj", gemm("h", "wv", "v")},
      {"rope_q", [](Tensors& t) -> OpCall {
         return RopeCall{heads(t["q"], kHeads), t["positions"], heads(t["q_rot"], kHeads), 10000.0f, RopeStyle::neox, 0};
       }},
      {"rope_k", [](Tensors& t) -> OpCall {
         return RopeCall{heads(t["k"], kKvHeads), t["positions"], heads(t["k_rot"], kKvHeads), 10000.0f, RopeStyle::neox, 0};
       }},
      {"attention", [](Tensors& t) -> OpCall {
         return AttentionCall{heads(t["q_rot"], kHeads), heads(t["k_rot"], kKvHeads), heads(t["v"], kKvHeads),
                              heads(t["attn"], kHeads), 0.0f, true};
       }},
      {"o_proj", gemm("attn", "wo", "attn_out")},
      {"residual_1", [](Tensors& t) -> OpCall { return BinaryCall{BinaryKind::add, t["x"], t["attn_out"], t["x2"]}; }},
      {"mlp_norm", [](Tensors& t) -> OpCall { return NormCall{t["x2"], t["w_mlp_norm"], std::nullopt, t["h2"], 1e-5f, true}; }},
      {"gate_proj", gemm("h2", "wg", "gate")},
      {"up_proj", gemm("h2", "wu", "up")},
      {"swiglu", [](Tensors& t) -> OpCall { return SwigluCall{t["gate"], t["up"], t["act"]}; }},
      {"down_proj", gemm("act", "wd", "mlp_out")},
      {"residual_2", [](Tensors& t) -> OpCall { return BinaryCall{BinaryKind::add, t["x2"], t["mlp_out"], t["y"]}; }},
  };
}

// Allocates every tensor of the layer on `dev` in `dt` and uploads the inputs.
struct Layer {
  std::vector<Buffer> buffers;
  Tensors t;
};

Layer build(Device& dev, Stream& s, DType dt, const std::string& case_name) {
  Layer l;
  std::uint64_t salt = 1;
  for (const TensorDef& d : tensor_defs()) {
    const DType tdt = d.integer ? d.dtype_override : dt;
    l.buffers.push_back(Buffer::for_tensor(dev, tdt, d.shape));
    l.t[d.name] = l.buffers.back().view(tdt, d.shape);
    if (!d.is_input) continue;
    std::vector<std::uint8_t> bytes;
    if (d.integer) {
      bytes.resize(static_cast<std::size_t>(kSeq) * 4);
      for (std::int64_t i = 0; i < kSeq; ++i) store_element(bytes.data(), DType::i32, i, double(i));
    } else {
      bytes = generate(d.gen, dt, d.shape, case_seed(case_name, salt));
    }
    ++salt;
    s.upload(l.t[d.name], bytes.data());
  }
  s.synchronize();
  return l;
}

ModelOutcome run_layer(DType dt, const std::string& case_name, Device& dev) {
  ModelOutcome outcome;
  Stream s(dev);
  Layer l = build(dev, s, dt, case_name);
  for (const Stage& st : stages()) {
    const OpCall call = st.call(l.t);
    ops::run(s, call);
    s.synchronize();
    // The oracle for this stage, on the device's own stage inputs.
    OpCall host_call = call;
    std::vector<HostCopy> copies;
    for_each_input(host_call, [&](Tensor& in) {
      copies.push_back(mirror_to_cpu(s, in));
      in = copies.back().view;
    });
    const Tensor& out = output_of(call);
    Buffer host_out = Buffer::for_tensor(cpu_device(), out.dtype, out.shape);
    output_of(host_call) = host_out.view(out.dtype, out.shape);
    const Reference ref = compute_reference(host_call);
    const Score sc = score_output(download_bytes(s, out), out.dtype, ref.values, ref.bounds, ref.zero_sign);
    outcome.score.score = std::max(outcome.score.score, sc.score);
    outcome.score.nmse = std::max(outcome.score.nmse, sc.nmse);
    outcome.score.max_ulp = std::max(outcome.score.max_ulp, sc.max_ulp);
    if (!sc.passed() && outcome.passed) {
      outcome.passed = false;
      outcome.reason = fmt::format("stage {}: {}", st.name, sc.failure);
    }
  }
  outcome.output = download_bytes(s, l.t["y"]);
  return outcome;
}

// The whole layer in fp64 from the same (rounded) inputs.
std::vector<double> oracle_layer(DType dt, const std::string& case_name) {
  Device& cpu = cpu_device();
  Stream s(cpu);
  // Generate in the case dtype (the device's inputs), then widen to f64.
  Layer src = build(cpu, s, dt, case_name);
  Layer l;
  for (const TensorDef& d : tensor_defs()) {
    const DType tdt = d.integer ? d.dtype_override : DType::f64;
    l.buffers.push_back(Buffer::for_tensor(cpu, tdt, d.shape));
    Tensor t = l.buffers.back().view(tdt, d.shape);
    const Tensor& from = src.t[d.name];
    for (std::int64_t i = 0; i < t.numel(); ++i) store_element(t.data, tdt, i, load_element(from.data, from.dtype, i));
    l.t[d.name] = t;
  }
  for (const Stage& st : stages()) ops::run(s, st.call(l.t));
  s.synchronize();
  return gather(l.t["y"]);
}

}  // namespace

void add_model(std::vector<Case>& out) {
  for (DType dt : {DType::f32, DType::bf16}) {
    Case c;
    c.op = "model";
    c.name = case_name("model", dt, "llama_decoder_layer_s33_h256_q4_kv2_d64_ffn512");
    c.dtype = dt;
    c.outputs = {{dt, {kSeq, kHidden}, std::nullopt}};
    c.is_model = true;
    const std::string name = c.name;
    c.run_model = [dt, name](Device& dev) {
      ModelOutcome m = run_layer(dt, name, dev);
      const std::vector<double> ref = oracle_layer(dt, name);
      double e2 = 0, r2 = 0;
      for (std::size_t i = 0; i < ref.size(); ++i) {
        const double d = load_element(m.output.data(), dt, static_cast<std::int64_t>(i)) - ref[i];
        e2 += d * d, r2 += ref[i] * ref[i];
      }
      const std::string e2e = fmt::format("end-to-end relative error {:.3g} (informative)", std::sqrt(e2 / r2));
      m.reason = m.reason.empty() ? e2e : fmt::format("{}; {}", m.reason, e2e);
      return m;
    };
    out.push_back(std::move(c));
  }
}

}  // namespace hal::conformance::cases
