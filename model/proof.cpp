#include "model/proof.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "conformance/oracle.h"
#include "conformance/tensor_util.h"
#include "hal/error.h"
#include "hal/io/json_reader.h"
#include "hal/io/json_writer.h"
#include "hal/io/safetensors.h"
#include "hal/registry.h"
#include "model/generate.h"

namespace hal::model {

using conformance::HostCopy;
using conformance::Score;

namespace {

std::vector<std::uint8_t> to_bytes(const std::vector<double>& values, DType dt) {
  std::vector<std::uint8_t> out(values.size() * dtype_size(dt));
  for (std::size_t i = 0; i < values.size(); ++i) store_element(out.data(), dt, static_cast<std::int64_t>(i), values[i]);
  return out;
}

std::vector<double> to_values(const std::vector<std::uint8_t>& bytes, DType dt) {
  std::vector<double> out(bytes.size() / dtype_size(dt));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = load_element(bytes.data(), dt, static_cast<std::int64_t>(i));
  return out;
}

std::string stage_label(const StageInfo& at, std::int64_t batch) {
  if (at.seq_end - at.seq_begin == batch || at.seq_end <= at.seq_begin) return std::string(at.stage);
  return fmt::format("{}[seq {}]", at.stage, at.seq_begin);
}

// Collects hidden states and logits; with `score`, scores every op against
// the fp64 oracle of that op on the device's inputs.
class Recorder : public StepObserver {
 public:
  Recorder(bool score, std::int64_t layers, std::int64_t batch) : score_(score), layers_(layers), batch_(batch) {}
  StepRun take() { return std::exchange(step_, {}); }

  void before_op(const StageInfo&, const OpCall& call, Stream& s) override {
    if (!score_) return;
    copies_.clear();
    outputs_.clear();
    host_call_ = call;
    for_each_tensor(host_call_, [&](std::string_view, Tensor& t, TensorRole role) {
      if (role == TensorRole::output) {
        outputs_.push_back(Buffer::for_tensor(conformance::cpu_device(), t.dtype, t.shape));
        t = outputs_.back().view(t.dtype, t.shape);
      } else {
        copies_.push_back(conformance::mirror_to_cpu(s, t));  // accumulated: the contents before the op
        t = copies_.back().view;
      }
    });
  }

  void after_op(const StageInfo& at, const OpCall& call, Stream& s) override {
    if (!score_) return;
    const std::vector<conformance::Reference> refs = conformance::compute_references(host_call_);
    const std::vector<Tensor> outs = conformance::outputs_of(call);
    LayerCheck& check = check_of(at.layer);
    for (std::size_t i = 0; i < outs.size(); ++i) {
      const HostCopy got = conformance::mirror_to_cpu(s, outs[i]);
      const std::vector<std::uint8_t> bytes = to_bytes(conformance::gather(got.view), outs[i].dtype);
      const Score sc = conformance::score_output(bytes, outs[i].dtype, refs[i].values, refs[i].bounds, refs[i].zero_sign);
      const std::string label = stage_label(at, batch_);
      if (sc.score > check.score || check.worst_stage.empty()) {
        check.score = std::max(check.score, sc.score);
        check.worst_stage = label;
      }
      if (!sc.passed() && check.failure.empty()) check.failure = fmt::format("{}: {}", label, sc.failure);
    }
  }

  void hidden(int, const Tensor& x, Stream& s) override {
    step_.hidden.push_back(conformance::download_bytes(s, x));
    step_.tokens = x.shape[0];
  }
  void logits(const Tensor& l, Stream& s) override { step_.logits = conformance::download_bytes(s, l); }

 private:
  LayerCheck& check_of(int layer) {
    if (step_.checks.empty()) step_.checks.resize(static_cast<std::size_t>(layers_ + 2));
    return step_.checks[static_cast<std::size_t>(layer + 1)];
  }
  bool score_;
  std::int64_t layers_, batch_;
  StepRun step_;
  OpCall host_call_;
  std::vector<HostCopy> copies_;
  std::vector<Buffer> outputs_;
};

// Runs the prefill and the decode steps, one StepRun each.
class StepSplitter : public StepObserver {
 public:
  StepSplitter(Recorder& r, ProofRun& run) : r_(r), run_(run) {}
  void before_op(const StageInfo& a, const OpCall& c, Stream& s) override { r_.before_op(a, c, s); }
  void after_op(const StageInfo& a, const OpCall& c, Stream& s) override { r_.after_op(a, c, s); }
  void hidden(int l, const Tensor& x, Stream& s) override { r_.hidden(l, x, s); }
  void logits(const Tensor& l, Stream& s) override {
    r_.logits(l, s);
    run_.steps.push_back(r_.take());
  }

 private:
  Recorder& r_;
  ProofRun& run_;
};

ProofRun run_model(const Checkpoint& ckpt, Device& dev, DType dtype, const ProofInput& in, bool score,
                   const std::vector<std::vector<std::int32_t>>* forced) {
  ProofRun run;
  run.device = dev.name();
  run.model = dev.info().model;
  run.arch = dev.info().arch;
  run.dtype = dtype;
  run.scored = score;
  Model model(ckpt, dev, dtype);
  Recorder rec(score, ckpt.config().num_layers, static_cast<std::int64_t>(in.prompts.size()));
  StepSplitter split(rec, run);
  // in.steps decode passes after the prefill: in.steps + 1 tokens chosen.
  const Generation g = generate(model, in.prompts, in.steps + 1, SamplingOptions{}, &split, forced);
  run.generated = g.tokens;
  return run;
}

std::string tokens_text(const ProofInput& in) {
  std::string s;
  for (std::size_t i = 0; i < in.prompts.size(); ++i) {
    if (i) s += '/';
    for (std::size_t j = 0; j < in.prompts[i].size(); ++j) s += fmt::format("{}{}", j ? "," : "", in.prompts[i][j]);
  }
  return s;
}

std::string num(double v) { return std::isfinite(v) ? fmt::format("{:.3g}", v) : std::string("inf"); }

}  // namespace

ProofRun run_oracle(const Checkpoint& ckpt, const ProofInput& in) {
  ProofRun run = run_model(ckpt, hal::device("cpu"), DType::f64, in, false, nullptr);
  if (ckpt.fp8_tensor_count() > 0)
    run.note = fmt::format("{} fp8 weights dequantised exactly (e4m3 value * block scale), f64 GEMMs, activations "
                           "not quantised: the drift below is the whole fp8 error", ckpt.fp8_tensor_count());
  return run;
}

ProofRun run_scored(const Checkpoint& ckpt, const std::string& device, DType dtype, const ProofInput& in,
                    const std::vector<std::vector<std::int32_t>>& forced) {
  return run_model(ckpt, hal::device(device), dtype, in, true, &forced);
}

Drift hidden_drift(const ProofRun& run, const ProofRun& oracle, std::size_t step, std::size_t layer_index) {
  const std::vector<double> ref = to_values(oracle.steps.at(step).hidden.at(layer_index), oracle.dtype);
  const std::vector<double> inf(ref.size(), INFINITY);
  return {conformance::score_output(run.steps.at(step).hidden.at(layer_index), run.dtype, ref, inf, false)};
}

Drift logits_drift(const ProofRun& run, const ProofRun& oracle, std::size_t step) {
  const std::vector<double> ref = to_values(oracle.steps.at(step).logits, oracle.dtype);
  const std::vector<double> inf(ref.size(), INFINITY);
  return {conformance::score_output(run.steps.at(step).logits, run.dtype, ref, inf, false)};
}

LogitsAgreement logits_agreement(const ProofRun& a, const ProofRun& b, std::size_t step, std::int64_t vocab) {
  const std::vector<double> x = to_values(a.steps.at(step).logits, a.dtype);
  const std::vector<double> y = to_values(b.steps.at(step).logits, b.dtype);
  LogitsAgreement r;
  if (x.size() != y.size() || vocab <= 0) return r;
  r.sequences = static_cast<std::int64_t>(x.size()) / vocab;
  for (std::int64_t s = 0; s < r.sequences; ++s) {
    const auto* xs = x.data() + s * vocab;
    const auto* ys = y.data() + s * vocab;
    r.top1_agree += (std::max_element(xs, xs + vocab) - xs) == (std::max_element(ys, ys + vocab) - ys);
    for (std::int64_t i = 0; i < vocab; ++i) r.max_abs_diff = std::max(r.max_abs_diff, std::fabs(xs[i] - ys[i]));
  }
  return r;
}

void write_record(const std::string& path, const ProofRun& run, const Checkpoint& ckpt, const ProofInput& in) {
  io::SafetensorsFile f;
  f.metadata["format"] = "hal-model-record-1";
  f.metadata["device"] = run.device;
  f.metadata["model"] = run.model;
  f.metadata["arch"] = run.arch;
  f.metadata["dtype"] = std::string(dtype_name(run.dtype));
  f.metadata["fingerprint"] = fmt::format("{:016x}", ckpt.fingerprint());
  f.metadata["tokens"] = tokens_text(in);
  f.metadata["steps"] = std::to_string(in.steps);
  std::string checks = "[";
  const ModelConfig& c = ckpt.config();
  for (std::size_t s = 0; s < run.steps.size(); ++s) {
    const StepRun& st = run.steps[s];
    checks += s ? ",[" : "[";
    for (std::size_t l = 0; l < st.checks.size(); ++l)
      checks += fmt::format("{}{{\"score\":{},\"stage\":{},\"failure\":{}}}", l ? "," : "", io::json_number(st.checks[l].score),
                            io::json_string(st.checks[l].worst_stage), io::json_string(st.checks[l].failure));
    checks += "]";
    for (std::size_t l = 0; l < st.hidden.size(); ++l)
      f.tensors.push_back({fmt::format("step{}.hidden{}", s, l), run.dtype, Shape{st.tokens, c.hidden_size}, st.hidden[l]});
    f.tensors.push_back({fmt::format("step{}.logits", s), run.dtype,
                         Shape{static_cast<std::int64_t>(in.prompts.size()), c.vocab_size}, st.logits});
  }
  f.metadata["checks"] = checks + "]";
  io::write_safetensors(path, f);
}

ProofRun load_record(const std::string& path, const Checkpoint& ckpt, const ProofInput& in) {
  const io::SafetensorsFile f = io::read_safetensors(path);
  auto meta = [&](const std::string& key) {
    const auto it = f.metadata.find(key);
    if (it == f.metadata.end())
      throw Error(ErrorCode::io_error, fmt::format("'{}': not a hal model recording (no '{}' in its metadata)", path, key));
    return it->second;
  };
  if (meta("format") != "hal-model-record-1")
    throw Error(ErrorCode::io_error, fmt::format("'{}': format '{}', expected hal-model-record-1", path, meta("format")));
  if (meta("fingerprint") != fmt::format("{:016x}", ckpt.fingerprint()))
    throw Error(ErrorCode::invalid_argument,
                fmt::format("'{}' was recorded from another checkpoint (fingerprint {}, '{}' has {:016x})", path,
                            meta("fingerprint"), ckpt.dir(), ckpt.fingerprint()));
  if (meta("tokens") != tokens_text(in) || meta("steps") != std::to_string(in.steps))
    throw Error(ErrorCode::invalid_argument,
                fmt::format("'{}' was recorded with --tokens {} --steps {}; give the same", path, meta("tokens"), meta("steps")));
  ProofRun run;
  run.device = meta("device");
  run.model = meta("model") + ", recorded";
  run.arch = meta("arch");
  const auto dt = parse_dtype(meta("dtype"));
  if (!dt) throw Error(ErrorCode::io_error, fmt::format("'{}': unknown dtype '{}'", path, meta("dtype")));
  run.dtype = *dt;
  run.scored = true;
  const io::JsonValue checks = io::parse_json(meta("checks"), path + " (checks)");
  std::map<std::string, const io::NamedTensor*> by_name;
  for (const io::NamedTensor& t : f.tensors) by_name[t.name] = &t;
  auto tensor = [&](const std::string& name) -> const std::vector<std::uint8_t>& {
    const auto it = by_name.find(name);
    if (it == by_name.end() || it->second->dtype != run.dtype)
      throw Error(ErrorCode::io_error, fmt::format("'{}': tensor '{}' missing or not {}", path, name, dtype_name(run.dtype)));
    return it->second->bytes;
  };
  const std::int64_t layers = ckpt.config().num_layers;
  if (!checks.is_array() || static_cast<std::int64_t>(checks.items().size()) != in.steps + 1)
    throw Error(ErrorCode::io_error, fmt::format("'{}': checks of {} steps expected", path, in.steps + 1));
  for (std::size_t s = 0; s < checks.items().size(); ++s) {
    StepRun st;
    const io::JsonValue& cs = checks.items()[s];
    if (!cs.is_array() || static_cast<std::int64_t>(cs.items().size()) != layers + 2)
      throw Error(ErrorCode::io_error, fmt::format("'{}': step {} has not {} layer checks", path, s, layers + 2));
    for (const io::JsonValue& c : cs.items()) {
      const io::JsonValue* sc = c.find("score");
      const io::JsonValue* stage = c.find("stage");
      const io::JsonValue* fail = c.find("failure");
      if (!sc || !stage || !fail || !stage->is_string() || !fail->is_string())
        throw Error(ErrorCode::io_error, fmt::format("'{}': malformed layer check in step {}", path, s));
      st.checks.push_back({sc->is_number() ? sc->number() : INFINITY, stage->text(), fail->text()});
    }
    for (std::int64_t l = 0; l <= layers; ++l) st.hidden.push_back(tensor(fmt::format("step{}.hidden{}", s, l)));
    st.logits = tensor(fmt::format("step{}.logits", s));
    const std::size_t row = static_cast<std::size_t>(ckpt.config().hidden_size) * dtype_size(run.dtype);
    st.tokens = row ? static_cast<std::int64_t>(st.hidden[0].size() / row) : 0;
    run.steps.push_back(std::move(st));
  }
  return run;
}

bool print_report(const std::vector<const ProofRun*>& runs, const ProofRun& oracle, const ModelConfig& c) {
  const std::int64_t L = c.num_layers;
  fmt::print("oracle: {} in f64 ({}){}\n", oracle.device, oracle.model, oracle.note.empty() ? "" : "; " + oracle.note);
  for (std::size_t r = 0; r < runs.size(); ++r)
    fmt::print("run {}: {} in {} ({}, {})\n", static_cast<char>('A' + r), runs[r]->device, dtype_name(runs[r]->dtype),
               runs[r]->model, runs[r]->arch);
  fmt::print("score: worst op error / contract bound on the device's own inputs (pass <= 1); nmse, max ulp: against "
             "the fp64 run of the whole model\n\n");
  std::string head = fmt::format("{:<12}", "prefill");
  for (std::size_t r = 0; r < runs.size(); ++r)
    head += fmt::format(" | {}: {:>8} {:<18} {:>9} {:>7}", static_cast<char>('A' + r), "score", "worst op", "nmse", "max ulp");
  fmt::print("{}\n", head);
  bool all_pass = true;
  for (std::int64_t i = 0; i <= L + 1; ++i) {
    const std::string name = i == 0 ? "embedding" : i == L + 1 ? "logits" : fmt::format("layer {}", i - 1);
    std::string line = fmt::format("{:<12}", name);
    for (const ProofRun* run : runs) {
      const LayerCheck& ch = run->steps[0].checks.at(static_cast<std::size_t>(i));
      const Drift d = i == L + 1 ? logits_drift(*run, oracle, 0) : hidden_drift(*run, oracle, 0, static_cast<std::size_t>(i));
      line += fmt::format(" | {:>11} {:<18.18} {:>9} {:>7}", num(ch.score), ch.worst_stage, num(d.score.nmse), d.score.max_ulp);
    }
    fmt::print("{}\n", line);
  }
  fmt::print("\n");
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const char tag = static_cast<char>('A' + r);
    std::string first = "none";
    for (std::size_t s = 0; s < runs[r]->steps.size() && first == "none"; ++s)
      for (std::size_t i = 0; i < runs[r]->steps[s].checks.size(); ++i) {
        const LayerCheck& ch = runs[r]->steps[s].checks[i];
        if (ch.failure.empty()) continue;
        const std::string layer = i == 0 ? "embedding" : static_cast<std::int64_t>(i) == L + 1 ? "logits" : fmt::format("layer {}", i - 1);
        first = fmt::format("{}{} ({})", layer, s ? fmt::format(" of decode step {}", s) : "", ch.failure);
        all_pass = false;
        break;
      }
    fmt::print("{}: first layer over its bound: {}\n", tag, first);
  }
  for (std::size_t s = 0; s < oracle.steps.size(); ++s) {
    std::string line = s == 0 ? "prefill logits:" : fmt::format("decode step {}:", s);
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const LogitsAgreement a = logits_agreement(*runs[r], oracle, s, c.vocab_size);
      double worst = 0;
      for (const LayerCheck& ch : runs[r]->steps[s].checks) worst = std::max(worst, ch.score);
      line += fmt::format("  {}: score {}, top-1 {}/{} with the oracle, largest logit difference {}", static_cast<char>('A' + r),
                          num(worst), a.top1_agree, a.sequences, num(a.max_abs_diff));
    }
    for (std::size_t r = 1; r < runs.size(); ++r) {
      const LogitsAgreement a = logits_agreement(*runs[0], *runs[r], s, c.vocab_size);
      line += fmt::format("  A-{}: top-1 {}/{}, largest logit difference {}", static_cast<char>('A' + r), a.top1_agree,
                          a.sequences, num(a.max_abs_diff));
    }
    fmt::print("{}\n", line);
  }
  fmt::print("{}\n", all_pass ? "every op of every run is within the contract"
                              : "CONTRACT VIOLATED: an op exceeded its bound (see above)");
  return all_pass;
}

}  // namespace hal::model
