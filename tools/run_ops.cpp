// `hal run`: op table, attribute parsing and op-call construction.
#include "tools/run_ops.h"

#include <fmt/format.h>

#include <charconv>
#include <limits>
#include <cmath>
#include <cstdlib>

#include "hal/error.h"
#include "ops/ops.h"
#include "tools/cli.h"
#include "tools/run_ops_training.h"

namespace hal::tools {

namespace {

const std::vector<OpSpec>& table() {
  static const std::vector<OpSpec> specs = [] {
    std::vector<OpSpec> v;
    v.push_back({"gemm", {"a", "b"}, {"c", "bias"}, {"trans_a", "trans_b", "alpha", "beta", "activation", "dtype"},
                 "y = act(alpha*op(a)@op(b) + beta*c + bias); without c, C starts at zero (beta 0); "
                 "dtype sets C's dtype then"});
    for (const char* name : {"add", "sub", "mul", "div", "maximum", "minimum"})
      v.push_back({name, {"a", "b"}, {}, {}, "y = a op b with NumPy broadcasting"});
    for (const char* name : {"neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "gelu",
                             "gelu_tanh", "silu"})
      v.push_back({name, {"x"}, {}, {}, "y = f(x) element-wise"});
    v.push_back({"swiglu", {"gate", "up"}, {}, {}, "y = silu(gate) * up"});
    for (const char* name : {"sum", "mean", "max", "min", "argmax"})
      v.push_back({name, {"x"}, {}, {"axis", "keepdim"}, "reduce x over axis (default -1); argmax gives i64"});
    for (const char* name : {"softmax", "log_softmax"})
      v.push_back({name, {"x"}, {}, {"scale", "causal"}, "over the last axis of scale*x (+ causal mask)"});
    v.push_back({"layernorm", {"x", "weight"}, {"bias"}, {"eps"}, "layer normalisation over the last axis"});
    v.push_back({"rmsnorm", {"x", "weight"}, {}, {"eps"}, "RMS normalisation over the last axis"});
    v.push_back({"rope", {"x", "positions"}, {"inv_freq"}, {"theta", "style", "rotary_dim"},
                 "rotary embedding; x [batch, seq, heads, head_dim]; integer positions are converted to i32; "
                 "inv_freq [rotary_dim/2] replaces theta's frequencies (converted to f32 unless x is f64)"});
    v.push_back({"cast", {"x"}, {}, {"dtype", "scale"}, "y = dtype(x * scale)"});
    v.push_back({"embedding", {"table", "ids"}, {}, {}, "y = table[ids]"});
    v.push_back({"attention", {"q", "k", "v"}, {}, {"scale", "causal"},
                 "softmax(scale q k^T) v; q [b, sq, hq, d], k [b, sk, hkv, d], v [b, sk, hkv, dv]; lse, when "
                 "asked, is each row's log-sum-exp [b, sq, hq] f32 (for attention_backward)",
                 {"y"}, {"lse"}});
    v.push_back({"copy", {"x"}, {}, {"perm"}, "y = x, or x with its axes permuted (perm=1,0,2)"});
    v.push_back({"fill_random", {}, {}, {"shape", "dtype", "seed", "distribution", "a", "b"},
                 "Philox random numbers: uniform [a, b) or normal (mean a, std b)"});
    v.push_back({"quantize_fp8", {"x"}, {}, {"block", "format", "pow2_scales"},
                 "y = fp8(x / scale) with one f32 scale per block (block=1x128|128x128|tensor, "
                 "format=f8e4m3|f8e5m2|f8e4m3fnuz|f8e5m2fnuz, pow2_scales: UE8M0 scales)",
                 {"y", "scales"}});
    v.push_back({"dequantize_fp8", {"y", "scales"}, {}, {"block", "dtype"},
                 "x = y * scale of its block, in dtype (default f32)", {"x"}});
    v.push_back({"gemm_fp8", {"a", "a_scales", "b", "b_scales"}, {"c", "bias"},
                 {"alpha", "beta", "activation", "dtype"},
                 "y = act(alpha * sum_kb sa*sb*(a@b^T over the block) + beta*c + bias); a [M, K], b [N, K] fp8; "
                 "dtype sets C's dtype (bf16 or f32) when c is absent"});
    v.push_back({"gemm_fp8_grouped", {"a", "a_scales", "b", "b_scales", "offsets"}, {"c", "bias"},
                 {"alpha", "beta", "activation", "dtype"},
                 "gemm_fp8 per expert: rows offsets[g]..offsets[g+1] of a with b[g] [G, N, K]"});
    add_training_op_specs(v);
    return v;
  }();
  return specs;
}

[[noreturn]] void bad_value(std::string_view key, const std::string& value, std::string_view expected) {
  throw UsageError(fmt::format("attribute '{}': expected {}, given '{}'", key, expected, value));
}

const HostArray& input(const std::map<std::string, HostArray>& inputs, const char* name) { return inputs.at(name); }

}  // namespace

std::span<const OpSpec> op_specs() { return table(); }

const OpSpec* find_op_spec(std::string_view name) {
  for (const OpSpec& s : table())
    if (s.name == name) return &s;
  return nullptr;
}

const std::string* Attrs::find(std::string_view key) const {
  const auto it = values_.find(std::string(key));
  return it == values_.end() ? nullptr : &it->second;
}

bool Attrs::get_bool(std::string_view key, bool fallback) const {
  const std::string* v = find(key);
  if (!v) return fallback;
  if (*v == "1" || *v == "true" || *v == "True") return true;
  if (*v == "0" || *v == "false" || *v == "False") return false;
  bad_value(key, *v, "true, false, 1 or 0");
}

float Attrs::get_float(std::string_view key, float fallback) const {
  const std::string* v = find(key);
  if (!v) return fallback;
  char* end = nullptr;
  const float f = std::strtof(v->c_str(), &end);
  if (v->empty() || end != v->c_str() + v->size()) bad_value(key, *v, "a number");
  return f;
}

std::int64_t Attrs::get_int(std::string_view key, std::int64_t fallback) const {
  const std::string* v = find(key);
  if (!v) return fallback;
  std::int64_t out = 0;
  const auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || p != v->data() + v->size() || v->empty()) bad_value(key, *v, "an integer");
  return out;
}

int Attrs::get_int32(std::string_view key, int fallback) const {
  const std::int64_t v = get_int(key, fallback);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    bad_value(key, *find(key), fmt::format("an integer in [{}, {}]", std::numeric_limits<int>::min(),
                                            std::numeric_limits<int>::max()));
  return static_cast<int>(v);
}

std::uint64_t Attrs::get_uint(std::string_view key, std::uint64_t fallback) const {
  const std::string* v = find(key);
  if (!v) return fallback;
  std::uint64_t out = 0;
  const auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || p != v->data() + v->size() || v->empty()) bad_value(key, *v, "a non-negative integer");
  return out;
}

std::vector<std::int64_t> Attrs::get_ints(std::string_view key) const {
  const std::string* v = find(key);
  std::vector<std::int64_t> out;
  if (!v) return out;
  std::size_t pos = 0;
  while (pos <= v->size()) {
    const std::size_t comma = std::min(v->find(',', pos), v->size());
    std::int64_t x = 0;
    const auto [p, ec] = std::from_chars(v->data() + pos, v->data() + comma, x);
    if (ec != std::errc() || p != v->data() + comma || comma == pos)
      bad_value(key, *v, "comma-separated integers, e.g. 4,5");
    out.push_back(x);
    pos = comma + 1;
  }
  return out;
}

std::string Attrs::get_string(std::string_view key, std::string_view fallback) const {
  const std::string* v = find(key);
  return v ? *v : std::string(fallback);
}

DType Attrs::get_dtype(std::string_view key, DType fallback) const {
  const std::string* v = find(key);
  if (!v) return fallback;
  const auto t = parse_dtype(*v);
  if (!t) bad_value(key, *v, "a dtype name (f32, f16, bf16, f8e4m3, f8e5m2, f64, i8, i32, i64, bool)");
  return *t;
}

Tensor DeviceArena::upload(const HostArray& host) {
  if (const auto it = loaded_.find(&host); it != loaded_.end()) return it->second;
  Tensor t = allocate(host.dtype, host.shape);
  if (!host.bytes.empty()) stream_.upload(t, host.bytes.data());
  return t;
}

Tensor DeviceArena::load_npy(const std::string& path) {
  const io::NpyHeader h = io::read_npy_header(path);
  Tensor t = allocate(h.dtype, h.shape);
  if (h.data_bytes > 0) {
    if (device_.info().backend == "cpu") {
      io::read_npy_into(path, h, t.data);  // the CPU's device memory is host memory
    } else {
      std::vector<std::byte> staging(static_cast<std::size_t>(h.data_bytes));
      io::read_npy_into(path, h, staging.data());
      stream_.upload(t, staging.data());
      stream_.synchronize();
    }
  }
  return t;
}

void DeviceArena::bind(const HostArray& placeholder, const Tensor& t) { loaded_[&placeholder] = t; }

HostArray DeviceArena::host_values(const HostArray& host) {
  const auto it = loaded_.find(&host);
  return it == loaded_.end() ? host : download(it->second);
}

Tensor DeviceArena::upload_as(const HostArray& host, DType dtype) {
  return host.dtype == dtype ? upload(host) : upload(convert(host_values(host), dtype));
}

Tensor upload_rope_positions(DeviceArena& arena, const HostArray& positions, std::string_view op) {
  if (!is_integer(positions.dtype)) return arena.upload(positions);  // validation names the dtype
  // NumPy writes integer arrays as i64 by default; rope takes i32 positions,
  // and a position beyond int32 is refused rather than saturated.
  if (positions.dtype == DType::i64) {
    const HostArray pos = arena.host_values(positions);
    const auto* p = reinterpret_cast<const std::int64_t*>(pos.bytes.data());
    for (std::int64_t i = 0; i < pos.numel(); ++i)
      if (p[i] < std::numeric_limits<std::int32_t>::min() || p[i] > std::numeric_limits<std::int32_t>::max())
        throw_invalid_argument(op, "positions", "positions that fit in int32 (rope takes i32 positions)",
                               fmt::format("{} at index {}", p[i], i));
  }
  return arena.upload_as(positions, DType::i32);
}

void DeviceArena::save_npy(const std::string& path, const Tensor& t, DType as) {
  if (as == t.dtype && t.is_contiguous() && device_.info().backend == "cpu") {
    stream_.synchronize();
    io::write_npy(path, t.dtype, t.shape, t.first());  // straight from the device buffer
    return;
  }
  const HostArray host = download(t);
  if (as == t.dtype)
    io::write_npy(path, host);
  else
    io::write_npy(path, io::convert(host, as));
}

Tensor DeviceArena::allocate(DType dtype, const Shape& shape) {
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(checked_numel(shape, "hal run"), static_cast<std::int64_t>(dtype_size(dtype)), &bytes))
    throw_invalid_argument("hal run", "array", "an array whose size in bytes fits in int64",
                           fmt::format("{}{}", dtype_name(dtype), shape.str()));
  buffers_.push_back(Buffer(device_, static_cast<std::size_t>(bytes)));
  return buffers_.back().view(dtype, shape);
}

std::optional<Tensor> DeviceArena::given_output(std::string_view name) const {
  const auto it = given_outputs_.find(name);
  return it == given_outputs_.end() ? std::nullopt : std::optional<Tensor>(it->second);
}

Tensor DeviceArena::output(std::string_view name, DType dtype, const Shape& shape) {
  if (auto given = given_output(name)) return *given;
  return allocate(dtype, shape);
}

Tensor DeviceArena::zeros(DType dtype, const Shape& shape) {
  Tensor t = allocate(dtype, shape);
  if (buffers_.back().size() > 0) stream_.memset(t.data, 0, buffers_.back().size());
  return t;
}

HostArray DeviceArena::download(const Tensor& t) {
  HostArray out;
  out.dtype = t.dtype;
  out.shape = t.shape;
  out.bytes.resize(static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype));
  if (!out.bytes.empty()) stream_.download(out.bytes.data(), t);
  stream_.synchronize();
  return out;
}

namespace {

Activation parse_activation(const Attrs& attrs) {
  const std::string v = attrs.get_string("activation", "none");
  for (Activation a : {Activation::none, Activation::relu, Activation::gelu_tanh, Activation::silu})
    if (to_string(a) == v) return a;
  bad_value("activation", v, "none, relu, gelu_tanh or silu");
}

BuiltCall build_gemm(const std::map<std::string, HostArray>& in, const Attrs& attrs, DeviceArena& arena) {
  GemmCall g;
  g.trans_a = attrs.get_bool("trans_a", false);
  g.trans_b = attrs.get_bool("trans_b", false);
  g.alpha = attrs.get_float("alpha", 1.0f);
  g.beta = attrs.get_float("beta", 0.0f);
  g.activation = parse_activation(attrs);
  g.a = arena.upload(input(in, "a"));
  g.b = arena.upload(input(in, "b"));
  if (in.count("bias")) g.bias = arena.upload(input(in, "bias"));
  if (in.count("c")) {
    if (attrs.has("dtype")) throw UsageError("gemm: 'dtype' sets C's dtype only when input c is absent");
    g.c = arena.upload(input(in, "c"));
  } else {
    // C = op(A) @ op(B) shape; ranks are checked again by validation.
    const Shape& a = g.a.shape;
    const Shape& b = g.b.shape;
    if (a.rank() < 2 || a.rank() > 3 || b.rank() < 2 || b.rank() > 3)
      throw_invalid_argument("gemm", a.rank() < 2 || a.rank() > 3 ? "a" : "b", "rank 2 or 3",
                             fmt::format("a {} and b {}", a.str(), b.str()));
    const std::int64_t m = g.trans_a ? a[a.rank() - 1] : a[a.rank() - 2];
    const std::int64_t n = g.trans_b ? b[b.rank() - 2] : b[b.rank() - 1];
    // The batch of the rank-3 operand that is not broadcast (batch 1), which
    // may be 0: a (0, M, K) a is a valid, empty gemm.
    const std::int64_t batch_a = a.rank() == 3 ? a[0] : 1, batch_b = b.rank() == 3 ? b[0] : 1;
    const std::int64_t batch = batch_a != 1 ? batch_a : batch_b;
    const Shape c_shape = (a.rank() == 3 || b.rank() == 3) ? Shape{batch, m, n} : Shape{m, n};
    const DType c_dtype = attrs.get_dtype("dtype", g.bias ? g.bias->dtype : g.a.dtype);
    g.c = arena.zeros(c_dtype, c_shape);
    g.beta = 0.0f;  // there is no C to scale
  }
  return {g, {{"y", g.c}}};
}

BuiltCall build_reduce(ReduceKind kind, const std::map<std::string, HostArray>& in, const Attrs& attrs,
                       DeviceArena& arena) {
  ReduceCall r;
  r.kind = kind;
  r.x = arena.upload(input(in, "x"));
  r.axis = attrs.get_int32("axis", -1);
  if (r.x.rank() == 0)
    throw_invalid_argument(to_string(kind), "x", "an array of rank 1 or more (reduces over an axis)",
                           fmt::format("a 0-d array {}", r.x.shape.str()));
  r.keepdim = attrs.get_bool("keepdim", false);
  const int axis = normalize_axis(r.axis, r.x.rank(), to_string(kind), "axis");
  Shape y = r.x.shape;
  if (r.keepdim)
    y[axis] = 1;
  else
    y.erase(axis);
  r.y = arena.output("y", kind == ReduceKind::argmax ? DType::i64 : r.x.dtype, y);
  return {r, {{"y", r.y}}};
}

Fp8Block parse_block(const Attrs& attrs) {
  const std::string v = attrs.get_string("block", "1x128");
  for (Fp8Block b : {Fp8Block::row_1x128, Fp8Block::block_128x128, Fp8Block::tensor})
    if (to_string(b) == v) return b;
  bad_value("block", v, "1x128, 128x128 or tensor");
}

// The fp8 GEMMs' epilogue and C: given, or zeros of `dtype` (default bf16).
void build_fp8_epilogue(const std::map<std::string, HostArray>& in, const Attrs& attrs, DeviceArena& arena,
                        std::string_view op, const Shape& c_shape, Fp8Epilogue& e, Tensor& c) {
  e.alpha = attrs.get_float("alpha", 1.0f);
  e.beta = attrs.get_float("beta", 0.0f);
  e.activation = parse_activation(attrs);
  if (in.count("bias")) e.bias = arena.upload(input(in, "bias"));
  if (in.count("c")) {
    if (attrs.has("dtype")) throw UsageError(fmt::format("{}: 'dtype' sets C's dtype only when input c is absent", op));
    c = arena.upload(input(in, "c"));
  } else {
    c = arena.zeros(attrs.get_dtype("dtype", e.bias ? e.bias->dtype : DType::bf16), c_shape);
    e.beta = 0.0f;
  }
}

BuiltCall build_fp8(std::string_view op, const std::map<std::string, HostArray>& in, const Attrs& attrs,
                    DeviceArena& arena) {
  if (op == "quantize_fp8") {
    QuantizeFp8Call c;
    c.x = arena.upload(input(in, "x"));
    c.block = parse_block(attrs);
    c.pow2_scales = attrs.get_bool("pow2_scales", false);
    const DType format = attrs.get_dtype("format", DType::f8e4m3);
    if (c.x.rank() != 2) throw_invalid_argument(op, "x", "rank 2", c.x.shape.str());
    c.y = arena.output("y", format, c.x.shape);
    c.scales = arena.output("scales", DType::f32, ops::fp8_scales_shape(c.block, c.x.shape[0], c.x.shape[1]));
    return {c, {{"y", c.y}, {"scales", c.scales}}};
  }
  if (op == "dequantize_fp8") {
    DequantizeFp8Call c;
    c.y = arena.upload(input(in, "y"));
    c.scales = arena.upload(input(in, "scales"));
    c.block = parse_block(attrs);
    c.x = arena.output("x", attrs.get_dtype("dtype", DType::f32), c.y.shape);
    return {c, {{"x", c.x}}};
  }
  const auto rank_check = [&](const Tensor& t, const char* name, int rank) {
    if (t.rank() != rank) throw_invalid_argument(op, name, fmt::format("rank {}", rank), t.shape.str());
  };
  if (op == "gemm_fp8") {
    GemmFp8Call c;
    c.a = arena.upload(input(in, "a"));
    c.a_scales = arena.upload(input(in, "a_scales"));
    c.b = arena.upload(input(in, "b"));
    c.b_scales = arena.upload(input(in, "b_scales"));
    rank_check(c.a, "a", 2);
    rank_check(c.b, "b", 2);
    build_fp8_epilogue(in, attrs, arena, op, Shape{c.a.shape[0], c.b.shape[0]}, c.epilogue, c.c);
    return {c, {{"y", c.c}}};
  }
  GemmFp8GroupedCall c;
  c.a = arena.upload(input(in, "a"));
  c.a_scales = arena.upload(input(in, "a_scales"));
  c.b = arena.upload(input(in, "b"));
  c.b_scales = arena.upload(input(in, "b_scales"));
  // NumPy writes integer arrays as i64 by default; the offsets are i32 (upload_as
  // fetches a device placeholder's values only when it converts).
  const HostArray& off = input(in, "offsets");
  c.offsets = is_integer(off.dtype) ? arena.upload_as(off, DType::i32) : arena.upload(off);
  rank_check(c.a, "a", 2);
  rank_check(c.b, "b", 3);
  build_fp8_epilogue(in, attrs, arena, op, Shape{c.a.shape[0], c.b.shape[1]}, c.epilogue, c.c);
  return {c, {{"y", c.c}}};
}

}  // namespace

BuiltCall build_call(const OpSpec& spec, const std::map<std::string, HostArray>& in, const Attrs& attrs,
                     const std::set<std::string>& requested, DeviceArena& arena) {
  const std::string_view op = spec.name;
  if (auto training = build_training_call(spec, in, attrs, requested, arena)) return std::move(*training);
  if (op == "gemm") return build_gemm(in, attrs, arena);
  for (BinaryKind k : {BinaryKind::add, BinaryKind::sub, BinaryKind::mul, BinaryKind::div, BinaryKind::maximum,
                       BinaryKind::minimum}) {
    if (to_string(k) != op) continue;
    BinaryCall c{k, arena.upload(input(in, "a")), arena.upload(input(in, "b")), {}};
    c.y = arena.output("y", c.a.dtype, broadcast_shapes(c.a.shape, c.b.shape, op));
    return {c, {{"y", c.y}}};
  }
  for (UnaryKind k : {UnaryKind::neg, UnaryKind::abs, UnaryKind::exp, UnaryKind::log, UnaryKind::sqrt,
                      UnaryKind::rsqrt, UnaryKind::tanh, UnaryKind::sigmoid, UnaryKind::relu, UnaryKind::gelu,
                      UnaryKind::gelu_tanh, UnaryKind::silu}) {
    if (to_string(k) != op) continue;
    UnaryCall c{k, arena.upload(input(in, "x")), {}};
    c.y = arena.output("y", c.x.dtype, c.x.shape);
    return {c, {{"y", c.y}}};
  }
  for (ReduceKind k : {ReduceKind::sum, ReduceKind::mean, ReduceKind::max, ReduceKind::min, ReduceKind::argmax})
    if (to_string(k) == op) return build_reduce(k, in, attrs, arena);
  if (op == "swiglu") {
    SwigluCall c{arena.upload(input(in, "gate")), arena.upload(input(in, "up")), {}};
    c.y = arena.output("y", c.gate.dtype, c.gate.shape);
    return {c, {{"y", c.y}}};
  }
  if (op == "softmax" || op == "log_softmax") {
    SoftmaxCall c;
    c.x = arena.upload(input(in, "x"));
    c.y = arena.output("y", c.x.dtype, c.x.shape);
    c.scale = attrs.get_float("scale", 1.0f);
    c.causal = attrs.get_bool("causal", false);
    c.log = op == "log_softmax";
    return {c, {{"y", c.y}}};
  }
  if (op == "layernorm" || op == "rmsnorm") {
    NormCall c;
    c.x = arena.upload(input(in, "x"));
    c.weight = arena.upload(input(in, "weight"));
    if (in.count("bias")) c.bias = arena.upload(input(in, "bias"));
    c.y = arena.output("y", c.x.dtype, c.x.shape);
    c.eps = attrs.get_float("eps", 1e-5f);
    c.rms = op == "rmsnorm";
    return {c, {{"y", c.y}}};
  }
  if (op == "rope") {
    RopeCall c;
    c.x = arena.upload(input(in, "x"));
    c.positions = upload_rope_positions(arena, input(in, "positions"), "rope");
    c.y = arena.output("y", c.x.dtype, c.x.shape);
    c.theta = attrs.get_float("theta", 10000.0f);
    const std::string style = attrs.get_string("style", "neox");
    if (style == "neox")
      c.style = RopeStyle::neox;
    else if (style == "gptj")
      c.style = RopeStyle::gptj;
    else
      bad_value("style", style, "neox or gptj");
    c.rotary_dim = attrs.get_int32("rotary_dim", 0);
    if (in.count("inv_freq")) {
      // upload_as fetches a device placeholder's values only when it converts.
      const DType want = c.x.dtype == DType::f64 ? DType::f64 : DType::f32;
      c.inv_freq = arena.upload_as(input(in, "inv_freq"), want);
    }
    return {c, {{"y", c.y}}};
  }
  if (op == "cast") {
    CastCall c;
    c.x = arena.upload(input(in, "x"));
    c.y = arena.output("y", attrs.get_dtype("dtype", c.x.dtype), c.x.shape);
    c.scale = attrs.get_float("scale", 1.0f);
    return {c, {{"y", c.y}}};
  }
  if (op == "embedding") {
    EmbeddingCall c;
    c.table = arena.upload(input(in, "table"));
    c.ids = arena.upload(input(in, "ids"));
    if (c.table.rank() != 2) throw_invalid_argument("embedding", "table", "rank 2", c.table.shape.str());
    if (c.ids.rank() >= kMaxRank)
      throw_invalid_argument("embedding", "ids", fmt::format("rank at most {} (y has one more dim)", kMaxRank - 1),
                             fmt::format("rank {} {}", c.ids.rank(), c.ids.shape.str()));
    Shape y = c.ids.shape;
    y.push_back(c.table.shape[1]);
    c.y = arena.output("y", c.table.dtype, y);
    return {c, {{"y", c.y}}};
  }
  if (op == "attention") {
    AttentionCall c;
    c.q = arena.upload(input(in, "q"));
    c.k = arena.upload(input(in, "k"));
    c.v = arena.upload(input(in, "v"));
    if (c.q.rank() != 4 || c.v.rank() != 4)
      throw_invalid_argument("attention", c.q.rank() != 4 ? "q" : "v", "rank 4",
                             (c.q.rank() != 4 ? c.q : c.v).shape.str());
    c.y = arena.output("y", c.q.dtype, Shape{c.q.shape[0], c.q.shape[1], c.q.shape[2], c.v.shape[3]});
    c.scale = attrs.get_float("scale", 0.0f);
    c.causal = attrs.get_bool("causal", false);
    if (requested.count("lse") == 0) return {c, {{"y", c.y}}};
    c.lse = arena.output("lse", c.q.dtype == DType::f64 ? DType::f64 : DType::f32,
                           Shape{c.q.shape[0], c.q.shape[1], c.q.shape[2]});
    return {c, {{"y", c.y}, {"lse", *c.lse}}};
  }
  if (op == "copy") {
    CopyCall c;
    c.x = arena.upload(input(in, "x"));
    if (attrs.has("perm")) {
      const std::vector<std::int64_t> perm = attrs.get_ints("perm");
      if (perm.size() > static_cast<std::size_t>(kMaxRank)) bad_value("perm", attrs.get_string("perm", ""), "a permutation");
      c.x = c.x.permuted(Dims(std::span<const std::int64_t>(perm)));
    }
    c.y = arena.output("y", c.x.dtype, c.x.shape);
    return {c, {{"y", c.y}}};
  }
  if (op == "fill_random") {
    FillRandomCall c;
    if (auto given = arena.given_output("y")) {
      c.y = *given;  // the caller's tensor (Python's out=) fixes shape and dtype: shape= and dtype= are not read
    } else {
      if (!attrs.has("shape")) throw UsageError("fill_random needs the attribute shape=D0,D1,... (or, from Python, out=)");
      const std::vector<std::int64_t> dims = attrs.get_ints("shape");
      if (dims.size() > static_cast<std::size_t>(kMaxRank))
        bad_value("shape", attrs.get_string("shape", ""), "at most 8 dims");
      for (std::int64_t d : dims)
        if (d < 0) bad_value("shape", attrs.get_string("shape", ""), "non-negative dimensions");
      c.y = arena.allocate(attrs.get_dtype("dtype", DType::f32), Shape(std::span<const std::int64_t>(dims)));
    }
    c.seed = attrs.get_uint("seed", 0);
    const std::string dist = attrs.get_string("distribution", "uniform");
    if (dist == "uniform")
      c.distribution = RandomDistribution::uniform;
    else if (dist == "normal")
      c.distribution = RandomDistribution::normal;
    else
      bad_value("distribution", dist, "uniform or normal");
    c.a = attrs.get_float("a", 0.0f);
    c.b = attrs.get_float("b", 1.0f);
    return {c, {{"y", c.y}}};
  }
  if (op == "quantize_fp8" || op == "dequantize_fp8" || op == "gemm_fp8" || op == "gemm_fp8_grouped")
    return build_fp8(op, in, attrs, arena);
  throw UsageError(fmt::format("unknown op '{}'", op));
}

}  // namespace hal::tools
