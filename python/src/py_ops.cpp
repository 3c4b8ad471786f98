// hal.ops: one Python function per op, generated from the op table of `hal
// run` (tools/run_ops.h: names, inputs, attributes, help), so a new op in
// that table is a new Python function. Inputs are hal tensors, DLPack objects
// (viewed, zero-copy) or array-likes (copied to the device); attributes are
// keyword arguments parsed by the same code as `hal run --attr`; the output is
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

[[noreturn]] void bad_attr(std::string_view key, const std::string& value, std::string_view expected) {
  throw tools::UsageError(fmt::format("attribute '{}': expected {}, given '{}'", key, expected, value));
}

// The output: out= when given, else a new tensor.
// Ops with two outputs (quantize_fp8: y and scales) take out=(y, scales) and return both.
struct Output {
  const py::object& out;
  Device& device;
  std::optional<PyTensor> tensor;
  std::optional<PyTensor> second{};
  Tensor make(DType dtype, const Shape& shape) {
    tensor = out.is_none() ? allocate_tensor(device, dtype, shape) : tensor_argument(out, &device, std::nullopt, true);
    return tensor->view;
  }
  void make_pair(DType dtype0, const Shape& shape0, DType dtype1, const Shape& shape1) {
    if (out.is_none()) {
      tensor = allocate_tensor(device, dtype0, shape0);
      second = allocate_tensor(device, dtype1, shape1);
      return;
    }
    if (!py::isinstance<py::sequence>(out) || py::len(out) != 2)
      throw py::type_error("out= of an op with two outputs is a pair (first, second)");
    tensor = tensor_argument(out[py::int_(0)], &device, std::nullopt, true);
    second = tensor_argument(out[py::int_(1)], &device, std::nullopt, true);
  }
};

Fp8Block parse_block(const Attrs& attrs) {
  const std::string v = attrs.get_string("block", "1x128");
  for (Fp8Block b : {Fp8Block::row_1x128, Fp8Block::block_128x128, Fp8Block::tensor})
    if (to_string(b) == v) return b;
  bad_attr("block", v, "1x128, 128x128 or tensor");
}

Activation parse_activation(const Attrs& attrs) {
  const std::string act = attrs.get_string("activation", "none");
  for (Activation a : {Activation::none, Activation::relu, Activation::gelu_tanh, Activation::silu})
    if (to_string(a) == act) return a;
  bad_attr("activation", act, "none, relu, gelu_tanh or silu");
}

// Builds the call like `hal run` does (tools/run_ops.cpp), from device tensors.
OpCall build(std::string_view op, std::map<std::string, PyTensor>& in, const Attrs& attrs, Output& y) {
  auto t = [&](const char* name) -> Tensor { return in.at(name).view; };
  auto opt = [&](const char* name) -> std::optional<Tensor> {
    auto it = in.find(name);
    return it == in.end() ? std::nullopt : std::optional<Tensor>(it->second.view);
  };
  if (op == "gemm") {
    GemmCall g;
    g.trans_a = attrs.get_bool("trans_a", false);
    g.trans_b = attrs.get_bool("trans_b", false);
    g.alpha = attrs.get_float("alpha", 1.0f);
    g.beta = attrs.get_float("beta", 0.0f);
    const std::string act = attrs.get_string("activation", "none");
    bool found = false;
    for (Activation a : {Activation::none, Activation::relu, Activation::gelu_tanh, Activation::silu})
      if (to_string(a) == act) g.activation = a, found = true;
    if (!found) bad_attr("activation", act, "none, relu, gelu_tanh or silu");
    g.a = t("a");
    g.b = t("b");
    g.bias = opt("bias");
    if (auto c = opt("c")) {
      if (!y.out.is_none()) throw tools::UsageError("gemm: give c or out=, not both (c is the output)");
      if (attrs.has("dtype")) throw tools::UsageError("gemm: 'dtype' sets C's dtype only when c is absent");
      g.c = *c;
      y.tensor = in.at("c");
    } else {
      const Shape& a = g.a.shape;
      const Shape& b = g.b.shape;
      if (a.rank() < 2 || a.rank() > 3 || b.rank() < 2 || b.rank() > 3)
        throw_invalid_argument("gemm", a.rank() < 2 || a.rank() > 3 ? "a" : "b", "rank 2 or 3",
                               fmt::format("a {} and b {}", a.str(), b.str()));
      const std::int64_t m = g.trans_a ? a[a.rank() - 1] : a[a.rank() - 2];
      const std::int64_t n = g.trans_b ? b[b.rank() - 2] : b[b.rank() - 1];
      const std::int64_t batch = std::max(a.rank() == 3 ? a[0] : 1, b.rank() == 3 ? b[0] : 1);
      const Shape c_shape = (a.rank() == 3 || b.rank() == 3) ? Shape{batch, m, n} : Shape{m, n};
      g.c = y.make(attrs.get_dtype("dtype", g.bias ? g.bias->dtype : g.a.dtype), c_shape);
      if (y.out.is_none()) g.beta = 0.0f;  // a new C has no contents to scale
    }
    return g;
  }
  for (BinaryKind k : {BinaryKind::add, BinaryKind::sub, BinaryKind::mul, BinaryKind::div, BinaryKind::maximum,
                       BinaryKind::minimum})
    if (to_string(k) == op) {
      BinaryCall c{k, t("a"), t("b"), {}};
      c.y = y.make(c.a.dtype, broadcast_shapes(c.a.shape, c.b.shape, op));
      return c;
    }
  for (UnaryKind k : {UnaryKind::neg, UnaryKind::abs, UnaryKind::exp, UnaryKind::log, UnaryKind::sqrt,
                      UnaryKind::rsqrt, UnaryKind::tanh, UnaryKind::sigmoid, UnaryKind::relu, UnaryKind::gelu,
                      UnaryKind::gelu_tanh, UnaryKind::silu})
    if (to_string(k) == op) {
      UnaryCall c{k, t("x"), {}};
      c.y = y.make(c.x.dtype, c.x.shape);
      return c;
    }
  for (ReduceKind k : {ReduceKind::sum, ReduceKind::mean, ReduceKind::max, ReduceKind::min, ReduceKind::argmax})
    if (to_string(k) == op) {
      ReduceCall r;
      r.kind = k;
      r.x = t("x");
      r.axis = static_cast<int>(attrs.get_int("axis", -1));
      r.keepdim = attrs.get_bool("keepdim", false);
      const int axis = normalize_axis(r.axis, r.x.rank(), op, "axis");
      Shape s = r.x.shape;
      if (r.keepdim)
        s[axis] = 1;
      else
        s.erase(axis);
      r.y = y.make(k == ReduceKind::argmax ? DType::i64 : r.x.dtype, s);
      return r;
    }
  if (op == "swiglu") {
    SwigluCall c{t("gate"), t("up"), {}};
    c.y = y.make(c.gate.dtype, c.gate.shape);
    return c;
  }
  if (op == "softmax" || op == "log_softmax") {
    SoftmaxCall c;
    c.x = t("x");
    c.scale = attrs.get_float("scale", 1.0f);
    c.causal = attrs.get_bool("causal", false);
    c.log = op == "log_softmax";
    c.y = y.make(c.x.dtype, c.x.shape);
    return c;
  }
  if (op == "layernorm" || op == "rmsnorm") {
    NormCall c;
    c.x = t("x");
    c.weight = t("weight");
    c.bias = opt("bias");
    c.eps = attrs.get_float("eps", 1e-5f);
    c.rms = op == "rmsnorm";
    c.y = y.make(c.x.dtype, c.x.shape);
    return c;
  }
  if (op == "rope") {
    RopeCall c;
    c.x = t("x");
    c.positions = t("positions");
    c.inv_freq = opt("inv_freq");
    c.theta = attrs.get_float("theta", 10000.0f);
    const std::string style = attrs.get_string("style", "neox");
    if (style == "neox")
      c.style = RopeStyle::neox;
    else if (style == "gptj")
      c.style = RopeStyle::gptj;
    else
      bad_attr("style", style, "neox or gptj");
    c.rotary_dim = static_cast<int>(attrs.get_int("rotary_dim", 0));
    c.y = y.make(c.x.dtype, c.x.shape);
    return c;
  }
  if (op == "cast") {
    CastCall c;
    c.x = t("x");
    c.scale = attrs.get_float("scale", 1.0f);
    c.y = y.make(attrs.get_dtype("dtype", c.x.dtype), c.x.shape);
    return c;
  }
  if (op == "embedding") {
    EmbeddingCall c{t("table"), t("ids"), {}};
    if (c.table.rank() != 2) throw_invalid_argument("embedding", "table", "rank 2", c.table.shape.str());
    Shape s = c.ids.shape;
    s.push_back(c.table.shape[1]);
    c.y = y.make(c.table.dtype, s);
    return c;
  }
  if (op == "copy") {
    CopyCall c;
    c.x = t("x");
    if (attrs.has("perm")) {
      const std::vector<std::int64_t> perm = attrs.get_ints("perm");
      if (perm.size() > static_cast<std::size_t>(kMaxRank)) bad_attr("perm", attrs.get_string("perm", ""), "a permutation");
      c.x = c.x.permuted(Dims(std::span<const std::int64_t>(perm)));
    }
    c.y = y.make(c.x.dtype, c.x.shape);
    return c;
  }
  if (op == "fill_random") {
    FillRandomCall c;
    c.seed = attrs.get_uint("seed", 0);
    const std::string dist = attrs.get_string("distribution", "uniform");
    if (dist == "uniform")
      c.distribution = RandomDistribution::uniform;
    else if (dist == "normal")
      c.distribution = RandomDistribution::normal;
    else
      bad_attr("distribution", dist, "uniform or normal");
    c.a = attrs.get_float("a", 0.0f);
    c.b = attrs.get_float("b", 1.0f);
    if (y.out.is_none()) {
      if (!attrs.has("shape")) throw tools::UsageError("fill_random needs shape= (or out=)");
      const std::vector<std::int64_t> dims = attrs.get_ints("shape");
      const Shape s = shape_from_python(py::cast(dims), "shape");
      c.y = y.make(attrs.get_dtype("dtype", DType::f32), s);
    } else {
      c.y = y.make(DType::f32, {});
    }
    return c;
  }
  if (op == "quantize_fp8") {
    QuantizeFp8Call c;
    c.x = t("x");
    c.block = parse_block(attrs);
    c.pow2_scales = attrs.get_bool("pow2_scales", false);
    if (c.x.rank() != 2) throw_invalid_argument(op, "x", "rank 2", c.x.shape.str());
    y.make_pair(attrs.get_dtype("format", DType::f8e4m3), c.x.shape, DType::f32,
                ops::fp8_scales_shape(c.block, c.x.shape[0], c.x.shape[1]));
    c.y = y.tensor->view;
    c.scales = y.second->view;
    return c;
  }
  if (op == "dequantize_fp8") {
    DequantizeFp8Call c;
    c.y = t("y");
    c.scales = t("scales");
    c.block = parse_block(attrs);
    c.x = y.make(attrs.get_dtype("dtype", DType::f32), c.y.shape);
    return c;
  }
  if (op == "gemm_fp8" || op == "gemm_fp8_grouped") {
    const bool grouped = op == "gemm_fp8_grouped";
    Tensor a = t("a"), b = t("b");
    if (a.rank() != 2) throw_invalid_argument(op, "a", "rank 2", a.shape.str());
    if (b.rank() != (grouped ? 3 : 2)) throw_invalid_argument(op, "b", grouped ? "rank 3" : "rank 2", b.shape.str());
    Fp8Epilogue e;
    e.alpha = attrs.get_float("alpha", 1.0f);
    e.beta = attrs.get_float("beta", 0.0f);
    e.activation = parse_activation(attrs);
    e.bias = opt("bias");
    Tensor c_tensor;
    if (auto c = opt("c")) {
      if (!y.out.is_none()) throw tools::UsageError(fmt::format("{}: give c or out=, not both (c is the output)", op));
      if (attrs.has("dtype")) throw tools::UsageError(fmt::format("{}: 'dtype' sets C's dtype only when c is absent", op));
      c_tensor = *c;
      y.tensor = in.at("c");
    } else {
      c_tensor = y.make(attrs.get_dtype("dtype", e.bias ? e.bias->dtype : DType::bf16),
                        Shape{a.shape[0], grouped ? b.shape[1] : b.shape[0]});
      if (y.out.is_none()) e.beta = 0.0f;
    }
    if (grouped) return GemmFp8GroupedCall{a, t("a_scales"), b, t("b_scales"), t("offsets"), c_tensor, e};
    return GemmFp8Call{a, t("a_scales"), b, t("b_scales"), c_tensor, e};
  }
  throw_unsupported("python", op, "the Python module (an op of the table it does not build yet)");
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

// Forward ops built by the table's builder too (their branch in build() above is gone).
const std::set<std::string_view> kTableBuiltForwardOps = {"attention"};

bool built_by_table(const OpSpec& spec) {
  if (kTableBuiltForwardOps.count(spec.name)) return true;
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
    if (!sequence && required == 1) {
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

// Builds the call with the op table's builder (tools::build_call, as `hal run` does): every
// input is a placeholder bound to the caller's device tensor, so the builder
// sees the caller's memory and converts only what it must (rope's positions to
// i32). A given output replaces the one the builder allocated before anything
// runs (that allocation is freed unused).
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
  std::optional<tools::BuiltCall> built = tools::build_call(spec, placeholders, attrs, given.requested, arena);
  auto buffers = std::make_shared<std::vector<Buffer>>(arena.release_buffers());
  for (const auto& [name, g] : given.tensors) {
    const auto it = built->outputs.find(name);
    if (it == built->outputs.end())
      throw_unsupported("python", op, fmt::format("output '{}' (the op table's builder does not write it)", name));
    const void* allocated = it->second.data;
    for_each_tensor(built->call, [&](std::string_view, Tensor& t, TensorRole) {
      if (t.data == allocated) t = g.view;
    });
    it->second = g.view;
  }
  // An output that is an input must be the caller's memory, not a converted copy.
  for (const auto& [name, t] : built->outputs) {
    const auto it = in.find(name);
    if (it != in.end() && t.data != it->second.view.data)
      throw_invalid_argument(op, name, fmt::format("{} (it is updated in place: a converted copy would not be)",
                                                   dtype_name(t.dtype)),
                             std::string(dtype_name(it->second.view.dtype)));
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
    else if (const auto i = in.find(name); i != in.end())
      r = i->second;
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
  const bool table_built = built_by_table(spec);
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
    } else if (table_built && contains(writable_outputs(spec), key)) {
      named_outputs[key] = py::reinterpret_borrow<py::object>(v);
    } else {
      throw py::type_error(fmt::format("hal.ops.{}() got an unexpected keyword argument '{}' (inputs: {}; options: {}{})",
                                       op, key, fmt::join(inputs, ", "), fmt::join(spec.attrs, ", "),
                                       table_built ? fmt::format("; outputs: {}", fmt::join(writable_outputs(spec), ", "))
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
  if (table_built) {
    const Attrs attrs(std::move(attr_values));
    return run_through_table(spec, in, attrs, given_outputs(spec, out, named_outputs, *dev), *dev,
                             shared_stream_for(*dev, stream));
  }
  Output y{out, *dev, std::nullopt};
  const Attrs attrs(std::move(attr_values));
  const OpCall call = build(op, in, attrs, y);
  const std::shared_ptr<Stream> shared = shared_stream_for(*dev, stream);
  Stream& s = *shared;
  {
    py::gil_scoped_release release;
    ops::run(s, call);
  }
  y.tensor->writes->stream = shared;  // __dlpack__ and numpy() order after this stream
  if (y.second) y.second->writes->stream = shared;
  if (y.second) return py::make_tuple(*y.tensor, *y.second);
  return py::cast(*y.tensor);
}

std::string doc_of(const OpSpec& spec) {
  std::vector<std::string_view> inputs = spec.required_inputs;
  std::string sig;
  for (std::string_view i : spec.required_inputs) sig += (sig.empty() ? "" : ", ") + std::string(i);
  for (std::string_view i : spec.optional_inputs) sig += (sig.empty() ? "" : ", ") + std::string(i) + "=None";
  for (std::string_view a : spec.attrs) sig += (sig.empty() ? "" : ", ") + std::string(a) + "=...";
  if (built_by_table(spec))
    for (std::string_view o : writable_outputs(spec)) sig += ", " + std::string(o) + "=None";
  sig += std::string(sig.empty() ? "" : ", ") + "out=None, stream=None, device=None";
  std::string returns = "Returns the output (out= when given).";
  if (built_by_table(spec)) {
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
