#pragma once
// `hal run`: the op table (names of inputs and attributes per op) and the
// construction of an op call from host arrays and attributes. The output
// shape and dtype are derived here from each op's semantics (hal/op.h).
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hal/buffer.h"
#include "hal/op.h"
#include "hal/stream.h"
#include "hal/io/npy.h"

namespace hal::tools {

using io::HostArray;

struct OpSpec {
  std::string_view name;
  std::vector<std::string_view> required_inputs;
  std::vector<std::string_view> optional_inputs;
  std::vector<std::string_view> attrs;
  std::string_view help;
  // What `--out NAME=FILE` may name: outputs the op always writes, and outputs
  // it writes only when one is asked for (the builder sees which were asked).
  std::vector<std::string_view> outputs = {"y"};
  std::vector<std::string_view> optional_outputs = {};
};

std::span<const OpSpec> op_specs();
const OpSpec* find_op_spec(std::string_view name);  // nullptr when unknown

// Attribute values as given on the command line (KEY=VALUE); the typed getters
// throw UsageError naming the key when a value does not parse.
class Attrs {
 public:
  explicit Attrs(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  bool has(std::string_view key) const { return values_.count(std::string(key)) != 0; }
  bool get_bool(std::string_view key, bool fallback) const;
  float get_float(std::string_view key, float fallback) const;
  std::int64_t get_int(std::string_view key, std::int64_t fallback) const;
  int get_int32(std::string_view key, int fallback) const;  // refuses values beyond int
  std::uint64_t get_uint(std::string_view key, std::uint64_t fallback) const;
  std::vector<std::int64_t> get_ints(std::string_view key) const;  // "1,0,2"
  std::string get_string(std::string_view key, std::string_view fallback) const;
  DType get_dtype(std::string_view key, DType fallback) const;
  const std::map<std::string, std::string>& all() const { return values_; }

 private:
  const std::string* find(std::string_view key) const;
  std::map<std::string, std::string> values_;
};

// Owns the device buffers of one run.
class DeviceArena {
 public:
  DeviceArena(Device& device, Stream& stream) : device_(device), stream_(stream) {}
  // Reads a .npy file's header, allocates its device tensor and reads the
  // data straight into it (on the CPU; through one host staging copy on a
  // GPU), so an input costs 1x its size in host memory, not a copy per step.
  Tensor load_npy(const std::string& path);
  // A bound HostArray is a placeholder (dtype and shape, no bytes) for data
  // already on the device: upload() returns that tensor, and host_values()
  // gives its values on the host for the few builders that need them. Any
  // other array is copied to the device.
  void bind(const HostArray& placeholder, const Tensor& t);
  Tensor upload(const HostArray& host);
  HostArray host_values(const HostArray& host);
  // upload(), converted to `dtype` on the host first when it differs (the
  // values of a bound placeholder are fetched for that).
  Tensor upload_as(const HostArray& host, DType dtype);
  // Writes t to a .npy file as dtype `as`, straight from the device buffer
  // on the CPU when no conversion is needed.
  void save_npy(const std::string& path, const Tensor& t, DType as);
  Tensor allocate(DType dtype, const Shape& shape);
  Tensor zeros(DType dtype, const Shape& shape);
  // An output the caller already holds (the Python module's out=, by the
  // table's output name): output() returns it instead of allocating, so a
  // given output costs no second buffer. `hal run` gives none.
  void bind_output(const std::string& name, const Tensor& t) { given_outputs_[name] = t; }
  std::optional<Tensor> given_output(std::string_view name) const;
  // The builders' outputs: the given one by that name (its shape and dtype are
  // checked by the op's validation), else a new tensor of dtype and shape.
  Tensor output(std::string_view name, DType dtype, const Shape& shape);
  HostArray download(const Tensor& t);
  // Hands over the buffers allocated so far (the Python module keeps them
  // alive as long as the outputs it returns).
  std::vector<Buffer> release_buffers() { return std::move(buffers_); }

 private:
  Device& device_;
  Stream& stream_;
  std::vector<Buffer> buffers_;
  std::map<const HostArray*, Tensor> loaded_;
  std::map<std::string, Tensor, std::less<>> given_outputs_;
};

// Rope's positions on the device as i32; an i64 position beyond int32 is
// refused naming `op`, never saturated.
Tensor upload_rope_positions(DeviceArena& arena, const HostArray& positions, std::string_view op);

struct BuiltCall {
  OpCall call;
  // Every output the call writes, by its CLI name (gemm's C is "y").
  std::map<std::string, Tensor> outputs;
};

// Builds the call for `spec` from already-loaded inputs (names checked by the
// caller against the spec) and attributes; `requested` holds the names given
// with --out, so that optional outputs are written only when asked for.
BuiltCall build_call(const OpSpec& spec, const std::map<std::string, HostArray>& inputs, const Attrs& attrs,
                     const std::set<std::string>& requested, DeviceArena& arena);

}  // namespace hal::tools
