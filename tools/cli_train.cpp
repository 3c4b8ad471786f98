// hal train: trains a small Llama-style model on a text file, byte by byte.
//   hal train [--device DEV] [--steps N] [--seed S] [--text FILE] [--dtype DT] [--lr LR]
//             [--batch B] [--seq T] [--threads N] [--json F] [--record F | --compare F] [--quiet]
// The loop lives in train/ (train/trainer.h); this file parses the options,
// prints the progress line, writes the JSON report and records or compares
// the loss curve (a safetensors file: the curve and the run's settings).
#include <fmt/format.h>

#include <tbb/global_control.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>

#include "comm/collective.h"
#include "comm/communicator.h"
#include "hal/error.h"
#include "hal/io/json_writer.h"
#include "hal/io/output_file.h"
#include "hal/io/safetensors.h"
#include "hal/buffer.h"
#include "hal/registry.h"
#include "tools/cli.h"
#include "train/trainer.h"

namespace hal::tools {

namespace {

// Debian ships these with base-files: always present on a Debian system.
constexpr const char* kDefaultTexts[] = {"/usr/share/common-licenses/GPL-3", "/usr/share/common-licenses/GPL-2",
                                         "/usr/share/common-licenses/Apache-2.0"};

constexpr const char* kUsage =
    "usage: hal train [--device DEV] [--steps N] [--seed S] [--text FILE] [--dtype f32|bf16|f16]\n"
    "                 [--lr LR] [--batch B] [--seq T] [--threads N] [--json F] [--record F | --compare F]\n"
    "                 [--tolerance X] [--quiet] [--data-parallel]\n"
    "\n"
    "Trains a Llama-style model (2 layers, d_model 128, 4 query heads on 2 kv heads of 32, SwiGLU 384,\n"
    "byte vocabulary 256, untied head) with AdamW on a text file, printing a progress line (step, loss,\n"
    "tokens/s). Defaults: --device cpu (HAL_DEVICE), --steps 100, --seed 0, --dtype f32, --lr 3e-3,\n"
    "--batch 8, --seq 64, --text /usr/share/common-licenses/GPL-3 (else GPL-2, Apache-2.0).\n"
    "--threads N caps the CPU's oneTBB threads (the loss curve is the same bits for any N).\n"
    "--json F: the settings and every step's loss. --record F: the loss curve and settings (safetensors);\n"
    "--compare F: a recorded curve with the same settings must match step for step within --tolerance\n"
    "(relative, default 0.02; exit 1 naming the first step beyond it; 0 means bit for bit).\n"
    "--data-parallel (under mpirun -np P): each rank trains on its own batches, the gradients are averaged\n"
    "over the ranks (hal::comm::all_reduce, rank order) before AdamW; rank 0 prints and writes the files\n"
    "('{rank}' in a file name gives one per rank); at the end every rank's parameters must be bitwise\n"
    "identical (checked with all_gather; exit 1 if not). The loss shown is rank 0's batch.\n";

struct Args {
  std::string device, text, json, record, compare, dtype = "f32";
  std::int64_t steps = 100, batch = 8, seq = 64, threads = 0;
  std::uint64_t seed = 0;
  double lr = 3e-3, tolerance = 0.02;
  bool quiet = false, data_parallel = false;
};

std::int64_t parse_count(const std::string& key, const std::string& v, std::int64_t min) {
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno || x < min)
    throw UsageError(fmt::format("hal train {}: expected an integer >= {}, given '{}'", key, min, v));
  return x;
}

double parse_real(const std::string& key, const std::string& v) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !std::isfinite(x) || x < 0)
    throw UsageError(fmt::format("hal train {}: expected a finite number >= 0, given '{}'", key, v));
  return x;
}

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--quiet" || k == "--data-parallel") {
      (k == "--quiet" ? a.quiet : a.data_parallel) = true;
      continue;
    }
    if (i + 1 >= argc) throw UsageError(fmt::format("hal train {}: expected a value (see hal train --help)", k));
    const std::string v = argv[++i];
    if (k == "--device") a.device = v;
    else if (k == "--text") a.text = v;
    else if (k == "--json") a.json = v;
    else if (k == "--record") a.record = v;
    else if (k == "--compare") a.compare = v;
    else if (k == "--dtype") a.dtype = v;
    else if (k == "--steps") a.steps = parse_count(k, v, 1);
    else if (k == "--batch") a.batch = parse_count(k, v, 1);
    else if (k == "--seq") a.seq = parse_count(k, v, 1);
    else if (k == "--threads") a.threads = parse_count(k, v, 1);
    else if (k == "--seed") a.seed = static_cast<std::uint64_t>(parse_count(k, v, 0));
    else if (k == "--lr") a.lr = parse_real(k, v);
    else if (k == "--tolerance") a.tolerance = parse_real(k, v);
    else throw UsageError(fmt::format("hal train: unknown option '{}' (see hal train --help)", k));
  }
  if (!a.record.empty() && !a.compare.empty()) throw UsageError("hal train: --record and --compare exclude each other");
  if (a.dtype != "f32" && a.dtype != "bf16" && a.dtype != "f16")
    throw UsageError(fmt::format("hal train --dtype: expected f32, bf16 or f16, given '{}'", a.dtype));
  return a;
}

std::string default_text() {
  for (const char* p : kDefaultTexts)
    if (std::filesystem::exists(p)) return p;
  throw Error(ErrorCode::io_error,
              "hal train: none of /usr/share/common-licenses/GPL-3, GPL-2, Apache-2.0 exists (Debian's base-files "
              "ships them); give a text with --text FILE");
}

std::uint64_t fnv1a(const std::string& bytes) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : bytes) h = (h ^ ch) * 1099511628211ull;
  return h;
}

// The settings a recorded curve must share with the run that compares to it.
std::map<std::string, std::string> settings(const Args& a, const train::TrainOptions& o, const train::ByteCorpus& c,
                                            std::uint64_t text_hash, const std::string& device) {
  const train::ModelShape& m = o.shape;
  return {{"seed", std::to_string(o.seed)},
          {"steps", std::to_string(o.steps)},
          {"dtype", a.dtype},
          {"lr", fmt::format("{}", o.optimizer.lr)},
          {"model", fmt::format("layers={} hidden={} heads={} kv_heads={} head_dim={} ffn={} vocab={} batch={} seq={}",
                                m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.ffn, m.vocab, m.batch, m.seq)},
          {"text_bytes", std::to_string(c.size())},
          {"text_fnv1a", fmt::format("{:016x}", text_hash)},  // the same text, not only the same name
          {"device", device}};
}


int compare_curve(const Args& a, const std::map<std::string, std::string>& mine, const std::vector<double>& losses) {
  const io::SafetensorsFile rec = io::read_safetensors(a.compare);
  for (const auto& [key, value] : mine) {
    if (key == "device") continue;
    auto it = rec.metadata.find(key);
    if (it == rec.metadata.end() || it->second != value)
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("hal train --compare '{}': recorded with {} = '{}', this run has '{}' (the curves of "
                              "different settings are not comparable)",
                              a.compare, key, it == rec.metadata.end() ? "(absent)" : it->second, value));
  }
  const io::NamedTensor* curve = nullptr;
  for (const io::NamedTensor& t : rec.tensors)
    if (t.name == "loss") curve = &t;
  if (!curve || curve->dtype != DType::f64 || curve->shape.rank() != 1 ||
      curve->shape[0] != static_cast<std::int64_t>(losses.size()))
    throw Error(ErrorCode::io_error, fmt::format("hal train --compare '{}': expected an f64 tensor 'loss' of {} steps",
                                                 a.compare, losses.size()));
  std::vector<double> ref(losses.size());
  std::memcpy(ref.data(), curve->bytes.data(), ref.size() * sizeof(double));
  const std::string other = rec.metadata.count("device") ? rec.metadata.at("device") : "?";
  double worst = 0;
  std::int64_t worst_step = 0;
  bool identical = true;
  for (std::size_t i = 0; i < losses.size(); ++i) {
    identical = identical && std::memcmp(&ref[i], &losses[i], sizeof(double)) == 0;
    const double rel = std::abs(losses[i] - ref[i]) / std::max(1.0, std::abs(ref[i]));
    if (!(rel <= worst)) worst = rel, worst_step = static_cast<std::int64_t>(i) + 1;
  }
  fmt::print("compare with {} ({}): {} steps, {}, worst relative difference {:.3g}{} (tolerance {})\n", a.compare,
             other, losses.size(), identical ? "bit for bit identical" : "not bitwise identical", worst,
             worst > 0 ? fmt::format(" at step {}", worst_step) : "", a.tolerance);
  if (!(worst <= a.tolerance)) {
    const auto i = static_cast<std::size_t>(worst_step - 1);
    fmt::print(stderr, "hal train --compare: step {}: loss {:.9g}, recorded {:.9g} on {}: beyond the tolerance {}\n",
               worst_step, losses[i], ref[i], other, a.tolerance);
    return kExitError;
  }
  return kExitOk;
}

std::string for_rank(std::string path, int rank) {
  for (std::size_t at; (at = path.find("{rank}")) != std::string::npos;) path.replace(at, 6, std::to_string(rank));
  return path;
}

// Every rank's parameters, gathered and compared with rank 0's bit for bit.
// Returns the first parameter that differs ("" when none does).
std::string first_parameter_differing(comm::Communicator& c, Stream& s, const train::TrainingStep& step) {
  for (const train::Parameter& p : step.parameters()) {
    Shape all = p.param.shape;
    all[0] *= c.size();
    Buffer gathered = Buffer::for_tensor(step.device(), p.param.dtype, all);
    comm::all_gather(c, s, p.param, gathered.view(p.param.dtype, all));
    const std::size_t n = static_cast<std::size_t>(p.param.numel()) * dtype_size(p.param.dtype);
    std::vector<std::uint8_t> host(n * static_cast<std::size_t>(c.size()));
    s.copy_to_host(host.data(), gathered.data(), host.size());
    s.synchronize();
    for (int r = 1; r < c.size(); ++r)
      if (std::memcmp(host.data(), host.data() + n * static_cast<std::size_t>(r), n) != 0)
        return fmt::format("{} (rank {} differs from rank 0)", p.name, r);
  }
  return "";
}

}  // namespace

int train_main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (is_help_flag(argv[i])) {
      std::fputs(kUsage, stdout);
      return kExitOk;
    }
  const Args a = parse_args(argc, argv);
  std::optional<tbb::global_control> threads;
  if (a.threads > 0)
    threads.emplace(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(a.threads));
  const std::string text_path = a.text.empty() ? default_text() : a.text;
  train::TrainOptions o;
  o.steps = a.steps;
  o.seed = a.seed;
  o.dtype = *parse_dtype(a.dtype);
  o.optimizer.lr = static_cast<float>(a.lr);
  o.shape.batch = a.batch;
  o.shape.seq = a.seq;
  const train::ByteCorpus corpus = train::ByteCorpus::from_file(text_path, static_cast<std::size_t>(a.seq) + 1);
  Device& dev = a.device.empty() ? default_device() : hal::device(a.device);
  const std::string dev_name = dev.info().name;
  // Data parallelism: one communicator over the job's ranks; the gradient
  // list of the step (train::Parameter) is what gets averaged.
  std::unique_ptr<comm::Communicator> communicator;
  Args out = a;  // the files this rank writes
  if (a.data_parallel) {
    communicator = comm::create_communicator(dev);
    o.rank = communicator->rank();
    o.ranks = communicator->size();
    o.reduce_gradients = [&](Stream& s, const std::vector<train::Parameter>& params) {
      for (const train::Parameter& p : params) comm::all_reduce(*communicator, s, p.grad, p.grad, comm::ReduceOp::avg);
    };
    if (o.rank != 0) out.quiet = true;
    for (std::string* f : {&out.json, &out.record, &out.compare}) {
      const bool per_rank = f->find("{rank}") != std::string::npos;
      *f = per_rank ? for_rank(*f, static_cast<int>(o.rank)) : (o.rank == 0 ? *f : std::string());
    }
  }
  auto meta = settings(a, o, corpus, fnv1a(corpus.text()), dev_name);
  meta["ranks"] = std::to_string(o.ranks);

  if (!out.quiet)
    fmt::print("hal train: {} on {} ({} bytes), {} steps of {} x {} tokens, {}, seed {}\n", dev_name, text_path,
               corpus.size(), o.steps, o.shape.batch, o.shape.seq, a.dtype, o.seed);
  const bool tty = isatty(fileno(stdout)) && !a.data_parallel;  // mpirun forwards no carriage returns
  std::unique_ptr<train::TrainingStep> final_step;
  const train::TrainResult r = train::train(dev, corpus, o, [&](const train::StepReport& s) {
    if (out.quiet) return;
    const std::string line = fmt::format("step {:>5}/{}  loss {:.4f}  {:.0f} tokens/s", s.step, o.steps, s.loss,
                                         static_cast<double>(s.tokens) / s.seconds);
    // On a terminal one line redrawn in place; in a log, every tenth step and the last.
    if (tty) fmt::print("\r{}{}", line, s.step == o.steps ? "\n" : "");
    else if (s.step % 10 == 0 || s.step == 1 || s.step == o.steps) fmt::print("{}\n", line);
    std::fflush(stdout);
  }, &final_step);
  if (communicator) {
    Stream s(dev);
    const std::string differs = first_parameter_differing(*communicator, s, *final_step);
    if (!differs.empty()) {
      fmt::print(stderr, "hal train --data-parallel: rank {}: parameter {} after {} steps\n", o.rank, differs, o.steps);
      return kExitError;
    }
    if (o.rank == 0)
      fmt::print("data parallel: {} ranks, gradients averaged each step; every rank's {} parameters bitwise identical\n",
                 o.ranks, final_step->parameters().size());
  }
  const double tokens_per_s = static_cast<double>(r.tokens) / r.seconds;
  if (!out.quiet)
    fmt::print("done: loss {:.4f} -> {:.4f} in {:.1f} s, {:.0f} tokens/s\n", r.losses.front(), r.losses.back(),
               r.seconds, tokens_per_s);

  if (!out.json.empty()) {
    std::string j = "{\n";
    for (const auto& [k, v] : meta) j += fmt::format("  {}: {},\n", io::json_string(k), io::json_string(v));
    j += fmt::format("  \"text\": {},\n  \"seconds\": {},\n  \"tokens_per_second\": {},\n  \"loss\": [",
                     io::json_string(text_path), io::json_number(r.seconds), io::json_number(tokens_per_s));
    for (std::size_t i = 0; i < r.losses.size(); ++i) j += (i ? ", " : "") + io::json_number(r.losses[i]);
    j += "]\n}\n";
    io::write_text_file(out.json, j);
  }
  if (!out.record.empty()) {
    io::SafetensorsFile f;
    f.metadata = meta;
    io::NamedTensor t{"loss", DType::f64, Shape{static_cast<std::int64_t>(r.losses.size())}, {}};
    t.bytes.resize(r.losses.size() * sizeof(double));
    std::memcpy(t.bytes.data(), r.losses.data(), t.bytes.size());
    f.tensors.push_back(std::move(t));
    io::write_safetensors(out.record, f);
  }
  for (double l : r.losses)
    if (!std::isfinite(l)) {
      fmt::print(stderr, "hal train: the loss is not finite ({}): the run diverged\n", l);
      return kExitError;
    }
  if (!out.compare.empty()) return compare_curve(out, meta, r.losses);
  return kExitOk;
}

}  // namespace hal::tools
