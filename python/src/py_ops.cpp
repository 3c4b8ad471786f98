// hal.ops: one Python function per op, generated from the op table of `hal
// run` (tools/run_ops.h: names, inputs, attributes, help), so a new op in
// that table is a new Python function. Inputs are hal tensors, DLPack objects
// (viewed, zero-copy) or array-likes (copied to the device); attributes are
// keyword arguments parsed by the same code as `hal run --attr`, and the call
// is built by the same builder as `hal run` (tools::build_call); the output is
// out= (any of the above that views memory) or allocated and returned.
#include <fmt/format.h>

#include <map>
#include <set>

#include "hal/error.h"
#include "hal/registry.h"
#include "ops/ops.h"
#include "python/src/py_tensor.h"
#include "tools/cli.h"
#include "tools/run_ops.h"
#include "tools/run_ops_training.h"

namespace hal::python {

namespace {

using tools::Attrs;
using tools::OpSpec;

// A hal tensor for an input or out= argument. DLPack objects are viewed (NumPy
// arrays only for out=, which must write into them: as inputs they are copied
// to `device`, which may be a GPU); anything else is copied to `device`.
PyTensor tensor_argument(const py::handle& h, Device* device, std::optional<DType> host_dtype = std::nullopt,
                         bool is_output = false) {
  if (py::isinstance<PyTensor>(h)) return h.cast<PyTensor>();
  if (is_output && !py::hasattr(h, "__dlpack__"))
    throw py::type_error(fmt::format("an output (or a tensor updated in place) must be a hal.Tensor or a DLPack array "
                                     "that hal can write into, not a {} (a copy would not be updated)",
                                     py::str(py::type::of(h)).cast<std::string>()));
  py::module_ hal = py::module_::import("hal");
  py::object np = py::module_::import("numpy");
  const bool view = py::hasattr(h, "__dlpack__") && (is_output || !py::isinstance<py::array>(h));
  if (view && !host_dtype) return hal.attr("from_dlpack")(h).cast<PyTensor>();
  py::object arr = np.attr("asarray")(h);
  return hal.attr("asarray")(arr, host_dtype ? py::cast(*host_dtype) : py::object(py::none()),
                             device ? py::cast(device, py::return_value_policy::reference) : py::object(py::none()))
      .cast<PyTensor>();
}

std::string attr_string(const py::handle& v) {
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>() ? "true" : "false";
  if (py::isinstance<DType>(v)) return std::string(dtype_name(v.cast<DType>()));
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)) return py::repr(v).cast<std::string>();
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    std::string out;
    for (const py::handle& e : v) out += (out.empty() ? "" : ",") + py::str(e).cast<std::string>();
    return out;
  }
  // NumPy and torch dtypes.
  try {
    if (auto t = dtype_from_python(v)) return std::string(dtype_name(*t));
  } catch (const hal::Error&) {
  }
  return py::str(v).cast<std::string>();
}

bool contains(const std::vector<std::string_view>& names, std::string_view n) {
  for (std::string_view x : names)
    if (x == n) return true;
  return false;
}

// ---- ops built by the op table's own builder ------------------------------

std::vector<std::string_view> all_outputs(const OpSpec& spec) {
  std::vector<std::string_view> v = spec.outputs;
  v.insert(v.end(), spec.optional_outputs.begin(), spec.optional_outputs.end());
  return v;
}

std::vector<std::string_view> all_inputs(const OpSpec& spec) {
  std::vector<std::string_view> v = spec.required_inputs;
  v.insert(v.end(), spec.optional_inputs.begin(), spec.optional_inputs.end());
  return v;
}

// The outputs a caller may give or ask for: those that are not also inputs
// (an output that is an input is updated in place: adamw's param, m, v).
std::vector<std::string_view> writable_outputs(const OpSpec& spec) {
  std::vector<std::string_view> v;
  for (std::string_view o : all_outputs(spec))
    if (!contains(all_inputs(spec), o)) v.push_back(o);
  return v;
}

// Ops whose outputs may be given by name (dx=tensor) or asked for (lse=True),
// besides out=: the training ops (several outputs, some updated in place) and
// ops with an optional output (attention's lse). The other ops take out= only,
// as they always have.
bool takes_named_outputs(const OpSpec& spec) {
  if (!spec.optional_outputs.empty()) return true;
  static const std::set<std::string_view> training = [] {
    std::vector<OpSpec> v;
    tools::add_training_op_specs(v);
    std::set<std::string_view> names;
    for (const OpSpec& s : tools::op_specs())
      for (const OpSpec& t : v)
        if (s.name == t.name) names.insert(s.name);
    return names;
  }();
  return training.count(spec.name) != 0;
}

// The outputs the caller gave (out= or by name) and the optional ones asked for with NAME=True.
struct GivenOutputs {
  std::map<std::string, PyTensor> tensors;
  std::set<std::string> requested;
};

GivenOutputs given_outputs(const OpSpec& spec, const py::object& out, const std::map<std::string, py::object>& named,
                           Device& dev) {
  const std::string op(spec.name);
  const std::vector<std::string_view> writable = writable_outputs(spec);
  GivenOutputs g;
  auto give = [&](std::string_view name, const py::handle& v) {
    if (v.is_none() || (py::isinstance<py::bool_>(v) && !v.cast<bool>())) return;
    const std::string n(name);
    if (g.requested.count(n)) throw py::type_error(fmt::format("hal.ops.{}() got output '{}' twice", op, n));
    g.requested.insert(n);
    if (py::isinstance<py::bool_>(v)) return;  // NAME=True: allocated and returned
    g.tensors.emplace(n, tensor_argument(v, &dev, std::nullopt, true));
  };
  if (!out.is_none()) {
    if (writable.empty())
      throw py::type_error(fmt::format("hal.ops.{}() takes no out=: it updates {} in place", op,
                                       fmt::join(all_outputs(spec), ", ")));
    std::size_t required = 0;
    for (std::string_view o : spec.outputs) required += contains(writable, o) ? 1 : 0;
    const bool sequence = py::isinstance<py::tuple>(out) || py::isinstance<py::list>(out);
    // An op with one output and none by name takes out= as that tensor, never a tuple.
    const bool single = writable.size() == 1 && !takes_named_outputs(spec);
    if ((!sequence && required == 1) || single) {
      give(writable[0], out);
    } else {
      if (!sequence || py::len(out) < required || py::len(out) > writable.size())
        throw py::type_error(fmt::format("hal.ops.{}(): out= is a tuple ({}) of {} to {} tensors (None: allocated)",
                                         op, fmt::join(writable, ", "), required, writable.size()));
      for (std::size_t i = 0; i < py::len(out); ++i) give(writable[i], out[py::int_(i)]);
    }
  }
  for (const auto& [name, v] : named) give(name, v);
  return g;
}

// Builds the call with the op table's builder (tools::build_call, as `hal run`
// does), for every op: every input is a placeholder bound to the caller's
// device tensor, so the builder sees the caller's memory and converts only
// what it must (rope's positions to i32), and every given output is bound by
// its name, so the builder writes there instead of allocating.
py::object run_through_table(const OpSpec& spec, const std::map<std::string, PyTensor>& in, const Attrs& attrs,
                             GivenOutputs given, Device& dev, const std::shared_ptr<Stream>& shared_stream) {
  Stream& stream = *shared_stream;
  const std::string op(spec.name);
  tools::DeviceArena arena(dev, stream);
  std::map<std::string, tools::HostArray> placeholders;
  for (const auto& [name, t] : in) {
    tools::HostArray& p = placeholders[name];  // std::map: the address stays valid
    p.dtype = t.view.dtype;
    p.shape = t.view.shape;
    arena.bind(p, t.view);
  }
  for (const auto& [name, g] : given.tensors) arena.bind_output(name, g.view);
  std::optional<tools::BuiltCall> built = tools::build_call(spec, placeholders, attrs, given.requested, arena);
  auto buffers = std::make_shared<std::vector<Buffer>>(arena.release_buffers());
  for (const auto& [name, g] : given.tensors) {
    const auto it = built->outputs.find(name);
    if (it == built->outputs.end() || it->second.data != g.view.data)
      throw_unsupported("python", op, fmt::format("output '{}' (the op table's builder does not write it)", name));
  }
  // The input an output is: by its name (adamw's param), or gemm's c, which is
  // its y (the table's "y" of an op with an input c).
  auto input_of = [&](const std::string& output) -> const PyTensor* {
    if (const auto i = in.find(output); i != in.end()) return &i->second;
    if (output == "y" && contains(spec.optional_inputs, "c"))
      if (const auto c = in.find("c"); c != in.end()) return &c->second;
    return nullptr;
  };
  // An output that is an input must be the caller's memory, not a converted copy.
  for (const auto& [name, t] : built->outputs) {
    const PyTensor* i = input_of(name);
    if (i && t.data != i->view.data)
      throw_invalid_argument(op, name, fmt::format("{} (it is updated in place: a converted copy would not be)",
                                                   dtype_name(t.dtype)),
                             std::string(dtype_name(i->view.dtype)));
  }
  {
    py::gil_scoped_release release;
    ops::run(stream, built->call);
  }
  std::vector<py::object> results;
  for (std::string_view o : all_outputs(spec)) {
    const std::string name(o);
    const auto it = built->outputs.find(name);
    if (it == built->outputs.end()) continue;
    PyTensor r{it->second, buffers};
    if (const auto g = given.tensors.find(name); g != given.tensors.end())
      r = g->second;
    else if (const PyTensor* i = input_of(name))
      r = *i;
    r.writes->stream = shared_stream;  // __dlpack__ and numpy() order after this stream
    results.push_back(py::cast(r));
  }
  if (results.size() == 1) return results[0];
  py::tuple t(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) t[i] = results[i];
  return t;
}

py::object call_op(const OpSpec& spec, const py::args& args, const py::kwargs& kwargs) {
  const std::string op(spec.name);
  std::vector<std::string_view> inputs = spec.required_inputs;
  inputs.insert(inputs.end(), spec.optional_inputs.begin(), spec.optional_inputs.end());
  if (args.size() > inputs.size())
    throw py::type_error(fmt::format("hal.ops.{}() takes at most {} positional inputs ({} given)", op, inputs.size(),
                                     args.size()));
  std::map<std::string, py::object> given;
  for (std::size_t i = 0; i < args.size(); ++i) given[std::string(inputs[i])] = args[i];
  py::object out = py::none(), stream = py::none(), device = py::none();
  std::map<std::string, std::string> attr_values;
  std::map<std::string, py::object> named_outputs;
  const bool named = takes_named_outputs(spec);
  for (const auto& [k, v] : kwargs) {
    const std::string key = k.cast<std::string>();
    if (key == "out") out = py::reinterpret_borrow<py::object>(v);
    else if (key == "stream") stream = py::reinterpret_borrow<py::object>(v);
    else if (key == "device") device = py::reinterpret_borrow<py::object>(v);
    else if (contains(inputs, key)) {
      if (given.count(key)) throw py::type_error(fmt::format("hal.ops.{}() got input '{}' twice", op, key));
      given[key] = py::reinterpret_borrow<py::object>(v);
    } else if (contains(spec.attrs, key)) {
      if (!v.is_none()) attr_values[key] = attr_string(v);
    } else if (named && contains(writable_outputs(spec), key)) {
      named_outputs[key] = py::reinterpret_borrow<py::object>(v);
    } else {
      throw py::type_error(fmt::format("hal.ops.{}() got an unexpected keyword argument '{}' (inputs: {}; options: {}{})",
                                       op, key, fmt::join(inputs, ", "), fmt::join(spec.attrs, ", "),
                                       named ? fmt::format("; outputs: {}", fmt::join(writable_outputs(spec), ", "))
                                                   : std::string()));
    }
  }
  for (std::string_view r : spec.required_inputs)
    if (!given.count(std::string(r)) || given[std::string(r)].is_none())
      throw py::type_error(fmt::format("hal.ops.{}() missing input '{}'", op, r));
  // The device: stream=, device=, the first hal tensor or DLPack input, out=, else hal's default.
  Device* dev = nullptr;
  if (!stream.is_none()) dev = &stream.cast<Stream&>().device();
  else if (!device.is_none()) dev = &device_from_python(device);
  // An input the op updates in place (also an output) is viewed, never copied.
  auto in_place = [&](const std::string& name) { return contains(all_outputs(spec), name); };
  std::map<std::string, PyTensor> in;
  for (const auto& [name, v] : given)
    if (!v.is_none() && (py::isinstance<PyTensor>(v) || py::hasattr(v, "__dlpack__")) &&
        (!py::isinstance<py::array>(v) || in_place(name))) {
      in.emplace(name, tensor_argument(v, dev, std::nullopt, in_place(name)));
      if (!dev) dev = &in.at(name).device();
    }
  if (!dev && !out.is_none() && (py::isinstance<PyTensor>(out) || py::hasattr(out, "__dlpack__")))
    dev = &tensor_argument(out, nullptr, std::nullopt, true).device();
  if (!dev) dev = &default_device();
  for (const auto& [name, v] : given) {
    if (v.is_none() || in.count(name)) continue;
    // rope's positions are i32 (NumPy's integers are i64), as in `hal run`.
    std::optional<DType> dt;
    if ((op == "rope" && name == "positions") || name == "offsets") dt = DType::i32;
    in.emplace(name, tensor_argument(v, dev, dt, in_place(name)));
  }
  // gemm's C (and the fp8 GEMMs'): input c, or out=, which is then C itself:
  // its contents are scaled by beta, and its dtype is C's (dtype= is not read).
  if (contains(spec.optional_inputs, "c") && !out.is_none()) {
    if (in.count("c")) throw tools::UsageError(fmt::format("{}: give c or out=, not both (c is the output)", op));
    in.emplace("c", tensor_argument(out, dev, std::nullopt, true));
    out = py::none();
    attr_values.erase("dtype");
  }
  const Attrs attrs(std::move(attr_values));
  return run_through_table(spec, in, attrs, given_outputs(spec, out, named_outputs, *dev), *dev,
                           shared_stream_for(*dev, stream));
}

std::string doc_of(const OpSpec& spec) {
  std::vector<std::string_view> inputs = spec.required_inputs;
  std::string sig;
  for (std::string_view i : spec.required_inputs) sig += (sig.empty() ? "" : ", ") + std::string(i);
  for (std::string_view i : spec.optional_inputs) sig += (sig.empty() ? "" : ", ") + std::string(i) + "=None";
  for (std::string_view a : spec.attrs) sig += (sig.empty() ? "" : ", ") + std::string(a) + "=...";
  if (takes_named_outputs(spec))
    for (std::string_view o : writable_outputs(spec)) sig += ", " + std::string(o) + "=None";
  sig += std::string(sig.empty() ? "" : ", ") + "out=None, stream=None, device=None";
  std::string returns = "Returns the output (out= when given).";
  if (takes_named_outputs(spec)) {
    std::vector<std::string> r, in_place;
    for (std::string_view o : all_outputs(spec)) {
      const bool optional = contains(spec.optional_outputs, o);
      r.push_back(optional ? fmt::format("[{}]", o) : std::string(o));
      if (contains(all_inputs(spec), o)) in_place.push_back(std::string(o));
    }
    std::vector<std::string> notes;
    for (std::string_view o : spec.optional_outputs)
      notes.push_back(contains(all_inputs(spec), o) ? fmt::format("{0} when {0} is given", o)
                                                    : fmt::format("{0} only with {0}=True or {0}=tensor", o));
    returns = fmt::format("Returns {}{}{}{}.", r.size() > 1 ? "the tuple (" : "", fmt::join(r, ", "),
                          r.size() > 1 ? ")" : "", notes.empty() ? "" : fmt::format(" ({})", fmt::join(notes, "; ")));
    if (!in_place.empty())
      returns += fmt::format(" Updated in place (and returned): {}; give them as hal tensors or DLPack arrays on the "
                             "device.", fmt::join(in_place, ", "));
    if (!writable_outputs(spec).empty())
      returns += fmt::format(" Outputs given by name ({0}=tensor) or as out= ({1}) are written there.",
                             writable_outputs(spec)[0], writable_outputs(spec).size() > 1 ? "a tuple in that order" : "a tensor");
  }
  return fmt::format("{}({})\n\n{}\n\nInputs: hal tensors, DLPack objects (viewed) or array-likes (copied to the "
                     "device). {}",
                     spec.name, sig, spec.help, returns);
}

}  // namespace

void register_ops(py::module_& m) {
  py::module_ ops = m.def_submodule("ops", "Every hal op, with the C++ names; options as keyword arguments");
  py::list names;
  for (const OpSpec& spec : tools::op_specs()) {
    const OpSpec* s = &spec;  // the table is static
    const std::string name(spec.name);
    ops.def(name.c_str(), [s](const py::args& args, const py::kwargs& kwargs) { return call_op(*s, args, kwargs); },
            doc_of(spec).c_str());
    names.append(name);
  }
  ops.attr("names") = names;
  // `import hal.ops` works too.
  py::module_::import("sys").attr("modules")["hal.ops"] = ops;
}

}  // namespace hal::python
