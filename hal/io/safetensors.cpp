#include "hal/io/safetensors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>

#include "hal/error.h"
#include "hal/io/json_reader.h"
#include "hal/io/json_writer.h"
#include "hal/io/output_file.h"

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
    // The safetensors format names no FNUZ fp8 type. hal writes and reads these
    // (the suite's --record files hold FNUZ outputs); other readers refuse them.
    case DType::f8e4m3fnuz: return "F8_E4M3FNUZ";
    case DType::f8e5m2fnuz: return "F8_E5M2FNUZ";
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
  OutputFile f(path);  // every write and the close checked (a full disk)
  std::uint8_t len[8];
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<std::uint8_t>(n >> (8 * i));
  f.write(len, 8);
  f.write(header);
  for (const NamedTensor& t : file.tensors) f.write(t.bytes.data(), t.bytes.size());
  f.close();
}

namespace {

DType parse_st_dtype(const std::string& s, const std::string& path, const std::string& tensor) {
  for (DType t : kAllDTypes)
    if (safetensors_dtype(t) == s) return t;
  std::vector<std::string_view> known;
  for (DType t : kAllDTypes) known.push_back(safetensors_dtype(t));
  throw Error(ErrorCode::io_error, fmt::format("'{}': tensor '{}': dtype '{}' is not supported (hal reads {})", path,
                                              tensor, s, fmt::join(known, ", ")));
}

}  // namespace

SafetensorsReader::SafetensorsReader(const std::string& path) : file_(path) {
  const std::span<const std::byte> all = file_.bytes();
  auto fail = [&](std::string_view what) { return Error(ErrorCode::io_error, fmt::format("'{}': {}", path, what)); };
  if (all.size() < 8) throw fail(fmt::format("{} bytes is too short for a safetensors file", all.size()));
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= std::uint64_t(static_cast<std::uint8_t>(all[static_cast<std::size_t>(i)])) << (8 * i);
  if (n > kMaxHeaderBytes) throw fail(fmt::format("header length {} exceeds the limit of {} bytes", n, kMaxHeaderBytes));
  if (n > all.size() - 8) throw fail(fmt::format("header length {} exceeds the file ({} bytes)", n, all.size()));
  const std::string_view header(reinterpret_cast<const char*>(all.data()) + 8, static_cast<std::size_t>(n));
  if (header.empty() || header.front() != '{') throw fail("the header does not start with '{'");
  const JsonValue root = parse_json(header, fmt::format("{} (safetensors header)", path));
  data_start_ = 8 + static_cast<std::size_t>(n);
  const std::uint64_t data_size = all.size() - data_start_;
  for (const JsonMember& member : root.members()) {
    const std::string& name = member.key;
    const JsonValue& v = member.value;
    if (name == "__metadata__") {
      if (!v.is_object()) throw fail("__metadata__ is not an object");
      for (const JsonMember& m : v.members()) {
        if (!m.value.is_string()) throw fail(fmt::format("__metadata__ entry '{}' is not a string", m.key));
        metadata_[m.key] = m.value.text();
      }
      continue;
    }
    auto bad = [&](std::string_view what) { return fail(fmt::format("tensor '{}': {}", name, what)); };
    if (!v.is_object()) throw bad("entry is not an object");
    const JsonValue* dt = v.find("dtype");
    const JsonValue* shape = v.find("shape");
    const JsonValue* offs = v.find("data_offsets");
    if (!dt || !dt->is_string() || !shape || !shape->is_array() || !offs || !offs->is_array() || offs->items().size() != 2)
      throw bad("expected \"dtype\" (a string), \"shape\" (an array) and \"data_offsets\" (two integers)");
    SafetensorsEntry t;
    t.name = name;
    t.dtype = parse_st_dtype(dt->text(), path, name);
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
    t.begin = static_cast<std::uint64_t>(*ob), t.end = static_cast<std::uint64_t>(*oe);
    const auto elem = static_cast<std::uint64_t>(dtype_size(t.dtype));
    if (static_cast<std::uint64_t>(numel) > std::numeric_limits<std::uint64_t>::max() / elem) throw bad("byte size overflows");
    if (t.begin > t.end || t.end > data_size)
      throw bad(fmt::format("data_offsets [{}, {}] lie outside the {} data bytes", t.begin, t.end, data_size));
    if (t.size() != static_cast<std::uint64_t>(numel) * elem)
      throw bad(fmt::format("data_offsets [{}, {}] hold {} bytes, but shape {} of {} needs {}", t.begin, t.end, t.size(),
                            t.shape.str(), dtype_name(t.dtype), static_cast<std::uint64_t>(numel) * elem));
    tensors_.push_back(std::move(t));
  }
  // Two tensors must not share bytes (a lying header could alias weights).
  std::vector<const SafetensorsEntry*> by_offset;
  for (const SafetensorsEntry& t : tensors_)
    if (t.size() > 0) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](auto* x, auto* y) { return x->begin < y->begin; });
  for (std::size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i]->begin < by_offset[i - 1]->end)
      throw fail(fmt::format("tensors '{}' [{}, {}] and '{}' [{}, {}] overlap", by_offset[i - 1]->name,
                             by_offset[i - 1]->begin, by_offset[i - 1]->end, by_offset[i]->name, by_offset[i]->begin,
                             by_offset[i]->end));
}

const SafetensorsEntry* SafetensorsReader::find(std::string_view name) const noexcept {
  for (const SafetensorsEntry& t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

std::span<const std::byte> SafetensorsReader::bytes(const SafetensorsEntry& entry) const {
  return file_.bytes().subspan(data_start_ + static_cast<std::size_t>(entry.begin), static_cast<std::size_t>(entry.size()));
}

SafetensorsFile read_safetensors(const std::string& path) {
  const SafetensorsReader reader(path);
  SafetensorsFile out;
  out.metadata = reader.metadata();
  for (const SafetensorsEntry& t : reader.tensors()) {
    const std::span<const std::byte> b = reader.bytes(t);
    const auto* p = reinterpret_cast<const std::uint8_t*>(b.data());
    out.tensors.push_back({t.name, t.dtype, t.shape, std::vector<std::uint8_t>(p, p + b.size())});
  }
  return out;
}

}  // namespace hal::io
