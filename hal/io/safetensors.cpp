#include "hal/io/safetensors.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <limits>
#include <optional>

#include "hal/error.h"
#include "hal/io/json_reader.h"
#include "hal/io/json_writer.h"

namespace hal::io {

std::string_view safetensors_dtype(DType t) {
  switch (t) {
    case DType::f32: return "F32";
    case DType::f16: return "F16";
    case DType::bf16: return "BF16";
    case DType::f8e4m3: return "F8_E4M3";
    case DType::f8e5m2: return "F8_E5M2";
    case DType::i8: return "I8";
    case DType::i32: return "I32";
    case DType::i64: return "I64";
    case DType::boolean: return "BOOL";
    case DType::f64: return "F64";
  }
  return "?";
}

void write_safetensors(const std::string& path, const SafetensorsFile& file) {
  std::string header = "{\"__metadata__\":{";
  bool first = true;
  for (const auto& [k, v] : file.metadata) {
    header += fmt::format("{}\"{}\":\"{}\"", first ? "" : ",", json_escape(k), json_escape(v));
    first = false;
  }
  header += "}";
  std::size_t offset = 0;
  for (const NamedTensor& t : file.tensors) {
    header += fmt::format(",\"{}\":{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}", json_escape(t.name),
                          safetensors_dtype(t.dtype), fmt::join(t.shape.span(), ","), offset, offset + t.bytes.size());
    offset += t.bytes.size();
  }
  header += "}";
  while (header.size() % 8 != 0) header += ' ';
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorCode::io_error, fmt::format("cannot write '{}'", path));
  std::uint8_t len[8];
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<std::uint8_t>(n >> (8 * i));
  f.write(reinterpret_cast<const char*>(len), 8);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  for (const NamedTensor& t : file.tensors) f.write(reinterpret_cast<const char*>(t.bytes.data()), static_cast<std::streamsize>(t.bytes.size()));
  if (!f) throw Error(ErrorCode::io_error, fmt::format("write to '{}' failed", path));
}

namespace {

DType parse_st_dtype(const std::string& s, const std::string& path) {
  for (DType t : kAllDTypes)
    if (safetensors_dtype(t) == s) return t;
  throw Error(ErrorCode::io_error, fmt::format("'{}': unknown safetensors dtype '{}'", path, s));
}

}  // namespace

SafetensorsFile read_safetensors(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorCode::io_error, fmt::format("cannot open '{}'", path));
  std::vector<char> all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (all.size() < 8) throw Error(ErrorCode::io_error, fmt::format("'{}': too short for a safetensors file", path));
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= std::uint64_t(static_cast<std::uint8_t>(all[static_cast<std::size_t>(i)])) << (8 * i);
  if (n > all.size() - 8) throw Error(ErrorCode::io_error, fmt::format("'{}': header length {} exceeds the file", path, n));
  const std::string source = fmt::format("{} (safetensors header)", path);
  const JsonValue root = parse_json(std::string_view(all.data() + 8, n), source);
  if (!root.is_object()) throw Error(ErrorCode::io_error, fmt::format("'{}': header is not an object", path));
  const std::size_t data_start = 8 + n, data_size = all.size() - data_start;
  SafetensorsFile out;
  for (const JsonMember& member : root.members()) {
    const std::string& name = member.key;
    const JsonValue& v = member.value;
    if (name == "__metadata__") {
      if (!v.is_object()) throw Error(ErrorCode::io_error, fmt::format("'{}': __metadata__ is not an object", path));
      for (const JsonMember& m : v.members()) {
        if (!m.value.is_string())
          throw Error(ErrorCode::io_error, fmt::format("'{}': __metadata__ entry '{}' is not a string", path, m.key));
        out.metadata[m.key] = m.value.text();
      }
      continue;
    }
    auto bad = [&](std::string_view what) {
      return Error(ErrorCode::io_error, fmt::format("'{}': tensor '{}': {}", path, name, what));
    };
    if (!v.is_object()) throw bad("entry is not an object");
    const JsonValue* dt = v.find("dtype");
    const JsonValue* shape = v.find("shape");
    const JsonValue* offs = v.find("data_offsets");
    if (!dt || !dt->is_string() || !shape || !shape->is_array() || !offs || !offs->is_array() || offs->items().size() != 2)
      throw bad("expected \"dtype\" (a string), \"shape\" (an array) and \"data_offsets\" (two integers)");
    NamedTensor t;
    t.name = name;
    t.dtype = parse_st_dtype(dt->text(), path);
    std::int64_t numel = 1;
    for (const JsonValue& d : shape->items()) {
      const std::optional<std::int64_t> dim = d.integer();
      if (!dim || *dim < 0) throw bad("shape entries must be non-negative integers");
      if (*dim != 0 && numel > std::numeric_limits<std::int64_t>::max() / *dim) throw bad("element count overflows int64");
      t.shape.push_back(*dim);
      numel *= *dim;
    }
    const std::optional<std::int64_t> ob = offs->items()[0].integer(), oe = offs->items()[1].integer();
    if (!ob || !oe || *ob < 0 || *oe < 0) throw bad("data_offsets must be two non-negative integers");
    const auto b = static_cast<std::uint64_t>(*ob), e = static_cast<std::uint64_t>(*oe);
    const auto elem = static_cast<std::uint64_t>(dtype_size(t.dtype));
    if (static_cast<std::uint64_t>(numel) > std::numeric_limits<std::uint64_t>::max() / elem) throw bad("byte size overflows");
    if (b > e || e > data_size || e - b != static_cast<std::uint64_t>(numel) * elem)
      throw bad(fmt::format("data_offsets [{}, {}] do not hold {} elements of {} inside the {} data bytes", b, e, numel,
                            dtype_name(t.dtype), data_size));
    t.bytes.assign(all.begin() + static_cast<std::ptrdiff_t>(data_start + b), all.begin() + static_cast<std::ptrdiff_t>(data_start + e));
    out.tensors.push_back(std::move(t));
  }
  return out;
}

}  // namespace hal::io
