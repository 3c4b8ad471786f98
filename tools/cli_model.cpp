// `hal model`: Hugging Face checkpoints on hal devices.
//   hal model info DIR
//   hal model run DIR [--device DEV] [--dtype DT] (--tokens 1,2,3[/4,5] | --prompt TEXT) [--steps N]
//                     [--logits out.npy] [--temperature T --top-k K --seed S]
//   hal model compare DIR --device A [--against B] [--dtype DT] (--tokens ... | --prompt ...) [--steps N]
//                     [--record FILE | --compare FILE]
//   hal model bench [DIR | --synthetic MB] [--device DEV] [--prompt-tokens N] [--decode-steps N] [--rounds R]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/suite/runner.h"
#include "hal/error.h"
#include "hal/io/npy.h"
#include "hal/registry.h"
#include "model/generate.h"
#include "model/proof.h"
#include "model/synthetic.h"
#include "model/tokenizer.h"
#include "tools/cli.h"

namespace hal::tools {

namespace {

using namespace hal::model;

constexpr const char* kUsage =
    "usage: hal model info DIR\n"
    "       hal model run DIR [--device DEV] [--dtype DT] (--tokens 1,2,3[/4,5] | --prompt TEXT) [--steps N]\n"
    "                         [--logits out.npy] [--temperature T] [--top-k K] [--seed S]\n"
    "       hal model compare DIR --device A [--against B] [--dtype DT] (--tokens ... | --prompt ...) [--steps N]\n"
    "                         [--record FILE | --compare FILE]\n"
    "       hal model bench [DIR | --synthetic MB] [--device DEV] [--dtype DT] [--prompt-tokens N]\n"
    "                         [--decode-steps N] [--rounds R] [--keep DIR] [--unfused]\n"
    "                         [--column-blocks N]\n"
    "\n"
    "DIR is a Hugging Face checkpoint folder: config.json and model.safetensors (or shards with\n"
    "model.safetensors.index.json); LlamaForCausalLM, Qwen2ForCausalLM, MistralForCausalLM.\n"
    "--tokens: token ids, sequences separated by '/'. --prompt needs a byte-level BPE tokenizer.json\n"
    "(GPT-2, Llama 3, Qwen2); otherwise tokenisation is the user's job.\n"
    "--dtype: the run's dtype (default: the checkpoint's); f64 on the cpu is the oracle. fp8 (F8_E4M3,\n"
    "128x128 block scales) weights run through quantize_fp8 + gemm_fp8 in f32 or bf16; in f64 they are\n"
    "dequantised exactly and the activations are not quantised (the real-valued model).\n"
    "run: prefill, then --steps tokens (greedy unless --temperature > 0); --logits writes the logits the\n"
    "last token was chosen from, f32 [sequences, vocab].\n"
    "compare: every op scored against the fp64 oracle on its own inputs (the contract), every layer's\n"
    "hidden state and the logits against the fp64 run of the whole model; exit 1 if an op is over its bound.\n"
    "For an fp8 checkpoint that drift is the whole fp8 error (the oracle does not quantise).\n"
    "bench: prefill and decode tokens/s, decode's weight bytes per second against the copy ceiling;\n"
    "--synthetic MB writes a random bf16 Llama checkpoint of about MB megabytes first; --unfused runs\n"
    "q/k/v and gate/up as one GEMM each (the default fuses them; same bits on the cpu), to measure the gain;\n"
    "--column-blocks N stores the cpu's bias-free linears as N column blocks (default: one per thread; 1:\n"
    "[in, out] as before; same bits).\n";

struct Args {
  std::string sub, dir, device, against, dtype, tokens, prompt, logits, record, compare, keep;
  std::int64_t steps = 0, top_k = 0, prompt_tokens = 128, decode_steps = 32, rounds = 3, synthetic_mb = 0;
  double temperature = 0;
  bool unfused = false;
  std::int64_t column_blocks = 0;  // LoadOptions::column_blocks
  std::uint64_t seed = 0;
};

std::int64_t parse_int(const std::string& key, const std::string& v) {
  char* end = nullptr;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || x < 0) throw UsageError(fmt::format("{}: expected a non-negative integer, given '{}'", key, v));
  return x;
}

Args parse_args(int argc, char** argv) {
  Args a;
  if (argc < 2) throw UsageError("hal model: expected info, run, compare or bench (see hal model --help)");
  a.sub = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(fmt::format("{} needs a value", k));
      return argv[++i];
    };
    if (k == "--device") a.device = value();
    else if (k == "--against") a.against = value();
    else if (k == "--dtype") a.dtype = value();
    else if (k == "--tokens") a.tokens = value();
    else if (k == "--prompt") a.prompt = value();
    else if (k == "--logits") a.logits = value();
    else if (k == "--record") a.record = value();
    else if (k == "--compare") a.compare = value();
    else if (k == "--keep") a.keep = value();
    else if (k == "--unfused" && a.sub == "bench") a.unfused = true;
    else if (k == "--column-blocks" && a.sub == "bench") a.column_blocks = std::max<std::int64_t>(1, parse_int(k, value()));
    else if (k == "--steps") a.steps = parse_int(k, value());
    else if (k == "--top-k") a.top_k = parse_int(k, value());
    else if (k == "--seed") a.seed = static_cast<std::uint64_t>(parse_int(k, value()));
    else if (k == "--prompt-tokens") a.prompt_tokens = parse_int(k, value());
    else if (k == "--decode-steps") a.decode_steps = parse_int(k, value());
    else if (k == "--rounds") a.rounds = std::max<std::int64_t>(1, parse_int(k, value()));
    else if (k == "--synthetic") a.synthetic_mb = parse_int(k, value());
    else if (k == "--temperature") {
      const std::string v = value();
      char* end = nullptr;
      a.temperature = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(a.temperature >= 0)) throw UsageError(fmt::format("--temperature: expected >= 0, given '{}'", v));
    } else if (!k.empty() && k[0] == '-') {
      throw UsageError(fmt::format("hal model {}: unknown option '{}'", a.sub, k));
    } else if (a.dir.empty()) {
      a.dir = k;
    } else {
      throw UsageError(fmt::format("hal model {}: unexpected argument '{}'", a.sub, k));
    }
  }
  if (a.device.empty()) {
    const char* env = std::getenv("HAL_DEVICE");
    a.device = env && *env ? env : "cpu";
  }
  return a;
}

std::vector<std::vector<std::int32_t>> parse_tokens(const std::string& text) {
  std::vector<std::vector<std::int32_t>> out(1);
  std::string cur;
  auto push = [&] {
    if (cur.empty()) throw UsageError(fmt::format("--tokens '{}': an empty id", text));
    const std::int64_t v = parse_int("--tokens", cur);
    if (v > INT32_MAX) throw UsageError(fmt::format("--tokens: id {} does not fit int32", v));
    out.back().push_back(static_cast<std::int32_t>(v));
    cur.clear();
  };
  for (char ch : text) {
    if (ch == ',') push();
    else if (ch == '/') push(), out.emplace_back();
    else if (ch != ' ') cur += ch;
  }
  push();
  return out;
}

std::vector<std::vector<std::int32_t>> prompts_of(const Args& a, const std::optional<Tokenizer>& tok) {
  if (!a.tokens.empty() && !a.prompt.empty()) throw UsageError("give --tokens or --prompt, not both");
  if (!a.tokens.empty()) return parse_tokens(a.tokens);
  if (a.prompt.empty()) throw UsageError("give --tokens 1,2,3[/4,5] or --prompt TEXT");
  if (!tok)
    throw UsageError(fmt::format("--prompt: '{}' has no tokenizer.json; tokenise with the model's tokenizer and pass --tokens", a.dir));
  std::vector<std::vector<std::int32_t>> p{tok->encode(a.prompt)};
  if (p[0].empty()) throw UsageError("--prompt: the text gives no tokens");
  return p;
}

DType dtype_of(const Args& a, const Checkpoint& ckpt) {
  if (a.dtype.empty()) return ckpt.stored_dtype();
  const auto dt = parse_dtype(a.dtype);
  if (!dt) throw UsageError(fmt::format("--dtype: unknown dtype '{}'", a.dtype));
  return *dt;
}

std::string ids_text(const std::vector<std::int32_t>& ids) {
  std::string s;
  for (std::size_t i = 0; i < ids.size(); ++i) s += fmt::format("{}{}", i ? "," : "", ids[i]);
  return s;
}

int info_main(const Args& a) {
  const Checkpoint ckpt(a.dir);
  const ModelConfig& c = ckpt.config();
  fmt::print("checkpoint: {}\n", a.dir);
  fmt::print("architecture: {}\n", c.architecture_name);
  fmt::print("layers {}, hidden {}, intermediate {}, heads {} (kv heads {}, head_dim {}), vocab {}\n", c.num_layers,
             c.hidden_size, c.intermediate_size, c.num_heads, c.num_kv_heads, c.head_dim, c.vocab_size);
  fmt::print("rms_norm_eps {}, rope_theta {}", c.rms_norm_eps, c.rope_theta);
  if (c.rope_scaling)
    fmt::print(", rope_scaling llama3 (factor {}, low {}, high {}, original context {})", c.rope_scaling->factor,
               c.rope_scaling->low_freq_factor, c.rope_scaling->high_freq_factor,
               c.rope_scaling->original_max_position_embeddings);
  fmt::print("\n");
  fmt::print("embeddings {}; biases: q/k/v {}, o {}, mlp {}", c.tie_word_embeddings ? "tied" : "untied",
             c.qkv_bias ? "yes" : "no", c.o_bias ? "yes" : "no", c.mlp_bias ? "yes" : "no");
  if (c.sliding_window) fmt::print("; sliding window {} (longer sequences are refused)", *c.sliding_window);
  fmt::print("\n");
  std::map<std::string, std::int64_t> by_dtype;
  for (const CheckpointTensor& t : ckpt.tensors()) by_dtype[std::string(dtype_name(t.entry->dtype))] += checked_numel(t.entry->shape);
  std::string dtypes;
  for (const auto& [dt, n] : by_dtype) dtypes += fmt::format("{}{} {} params", dtypes.empty() ? "" : ", ", dt, n);
  fmt::print("parameters: {} ({:.3f} MB stored; {})\n", ckpt.parameter_count(), static_cast<double>(ckpt.stored_bytes()) * 1e-6, dtypes);
  if (const std::int64_t n = ckpt.fp8_tensor_count(); n > 0) {
    std::string names;
    for (const CheckpointTensor& t : ckpt.tensors())
      if (t.is_fp8()) names += fmt::format("{}{}", names.empty() ? "" : ", ", t.name);
    fmt::print("fp8 weights: {} F8_E4M3 linear weights with 128x128 block scales ({} stored bytes, scales included; "
               "run through quantize_fp8 1x128 + gemm_fp8): {}\n", n, ckpt.fp8_bytes(), names);
  } else {
    fmt::print("fp8 weights: none\n");
  }
  fmt::print("files: {}\n", ckpt.files().size());
  const std::optional<Tokenizer> tok = Tokenizer::load(a.dir);
  fmt::print("tokenizer: {}\n", tok ? tok->description() : "none (tokenisation is the user's job: pass --tokens)");
  return kExitOk;
}

int run_model_main(const Args& a) {
  const Checkpoint ckpt(a.dir);
  const std::optional<Tokenizer> tok = Tokenizer::load(a.dir);
  const auto prompts = prompts_of(a, tok);
  Model model(ckpt, hal::device(a.device), dtype_of(a, ckpt));
  const SamplingOptions so{a.temperature, a.top_k, a.seed};
  const Generation g = generate(model, prompts, a.steps, so);
  for (std::size_t i = 0; i < g.tokens.size(); ++i) {
    fmt::print("sequence {}: {}\n", i, ids_text(g.tokens[i]));
    if (tok && !a.prompt.empty()) fmt::print("text {}: {}\n", i, tok->decode(g.tokens[i]));
  }
  if (!a.logits.empty()) {
    io::HostArray arr;
    arr.dtype = DType::f32;
    arr.shape = Shape{static_cast<std::int64_t>(prompts.size()), model.config().vocab_size};
    arr.bytes.resize(g.last_logits.size() * sizeof(float));
    std::memcpy(arr.bytes.data(), g.last_logits.data(), arr.bytes.size());
    io::write_npy(a.logits, arr);
  }
  return kExitOk;
}

int compare_main(const Args& a) {
  if (!a.record.empty() && !a.compare.empty()) throw UsageError("give --record or --compare, not both");
  const Checkpoint ckpt(a.dir);
  const std::optional<Tokenizer> tok = Tokenizer::load(a.dir);
  ProofInput in{prompts_of(a, tok), a.steps};
  const DType dt = dtype_of(a, ckpt);
  fmt::print("model compare: {} ({} layers, hidden {}, vocab {}), {} sequences, {} decode steps\n",
             ckpt.config().architecture_name, ckpt.config().num_layers, ckpt.config().hidden_size,
             ckpt.config().vocab_size, in.prompts.size(), in.steps);
  const ProofRun oracle = run_oracle(ckpt, in);
  std::vector<ProofRun> runs;
  if (!a.compare.empty()) {
    runs.push_back(load_record(a.compare, ckpt, in));
    fmt::print("recorded run from '{}'\n", a.compare);
  }
  runs.push_back(run_scored(ckpt, a.device, dt, in, oracle.generated));
  if (!a.record.empty()) {
    write_record(a.record, runs.back(), ckpt, in);
    fmt::print("recorded {} to '{}'\n", runs.back().device, a.record);
  }
  if (!a.against.empty()) runs.push_back(run_scored(ckpt, a.against, dt, in, oracle.generated));
  std::vector<const ProofRun*> ptrs;
  for (const ProofRun& r : runs) ptrs.push_back(&r);
  return print_report(ptrs, oracle, ckpt.config()) ? kExitOk : kExitError;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int bench_main_model(const Args& a) {
  std::string dir = a.dir;
  if (a.synthetic_mb > 0) {
    if (!dir.empty()) throw UsageError("give DIR or --synthetic MB, not both");
    dir = a.keep.empty() ? fmt::format("/tmp/hal-model-bench-{}mb", a.synthetic_mb) : a.keep;
    const SyntheticSpec spec = synthetic_spec_for_bytes(static_cast<std::uint64_t>(a.synthetic_mb) << 20);
    write_synthetic_checkpoint(dir, spec);
  } else if (dir.empty()) {
    throw UsageError("hal model bench: give DIR or --synthetic MB");
  }
  const Checkpoint ckpt(dir);
  Device& dev = hal::device(a.device);
  const DType dt = dtype_of(a, ckpt);
  Model model(ckpt, dev, dt, LoadOptions{.fuse_projections = !a.unfused, .column_blocks = static_cast<int>(std::min<std::int64_t>(a.column_blocks, 1024))});
  const ModelConfig& c = model.config();
  bench::RunnerOptions ro;
  ro.with_vendor = false;
  ro.min_time_ms = 100;
  bench::Runner runner(dev, ro);
  std::vector<std::int32_t> prompt(static_cast<std::size_t>(a.prompt_tokens));
  for (std::size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<std::int32_t>((i * 7919 + 13) % static_cast<std::size_t>(c.vocab_size));
  const std::vector<std::vector<std::int32_t>> prompts{prompt};
  // Decode reads every weight once per token (the KV cache is small beside
  // it here), except an untied embedding table, of which it gathers a row.
  const double decode_bytes = static_cast<double>(model.weights().decode_bytes);
  std::vector<double> prefill_tps, decode_tps, ceiling_gbps, fraction;
  for (std::int64_t r = 0; r < a.rounds + 1; ++r) {  // round 0 warms up
    // Each round beside its own ceiling: on a shared machine the memory's
    // rate drifts by tens of percent within seconds.
    const double ceiling = r == 0 ? 0 : runner.measure_copy_ceiling().copy_gbps;
    Session s(model, 1, a.prompt_tokens + a.decode_steps);
    const auto t0 = std::chrono::steady_clock::now();
    s.step(prompts);
    const auto t1 = std::chrono::steady_clock::now();
    for (std::int64_t i = 0; i < a.decode_steps; ++i) {
      const std::vector<std::vector<std::int32_t>> next{{static_cast<std::int32_t>(i % c.vocab_size)}};
      s.step(next);
    }
    const auto t2 = std::chrono::steady_clock::now();
    if (r == 0) continue;
    prefill_tps.push_back(static_cast<double>(a.prompt_tokens) / std::chrono::duration<double>(t1 - t0).count());
    decode_tps.push_back(static_cast<double>(a.decode_steps) / std::chrono::duration<double>(t2 - t1).count());
    ceiling_gbps.push_back(ceiling);
    fraction.push_back(decode_tps.back() * decode_bytes * 1e-9 / ceiling);
  }
  auto range = [](const std::vector<double>& v, double scale, int digits) {
    return fmt::format("{:.{}f}-{:.{}f}", *std::min_element(v.begin(), v.end()) * scale, digits,
                       *std::max_element(v.begin(), v.end()) * scale, digits);
  };
  fmt::print("model bench on {} ({}), {} in {}: {} layers, hidden {}, vocab {}, weights {:.1f} MB ({:.1f} MB read per "
             "decode step){}{}\n", dev.name(), dev.info().model, c.architecture_name, dtype_name(dt), c.num_layers,
             c.hidden_size, c.vocab_size, static_cast<double>(model.weights().device_bytes) * 1e-6, decode_bytes * 1e-6,
             a.unfused ? ", projections unfused" : "",
             a.column_blocks == 1 ? ", linears [in, out]" : "");
  if (!dev.info().kernels.empty()) fmt::print("kernels: {}\n", kernels_text(dev.info().kernels));
  fmt::print("prefill {} tokens: median {:.1f} tokens/s (range {}, {} rounds)\n", a.prompt_tokens, median(prefill_tps),
             range(prefill_tps, 1, 1), prefill_tps.size());
  fmt::print("decode {} steps: median {:.2f} tokens/s (range {}) = {:.2f} GB/s of weights\n", a.decode_steps,
             median(decode_tps), range(decode_tps, 1, 2), median(decode_tps) * decode_bytes * 1e-9);
  fmt::print("copy ceiling before each round: median {:.2f} GB/s (range {}; {})\n", median(ceiling_gbps),
             range(ceiling_gbps, 1, 2), runner.ceilings().copy_source);
  fmt::print("decode reaches a median {:.0f}% of the copy ceiling (range {}%, each round against its own)\n",
             100.0 * median(fraction), range(fraction, 100, 0));
  return kExitOk;
}

}  // namespace

int model_main(int argc, char** argv) {
  if (argc >= 2 && is_help_flag(argv[1])) {
    fmt::print("{}", kUsage);
    return kExitOk;
  }
  for (int i = 1; i < argc; ++i)
    if (is_help_flag(argv[i])) {
      fmt::print("{}", kUsage);
      return kExitOk;
    }
  const Args a = parse_args(argc, argv);
  if (a.sub != "bench" && a.dir.empty()) throw UsageError(fmt::format("hal model {}: give the checkpoint folder", a.sub));
  if (a.sub == "info") return info_main(a);
  if (a.sub == "run") return run_model_main(a);
  if (a.sub == "compare") return compare_main(a);
  if (a.sub == "bench") return bench_main_model(a);
  throw UsageError(fmt::format("hal model: unknown subcommand '{}' (info, run, compare, bench)", a.sub));
}

}  // namespace hal::tools
