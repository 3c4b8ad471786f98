// Writes the model-level training case (conformance/model_training_case.h)
// for an independent check by torch.autograd (torch_layer_step_check.py):
//   step_f32.safetensors, step_bf16.safetensors: the CPU's step, stage by
//     stage: what each stage read ("<i>.in.<name>"), what it wrote
//     ("<i>.out.<name>", widened exactly to f64) and the contract bound of
//     each output element ("<i>.bound.<name>"); metadata "stage.<i>" holds the
//     stage's name, op and attributes;
//   step_f64.safetensors: the whole step in fp64 on the CPU (the oracle
//     path) from the f32 case's initial state: "init.<tensor>" and
//     "final.<tensor>" for every tensor of the step.
// Usage: hal_training_step_dump OUT_DIR
#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <variant>

#include "conformance/model_training_case.h"
#include "conformance/stage_scoring.h"
#include "conformance/tensor_util.h"
#include "hal/error.h"
#include "hal/io/safetensors.h"
#include "hal/registry.h"
#include "ops/ops.h"

namespace {

using namespace hal;

io::NamedTensor f64_tensor(const std::string& name, const Shape& shape, const std::vector<double>& values) {
  io::NamedTensor t{name, DType::f64, shape, {}};
  t.bytes.resize(values.size() * sizeof(double));
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

std::vector<double> widen(const std::vector<std::uint8_t>& bytes, DType dt, std::int64_t n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = load_element(bytes.data(), dt, i);
  return v;
}

// The attributes torch needs to compute the stage, as "key=value" pairs.
std::string attributes(const OpCall& call) {
  return std::visit(
      [](const auto& c) -> std::string {
        using C = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<C, GemmCall>)
          return fmt::format("trans_a={} trans_b={} alpha={:.9g} beta={:.9g}", int(c.trans_a), int(c.trans_b), c.alpha,
                             c.beta);
        else if constexpr (std::is_same_v<C, NormCall> || std::is_same_v<C, NormBackwardCall>)
          return fmt::format("eps={:.9g}", c.eps);
        else if constexpr (std::is_same_v<C, RopeCall> || std::is_same_v<C, RopeBackwardCall>)
          return fmt::format("theta={:.9g}", c.theta);
        else if constexpr (std::is_same_v<C, AttentionCall> || std::is_same_v<C, AttentionBackwardCall>)
          return fmt::format("scale={:.9g} causal={}", c.scale, int(c.causal));
        else if constexpr (std::is_same_v<C, CrossEntropyCall>)
          return fmt::format("reduction={}", to_string(c.reduction));
        else if constexpr (std::is_same_v<C, AdamwCall>)
          return fmt::format("lr={:.9g} beta1={:.9g} beta2={:.9g} eps={:.9g} weight_decay={:.9g} step={}", c.lr, c.beta1,
                             c.beta2, c.eps, c.weight_decay, c.step);
        else
          return "";
      },
      call);
}

void dump_stages(DType dt, const std::string& path) {
  Device& cpu = device("cpu");
  Stream s(cpu);
  train::TrainingStep step(cpu, dt, conformance::training_case_shape());
  conformance::training_case_initial_state(step, s, conformance::training_case_seed(dt));
  io::SafetensorsFile f;
  int i = 0;
  for (const train::Stage& st : conformance::training_case_stages(step)) {
    const OpCall call = ops::validate(st.call);  // defaults resolved (attention's scale)
    const conformance::ScoredStage r = conformance::run_scored(s, call);
    f.metadata[fmt::format("stage.{}", i)] = fmt::format("{}|{}|{}", st.name, op_name(call), attributes(call));
    for (std::size_t k = 0; k < r.inputs.size(); ++k) {
      const Tensor& v = r.inputs[k].view;
      f.tensors.push_back(f64_tensor(fmt::format("{}.in.{}", i, r.input_names[k]), v.shape, conformance::gather(v)));
    }
    const std::vector<Tensor> outs = conformance::outputs_of(call);
    for (std::size_t k = 0; k < outs.size(); ++k) {
      const std::string& name = r.output_names[k];
      f.tensors.push_back(f64_tensor(fmt::format("{}.out.{}", i, name), outs[k].shape,
                                     widen(r.outputs[k], outs[k].dtype, outs[k].numel())));
      f.tensors.push_back(f64_tensor(fmt::format("{}.bound.{}", i, name), outs[k].shape, r.references[k].bounds));
    }
    ++i;
  }
  f.metadata["stages"] = std::to_string(i);
  f.metadata["dtype"] = std::string(dtype_name(dt));
  io::write_safetensors(path, f);
}

void dump_f64_step(const std::string& path) {
  Device& cpu = device("cpu");
  Stream s(cpu);
  // The f32 case's initial state, widened exactly.
  train::TrainingStep start(cpu, DType::f32, conformance::training_case_shape());
  conformance::training_case_initial_state(start, s, conformance::training_case_seed(DType::f32));
  train::TrainingStep step(cpu, DType::f64, conformance::training_case_shape());
  for (const auto& [name, t] : step.tensors()) {
    const std::vector<std::uint8_t> bytes = conformance::download_bytes(s, start.tensor(name));
    std::vector<std::uint8_t> wide(static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype));
    for (std::int64_t k = 0; k < t.numel(); ++k)
      store_element(wide.data(), t.dtype, k, load_element(bytes.data(), start.tensor(name).dtype, k));
    s.upload(t, wide.data());
  }
  io::SafetensorsFile f;
  for (const auto& [name, t] : step.tensors()) f.tensors.push_back(f64_tensor("init." + name, t.shape, conformance::gather(t)));
  train::run_stages(s, conformance::training_case_stages(step));
  s.synchronize();
  for (const auto& [name, t] : step.tensors())
    f.tensors.push_back(f64_tensor("final." + name, t.shape, conformance::gather(t)));
  const train::OptimizerSettings o = conformance::training_case_optimizer();
  f.metadata["adam"] = fmt::format("lr={:.9g} beta1={:.9g} beta2={:.9g} eps={:.9g} weight_decay={:.9g} step={}", o.lr,
                                   o.beta1, o.beta2, o.eps, o.weight_decay, conformance::training_case_adam_step());
  for (const train::Parameter& p : step.parameters())
    f.metadata["decay." + p.name] = fmt::format("{:.9g}", o.weight_decay * p.weight_decay);
  const train::ModelShape& m = step.shape();
  f.metadata["shape"] = fmt::format("layers={} hidden={} heads={} kv_heads={} head_dim={} ffn={} vocab={} batch={} seq={} "
                                    "eps={:.9g} theta={:.9g}",
                                    m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.ffn, m.vocab, m.batch, m.seq,
                                    m.norm_eps, m.rope_theta);
  io::write_safetensors(path, f);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fputs("usage: hal_training_step_dump OUT_DIR\n", stderr);
    return 2;
  }
  try {
    const std::string dir = argv[1];
    dump_stages(DType::f32, dir + "/step_f32.safetensors");
    dump_stages(DType::bf16, dir + "/step_bf16.safetensors");
    dump_f64_step(dir + "/step_f64.safetensors");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hal_training_step_dump: %s\n", e.what());
    return 1;
  }
  return 0;
}
