// `hal run OP --device DEV --in NAME=FILE.npy[:DTYPE] ... --attr KEY=VALUE ...
//          --out y=FILE.npy[:DTYPE]`: runs one op on NumPy files.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "hal/registry.h"
#include "hal/stream.h"
#include "ops/ops.h"
#include "tools/cli.h"
#include "hal/io/npy.h"
#include "tools/run_ops.h"

namespace hal::tools {

using io::convert;
using io::npy_descr;
using io::read_npy;

namespace {

struct FileSpec {
  std::string path;
  std::optional<DType> dtype;  // conversion on load / save
};

struct RunArgs {
  std::string op;
  std::string device;
  std::map<std::string, FileSpec> inputs;
  std::map<std::string, std::string> attrs;
  std::map<std::string, FileSpec> outputs;
  bool help = false;
};

std::string help_text() {
  std::string text =
      "usage: hal run OP [--device DEV] --in NAME=FILE.npy[:DTYPE] ... [--attr KEY=VALUE ...]\n"
      "               --out NAME=FILE.npy[:DTYPE] ...\n"
      "\n"
      "Runs one op on NumPy .npy files (C order, little-endian f4 f8 f2 i1 i4 i8 b1).\n"
      "  --device DEV   cpu, cuda:N or hip:N (default: $HAL_DEVICE, else cpu)\n"
      "  --in           an input; ':DTYPE' converts it on load (a=a.npy:bf16 rounds to bf16)\n"
      "  --attr         an attribute of the op (bool: true/false/1/0; lists: 1,0,2)\n"
      "  --out          an output to save (most ops have one, y; gemm's C is y); ':DTYPE'\n"
      "                 converts it on save. bf16 and fp8 results are saved as f32, since\n"
      "                 NumPy has no such dtypes. Optional outputs are computed only when named.\n"
      "\n"
      "ops (inputs [optional inputs], attributes, and outputs when not just y):\n";
  for (const OpSpec& s : op_specs()) {
    std::string ins = fmt::format("{}", fmt::join(s.required_inputs, ","));
    if (!s.optional_inputs.empty()) ins += fmt::format(" [{}]", fmt::join(s.optional_inputs, ","));
    std::string line = fmt::format("  {:<12} {:<22} {}", s.name, ins.empty() ? "-" : ins,
                                   s.attrs.empty() ? "" : fmt::format("attrs: {}", fmt::join(s.attrs, " ")));
    if (s.outputs.size() != 1 || s.outputs.front() != "y" || !s.optional_outputs.empty()) {
      std::string outs = fmt::format("{}", fmt::join(s.outputs, ","));
      if (!s.optional_outputs.empty()) outs += fmt::format(" [{}]", fmt::join(s.optional_outputs, ","));
      line += fmt::format("  outputs: {}", outs);
    }
    line.erase(line.find_last_not_of(' ') + 1);
    text += line + "\n";
  }
  text +=
      "\n"
      "examples:\n"
      "  hal run add --in a=a.npy --in b=b.npy --out y=y.npy\n"
      "  hal run gemm --device cuda:0 --in a=a.npy:bf16 --in b=b.npy:bf16 --attr trans_b=1 --out y=c.npy\n"
      "  hal run fill_random --attr shape=4,5 --attr distribution=normal --attr seed=7 --out y=r.npy\n";
  return text;
}

std::pair<std::string, std::string> split_key_value(const std::string& text, std::string_view option) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError(fmt::format("{} expects NAME=VALUE, given '{}'", option, text));
  return {text.substr(0, eq), text.substr(eq + 1)};
}

// FILE.npy[:DTYPE]: a ':' suffix without '/' or '.' is a dtype.
FileSpec parse_file_spec(const std::string& text, std::string_view option) {
  FileSpec spec{text, std::nullopt};
  const std::size_t colon = text.rfind(':');
  if (colon != std::string::npos) {
    const std::string suffix = text.substr(colon + 1);
    if (suffix.find('/') == std::string::npos && suffix.find('.') == std::string::npos) {
      const auto t = parse_dtype(suffix);
      if (!t) throw UsageError(fmt::format("{}: unknown dtype '{}' in '{}'", option, suffix, text));
      spec = {text.substr(0, colon), t};
    }
  }
  if (spec.path.empty()) throw UsageError(fmt::format("{}: missing file name in '{}'", option, text));
  return spec;
}

RunArgs parse_args(int argc, char** argv) {
  RunArgs args;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (is_help_flag(arg)) {
      args.help = true;
      return args;
    }
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(fmt::format("{} needs a value", arg));
      return argv[++i];
    };
    if (arg == "--device") {
      args.device = value();
    } else if (arg == "--in") {
      const auto [name, file] = split_key_value(value(), "--in");
      if (args.inputs.count(name)) throw UsageError(fmt::format("input '{}' given twice", name));
      args.inputs[name] = parse_file_spec(file, "--in");
    } else if (arg == "--attr") {
      const auto [key, v] = split_key_value(value(), "--attr");
      if (args.attrs.count(key)) throw UsageError(fmt::format("attribute '{}' given twice", key));
      args.attrs[key] = v;
    } else if (arg == "--out") {
      const auto [name, file] = split_key_value(value(), "--out");
      if (args.outputs.count(name)) throw UsageError(fmt::format("output '{}' given twice", name));
      args.outputs[name] = parse_file_spec(file, "--out");
    } else if (!arg.empty() && arg[0] == '-') {
      throw UsageError(fmt::format("run: unknown option '{}' (see hal run --help)", arg));
    } else if (args.op.empty()) {
      args.op = arg;
    } else {
      throw UsageError(fmt::format("run: unexpected argument '{}' (one op per run)", arg));
    }
  }
  return args;
}

bool contains(const std::vector<std::string_view>& v, std::string_view x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Names are checked before any file is read or device touched.
void check_names(const OpSpec& spec, const RunArgs& args) {
  for (const auto& [name, file] : args.inputs) {
    if (!contains(spec.required_inputs, name) && !contains(spec.optional_inputs, name)) {
      std::vector<std::string_view> all = spec.required_inputs;
      all.insert(all.end(), spec.optional_inputs.begin(), spec.optional_inputs.end());
      throw UsageError(fmt::format("{}: unknown input '{}' (inputs: {})", spec.name, name,
                                   all.empty() ? "none" : fmt::format("{}", fmt::join(all, ", "))));
    }
  }
  for (std::string_view name : spec.required_inputs)
    if (!args.inputs.count(std::string(name)))
      throw UsageError(fmt::format("{}: missing input '{}' (--in {}=FILE.npy)", spec.name, name, name));
  for (const auto& [key, v] : args.attrs)
    if (!contains(spec.attrs, key))
      throw UsageError(fmt::format("{}: unknown attribute '{}' (attributes: {})", spec.name, key,
                                   spec.attrs.empty() ? "none" : fmt::format("{}", fmt::join(spec.attrs, ", "))));
  if (args.outputs.empty())
    throw UsageError(fmt::format("{}: missing --out {}=FILE.npy", spec.name, spec.outputs.front()));
  for (const auto& [name, file] : args.outputs) {
    if (!contains(spec.outputs, name) && !contains(spec.optional_outputs, name)) {
      std::vector<std::string_view> all = spec.outputs;
      all.insert(all.end(), spec.optional_outputs.begin(), spec.optional_outputs.end());
      throw UsageError(fmt::format("{}: unknown output '{}' (outputs: {})", spec.name, name, fmt::join(all, ", ")));
    }
  }
}

}  // namespace

int run_main(int argc, char** argv) {
  const RunArgs args = parse_args(argc, argv);
  if (args.help) {
    std::fputs(help_text().c_str(), stdout);
    return kExitOk;
  }
  if (args.op.empty()) throw UsageError("run: missing OP (see hal run --help)");
  const OpSpec* spec = find_op_spec(args.op);
  if (!spec) throw UsageError(fmt::format("run: unknown op '{}' (see hal run --help for the list)", args.op));
  check_names(*spec, args);

  Device& dev = args.device.empty() ? default_device() : device(args.device);
  Stream stream(dev);
  DeviceArena arena(dev, stream);
  // Inputs go straight from their files into device buffers; the builders
  // get placeholders bound to them (DeviceArena::bind). One converted on
  // load (':DTYPE') is read and converted on the host first.
  std::map<std::string, HostArray> inputs;
  for (const auto& [name, file] : args.inputs) {
    if (file.dtype) {
      HostArray a = read_npy(file.path);
      inputs[name] = a.dtype == *file.dtype ? std::move(a) : convert(a, *file.dtype);
    } else {
      const Tensor t = arena.load_npy(file.path);
      HostArray& placeholder = inputs[name];  // std::map: the address stays valid
      placeholder.dtype = t.dtype;
      placeholder.shape = t.shape;
      arena.bind(placeholder, t);
    }
  }
  std::set<std::string> requested;
  for (const auto& [name, file] : args.outputs) requested.insert(name);
  const BuiltCall built = build_call(*spec, inputs, Attrs(args.attrs), requested, arena);
  // Each file's dtype is settled before the op runs, so that a bad --out costs nothing.
  std::map<std::string, DType> save_as;
  for (const auto& [name, file] : args.outputs) {
    const auto it = built.outputs.find(name);
    if (it == built.outputs.end()) throw UsageError(fmt::format("{}: the call does not write output '{}'", spec->name, name));
    DType t = it->second.dtype;
    if (file.dtype)
      t = *file.dtype;
    else if (npy_descr(t).empty())
      t = DType::f32;  // bf16 / fp8: NumPy has no such dtype
    if (npy_descr(t).empty())
      throw UsageError(fmt::format("--out {}: .npy cannot store {} (use f32, f64, f16, i8, i32, i64 or bool)", name,
                                   dtype_name(t)));
    save_as[name] = t;
  }
  ops::run(stream, built.call);
  for (const auto& [name, file] : args.outputs) arena.save_npy(file.path, built.outputs.at(name), save_as.at(name));
  return kExitOk;
}

}  // namespace hal::tools
