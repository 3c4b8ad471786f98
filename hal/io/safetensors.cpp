#include "hal/io/safetensors.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>

#include "hal/error.h"
#include "hal/io/json.h"

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

// Just enough JSON for a safetensors header: objects, arrays, strings, integers.
struct Json {
  enum Kind { object, array, string, number } kind = number;
  std::vector<std::pair<std::string, Json>> members;
  std::vector<Json> items;
  std::string text;
  std::int64_t value = 0;
  const Json* get(std::string_view key) const {
    for (const auto& [k, v] : members)
      if (k == key) return &v;
    return nullptr;
  }
};

class Parser {
 public:
  Parser(std::string_view s, const std::string& path) : s_(s), path_(path) {}
  Json parse() {
    Json v = value();
    ws();
    if (i_ != s_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(std::string_view what) {
    throw Error(ErrorCode::io_error, fmt::format("'{}': malformed safetensors header at byte {}: {}", path_, i_, what));
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  char peek() {
    ws();
    if (i_ >= s_.size()) fail("unexpected end");
    return s_[i_];
  }
  void expect(char c) {
    if (peek() != c) fail(fmt::format("expected '{}'", c));
    ++i_;
  }
  std::string str() {
    expect('"');
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c == '\\') {
        if (i_ >= s_.size()) fail("bad escape");
        const char e = s_[i_++];
        if (e == 'n') c = '\n';
        else if (e == 't') c = '\t';
        else if (e == 'u') {
          if (i_ + 4 > s_.size()) fail("bad \\u escape");
          c = static_cast<char>(std::stoi(std::string(s_.substr(i_, 4)), nullptr, 16));
          i_ += 4;
        } else c = e;
      }
      out += c;
    }
    expect('"');
    return out;
  }
  Json value() {
    Json v;
    const char c = peek();
    if (c == '{') {
      v.kind = Json::object;
      ++i_;
      if (peek() == '}') return ++i_, v;
      for (;;) {
        std::string k = str();
        expect(':');
        v.members.emplace_back(std::move(k), value());
        if (peek() == ',') { ++i_; continue; }
        expect('}');
        return v;
      }
    }
    if (c == '[') {
      v.kind = Json::array;
      ++i_;
      if (peek() == ']') return ++i_, v;
      for (;;) {
        v.items.push_back(value());
        if (peek() == ',') { ++i_; continue; }
        expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.kind = Json::string;
      v.text = str();
      return v;
    }
    std::size_t start = i_;
    if (s_[i_] == '-') ++i_;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    if (start == i_) fail("expected a value");
    v.value = std::stoll(std::string(s_.substr(start, i_ - start)));
    return v;
  }
  std::string_view s_;
  std::string path_;
  std::size_t i_ = 0;
};

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
  const Json root = Parser(std::string_view(all.data() + 8, n), path).parse();
  if (root.kind != Json::object) throw Error(ErrorCode::io_error, fmt::format("'{}': header is not an object", path));
  const std::size_t data_start = 8 + n, data_size = all.size() - data_start;
  SafetensorsFile out;
  for (const auto& [name, v] : root.members) {
    if (name == "__metadata__") {
      for (const auto& [k, m] : v.members) out.metadata[k] = m.text;
      continue;
    }
    const Json* dt = v.get("dtype");
    const Json* shape = v.get("shape");
    const Json* offs = v.get("data_offsets");
    if (!dt || !shape || !offs || offs->items.size() != 2)
      throw Error(ErrorCode::io_error, fmt::format("'{}': tensor '{}' lacks dtype, shape or data_offsets", path, name));
    NamedTensor t;
    t.name = name;
    t.dtype = parse_st_dtype(dt->text, path);
    std::int64_t numel = 1;
    for (const Json& d : shape->items) t.shape.push_back(d.value), numel *= d.value;
    const auto b = static_cast<std::size_t>(offs->items[0].value), e = static_cast<std::size_t>(offs->items[1].value);
    if (b > e || e > data_size || e - b != static_cast<std::size_t>(numel) * dtype_size(t.dtype))
      throw Error(ErrorCode::io_error, fmt::format("'{}': tensor '{}' has bad data_offsets [{}, {}]", path, name, b, e));
    t.bytes.assign(all.begin() + static_cast<std::ptrdiff_t>(data_start + b), all.begin() + static_cast<std::ptrdiff_t>(data_start + e));
    out.tensors.push_back(std::move(t));
  }
  return out;
}

}  // namespace hal::io
