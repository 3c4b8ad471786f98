// The model-level training case: one training step of the Llama-style
// decoder layer of model_case.cpp (hidden 256, 4 query / 2 kv heads of 64,
// ffn 512, seq 33), with a token embedding before it, a final RMSNorm and a
// vocabulary projection (V = 256) after it: forward, cross-entropy (loss and
// dlogits fused), backward through every op, then AdamW on every parameter
// (from moments that are not zero, at step 5, so that bias correction and
// both moment updates are exercised). The step is train::TrainingStep, the
// very list of calls `hal train` runs.
//
// Scoring, as in the forward case: every stage (every gradient and every
// updated parameter, m, v and f32 master) against the fp64 oracle of the
// inputs the device gave that stage, with the stage op's contract bound. The
// case fails on the first stage beyond its bound, naming stage and output.
// Then the whole step runs a second time from the same state: every tensor of
// the step (parameters, gradients, moments, activations, loss) must be the
// same bits. Beside the verdict, informative: the relative error of the
// gradients and of the loss against the whole step evaluated in fp64 on the CPU
// from the same initial state.
#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "conformance/cases.h"
#include "conformance/harness.h"
#include "conformance/model_training_case.h"
#include "conformance/stage_scoring.h"
#include "conformance/tensor_util.h"
#include "hal/error.h"
#include "hal/philox.h"
#include "ops/ops.h"
#include "train/training_step.h"

namespace hal::conformance {

namespace {
constexpr std::int64_t kAdamStep = 5;
constexpr const char* kShapeClass = "llama_layer_step_s33_h256_q4_kv2_d64_ffn512_v256_adamw";
}  // namespace

train::ModelShape training_case_shape() {
  train::ModelShape m;
  m.layers = 1;
  m.hidden = 256;
  m.heads = 4;
  m.kv_heads = 2;
  m.head_dim = 64;
  m.ffn = 512;
  m.vocab = 256;
  m.batch = 1;
  m.seq = 33;
  return m;
}

std::int64_t training_case_adam_step() { return kAdamStep; }

train::OptimizerSettings training_case_optimizer() {
  train::OptimizerSettings o;
  o.lr = 1e-2f;
  o.weight_decay = 0.1f;
  return o;
}

std::uint64_t training_case_seed(DType dt) {
  return case_seed(cases::case_name("model_training", dt, kShapeClass), 1);
}

// m ~ N(0, 0.01), v ~ U[0, 1e-4): moments as after a few steps.
void training_case_initial_state(train::TrainingStep& step, Stream& s, std::uint64_t seed) {
  step.init_parameters(s, seed);
  std::uint64_t salt = seed;
  for (const train::Parameter& p : step.parameters()) {
    ops::fill_random(s, p.m, {.seed = ++salt, .distribution = RandomDistribution::normal, .a = 0.0f, .b = 0.01f});
    ops::fill_random(s, p.v, {.seed = ++salt, .distribution = RandomDistribution::uniform, .a = 0.0f, .b = 1e-4f});
  }
  const auto n = static_cast<std::size_t>(step.shape().rows());
  std::vector<std::int32_t> ids(n), targets(n);
  for (std::size_t i = 0; i < n; ++i) {
    ids[i] = static_cast<std::int32_t>(philox_bits(seed + 1, i) % 256u);
    targets[i] = static_cast<std::int32_t>(philox_bits(seed + 2, i) % 256u);
  }
  step.set_batch(s, ids, targets);
  step.zero_accumulated_gradients(s);
  s.synchronize();
}

std::vector<train::Stage> training_case_stages(const train::TrainingStep& step) {
  std::vector<train::Stage> st = step.forward_backward();
  for (train::Stage& a : step.optimizer(kAdamStep, training_case_optimizer())) st.push_back(std::move(a));
  return st;
}

}  // namespace hal::conformance

namespace hal::conformance::cases {

namespace {

// Every tensor of the step, as bytes, by name.
std::map<std::string, std::vector<std::uint8_t>> snapshot(Stream& s, const train::TrainingStep& step) {
  std::map<std::string, std::vector<std::uint8_t>> out;
  for (const auto& [name, t] : step.tensors()) out[name] = download_bytes(s, t);
  return out;
}

// The whole step in fp64 on the CPU from the device's initial state (every
// tensor widened exactly), for the informative end-to-end figures.
std::map<std::string, std::vector<double>> oracle_step(const std::map<std::string, std::vector<std::uint8_t>>& start,
                                                       const train::TrainingStep& device_step) {
  Device& cpu = cpu_device();
  Stream s(cpu);
  train::TrainingStep step(cpu, DType::f64, device_step.shape());
  for (const auto& [name, t] : step.tensors()) {
    const Tensor& from = device_step.tensor(name);
    const std::vector<std::uint8_t>& bytes = start.at(name);
    std::vector<std::uint8_t> wide(static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype));
    for (std::int64_t i = 0; i < t.numel(); ++i)
      store_element(wide.data(), t.dtype, i, load_element(bytes.data(), from.dtype, i));
    s.upload(t, wide.data());
  }
  for (const auto& [name, t] : device_step.tensors())
    if (name.starts_with("master.")) {  // the f64 step has no master: its param is the master's value
      const std::string pname = name.substr(7);
      const std::vector<std::uint8_t>& bytes = start.at(name);
      std::vector<double> wide(static_cast<std::size_t>(t.numel()));
      for (std::int64_t i = 0; i < t.numel(); ++i) wide[static_cast<std::size_t>(i)] = load_element(bytes.data(), DType::f32, i);
      s.upload(step.tensor(pname), wide.data());
    }
  train::run_stages(s, training_case_stages(step));
  s.synchronize();
  std::map<std::string, std::vector<double>> out;
  for (const auto& [name, t] : step.tensors()) out[name] = gather(t);
  return out;
}

double relative_error(const std::vector<std::uint8_t>& got, DType dt, const std::vector<double>& ref) {
  double e2 = 0, r2 = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = load_element(got.data(), dt, static_cast<std::int64_t>(i)) - ref[i];
    e2 += d * d, r2 += ref[i] * ref[i];
  }
  return r2 > 0 ? std::sqrt(e2 / r2) : std::sqrt(e2);
}

ModelOutcome run_training_step(DType dt, Device& dev) {
  ModelOutcome outcome;
  Stream s(dev);
  const std::uint64_t seed = training_case_seed(dt);
  auto step = std::make_unique<train::TrainingStep>(dev, dt, training_case_shape());
  training_case_initial_state(*step, s, seed);
  const auto start = snapshot(s, *step);
  std::size_t scored = 0;
  std::string worst_stage;
  for (const train::Stage& st : training_case_stages(*step)) {
    const Support sup = ops::supports(dev, st.call);
    if (!sup.ok) {
      outcome.passed = false;
      outcome.reason = fmt::format("stage {}: declined by the device: {}", st.name, sup.reason);
      return outcome;
    }
    const ScoredStage r = run_scored(s, st.call);
    ++scored;
    if (r.worst.score >= outcome.score.score) worst_stage = st.name;
    outcome.score.score = std::max(outcome.score.score, r.worst.score);
    outcome.score.nmse = std::max(outcome.score.nmse, r.worst.nmse);
    outcome.score.max_ulp = std::max(outcome.score.max_ulp, r.worst.max_ulp);
    if (!r.worst.passed() && outcome.passed) {
      outcome.passed = false;
      outcome.reason = fmt::format("stage {} output {}: {}", st.name, r.failed_output, r.worst.failure);
    }
  }
  const auto first = snapshot(s, *step);

  // The second run, from a fresh step with the same initial state: same bits.
  step = std::make_unique<train::TrainingStep>(dev, dt, training_case_shape());
  training_case_initial_state(*step, s, seed);
  train::run_stages(s, training_case_stages(*step));
  s.synchronize();
  const auto second = snapshot(s, *step);
  for (const auto& [name, bytes] : first)
    if (bytes != second.at(name) && outcome.passed) {
      outcome.passed = false;
      outcome.reason = fmt::format("not deterministic: two runs of the step differ in '{}'", name);
    }
  outcome.output = first.at("l0.wq");

  const auto ref = oracle_step(start, *step);
  double worst_grad = 0;
  std::string worst_grad_name;
  for (const train::Parameter& p : step->parameters()) {
    const std::string g = "d." + p.name;
    const double e = relative_error(first.at(g), dt, ref.at(g));
    if (e >= worst_grad) worst_grad = e, worst_grad_name = g;
  }
  const DType loss_dt = step->tensor("loss").dtype;
  const std::string summary = fmt::format(
      "{} stages scored, worst {} ({:.3g}); end-to-end vs the fp64 step (informative): loss {:.3g}, worst gradient "
      "{} {:.3g}",
      scored, worst_stage, outcome.score.score, relative_error(first.at("loss"), loss_dt, ref.at("loss")),
      worst_grad_name, worst_grad);
  outcome.reason = outcome.reason.empty() ? summary : fmt::format("{}; {}", outcome.reason, summary);
  return outcome;
}

}  // namespace

void add_model_training(std::vector<Case>& out) {
  for (DType dt : {DType::f32, DType::bf16}) {
    Case c;
    c.op = "model_training";
    c.name = case_name("model_training", dt, kShapeClass);
    c.dtype = dt;
    c.outputs = {{dt, {256, 256}, std::nullopt}};  // the updated l0.wq
    c.is_model = true;
    c.run_model = [dt](Device& dev) { return run_training_step(dt, dev); };
    out.push_back(std::move(c));
  }
}

}  // namespace hal::conformance::cases
