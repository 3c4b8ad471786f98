// .npy reading and writing. The header is a Python dict literal; it is parsed
// by hand (a small recursive-descent reader), strictly enough that a damaged
// file is reported rather than misread.
#include "hal/io/npy.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "hal/error.h"

namespace hal::io {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error(ErrorCode::io_error, fmt::format("{}: {}", path, what));
}

struct DescrEntry {
  const char* descr;
  DType dtype;
};
// '|i1' is how NumPy itself spells int8; '<i1' is accepted as well.
constexpr DescrEntry kDescrs[] = {{"<f4", DType::f32}, {"<f8", DType::f64}, {"<f2", DType::f16},
                                  {"|i1", DType::i8},  {"<i1", DType::i8},  {"<i4", DType::i32},
                                  {"<i8", DType::i64}, {"|b1", DType::boolean}};

// Reader of the header dict: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path) : s_(text), path_(path) {}

  HostArray parse() {
    bool have_descr = false, have_order = false, have_shape = false;
    HostArray out;
    skip_space();
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = string_literal();
      skip_space();
      expect(':');
      skip_space();
      if (key == "descr") {
        const std::string d = string_literal();
        bool found = false;
        for (const auto& e : kDescrs)
          if (d == e.descr) out.dtype = e.dtype, found = true;
        if (!found)
          fail(path_, fmt::format("unsupported dtype '{}' (supported: <f4 <f8 <f2 |i1 <i4 <i8 |b1, little-endian)", d));
        have_descr = true;
      } else if (key == "fortran_order") {
        if (boolean_literal())
          fail(path_, "fortran_order is True: only C-order arrays are supported (use np.ascontiguousarray)");
        have_order = true;
      } else if (key == "shape") {
        out.shape = shape_tuple();
        have_shape = true;
      } else {
        fail(path_, fmt::format("malformed header: unexpected key '{}'", key));
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      skip_space();
      if (peek() != '}') fail(path_, fmt::format("malformed header: expected ',' or '}}' at offset {}", pos_));
    }
    expect('}');
    skip_space();
    if (pos_ != s_.size()) fail(path_, "malformed header: text after the closing '}'");
    if (!have_descr || !have_order || !have_shape)
      fail(path_, "malformed header: needs the keys 'descr', 'fortran_order' and 'shape'");
    return out;
  }

 private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }
  void expect(char c) {
    if (peek() != c) fail(path_, fmt::format("malformed header: expected '{}' at offset {}", c, pos_));
    ++pos_;
  }
  std::string string_literal() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail(path_, fmt::format("malformed header: expected a string at offset {}", pos_));
    ++pos_;
    const std::size_t end = s_.find(quote, pos_);
    if (end == std::string::npos) fail(path_, "malformed header: unterminated string");
    std::string v = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return v;
  }
  bool boolean_literal() {
    if (s_.compare(pos_, 4, "True") == 0) return pos_ += 4, true;
    if (s_.compare(pos_, 5, "False") == 0) return pos_ += 5, false;
    fail(path_, fmt::format("malformed header: expected True or False at offset {}", pos_));
  }
  Shape shape_tuple() {
    expect('(');
    Shape shape;
    std::int64_t numel = 1;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      if (peek() == '-') fail(path_, "invalid shape: negative dimension");
      if (!std::isdigit(static_cast<unsigned char>(peek())))
        fail(path_, fmt::format("malformed header: expected a dimension at offset {}", pos_));
      std::int64_t dim = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (__builtin_mul_overflow(dim, 10, &dim) || __builtin_add_overflow(dim, peek() - '0', &dim))
          fail(path_, "invalid shape: dimension does not fit in int64");
        ++pos_;
      }
      while (peek() == 'L') ++pos_;  // Python 2 long suffix
      if (shape.rank() == kMaxRank) fail(path_, fmt::format("invalid shape: more than {} dimensions", kMaxRank));
      if (__builtin_mul_overflow(numel, dim, &numel)) fail(path_, "invalid shape: element count overflows int64");
      shape.push_back(dim);
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      skip_space();
      if (peek() != ')') fail(path_, fmt::format("malformed header: expected ',' or ')' at offset {}", pos_));
    }
    expect(')');
    return shape;
  }

  const std::string& s_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

std::uint32_t read_le(const unsigned char* p, int bytes) {
  std::uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

std::string npy_descr(DType t) {
  switch (t) {
    case DType::f32: return "<f4";
    case DType::f64: return "<f8";
    case DType::f16: return "<f2";
    case DType::i8: return "|i1";
    case DType::i32: return "<i4";
    case DType::i64: return "<i8";
    case DType::boolean: return "|b1";
    default: return "";
  }
}

HostArray parse_npy_header(const std::string& header, const std::string& path) {
  return HeaderParser(header, path).parse();
}

HostArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, fmt::format("cannot open for reading ({})", std::strerror(errno)));
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail(path, "read error");

  if (file.size() < kMagicSize + 2 || std::memcmp(file.data(), kMagic, kMagicSize) != 0)
    fail(path, "not a .npy file (wrong magic; expected \\x93NUMPY)");
  const auto* u = reinterpret_cast<const unsigned char*>(file.data());
  const int major = u[6];
  if (major < 1 || major > 3) fail(path, fmt::format("unsupported .npy format version {}.{}", major, int(u[7])));
  const int len_bytes = major == 1 ? 2 : 4;
  const std::size_t prefix = kMagicSize + 2 + static_cast<std::size_t>(len_bytes);
  if (file.size() < prefix) fail(path, "truncated header");
  const std::size_t header_len = read_le(u + 8, len_bytes);
  if (file.size() - prefix < header_len)
    fail(path, fmt::format("truncated header: {} bytes declared, {} present", header_len, file.size() - prefix));

  HostArray out = parse_npy_header(file.substr(prefix, header_len), path);
  const std::size_t data_at = prefix + header_len;
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(out.numel(), static_cast<std::int64_t>(dtype_size(out.dtype)), &bytes))
    fail(path, "invalid shape: byte size overflows int64");
  const std::size_t present = file.size() - data_at;
  if (present < static_cast<std::uint64_t>(bytes))
    fail(path, fmt::format("truncated data: shape {} of {} needs {} bytes, file has {}", out.shape.str(),
                           dtype_name(out.dtype), bytes, present));
  if (present > static_cast<std::uint64_t>(bytes))
    fail(path, fmt::format("data size mismatch: shape {} of {} needs {} bytes, file has {}", out.shape.str(),
                           dtype_name(out.dtype), bytes, present));
  out.bytes.resize(static_cast<std::size_t>(bytes));
  if (bytes > 0) std::memcpy(out.bytes.data(), file.data() + data_at, static_cast<std::size_t>(bytes));
  if (out.dtype == DType::boolean) {
    for (std::byte b : out.bytes)
      if (static_cast<unsigned>(b) > 1) fail(path, "bool data holds a byte other than 0 or 1");
  }
  return out;
}

void write_npy(const std::string& path, const HostArray& array) {
  const std::string descr = npy_descr(array.dtype);
  if (descr.empty())
    throw_invalid_argument("write_npy", "array", "a dtype .npy can store (f32, f64, f16, i8, i32, i64, bool)",
                           std::string(dtype_name(array.dtype)));
  std::string shape;
  for (int i = 0; i < array.shape.rank(); ++i) shape += fmt::format("{}, ", array.shape[i]);
  if (array.shape.rank() > 1) shape.resize(shape.size() - 2);  // (n,) keeps its comma
  else if (array.shape.rank() == 1) shape.pop_back();
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, shape);
  // The data starts on a 64-byte boundary; the header ends with '\n'.
  const bool v1 = header.size() + 1 + 10 < 65536;
  const std::size_t prefix = v1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(path, fmt::format("cannot open for writing ({})", std::strerror(errno)));
  out.write(kMagic, kMagicSize);
  const char version[2] = {static_cast<char>(v1 ? 1 : 2), 0};
  out.write(version, 2);
  const std::uint32_t len = static_cast<std::uint32_t>(header.size());
  const char len_bytes[4] = {static_cast<char>(len & 0xff), static_cast<char>((len >> 8) & 0xff),
                             static_cast<char>((len >> 16) & 0xff), static_cast<char>((len >> 24) & 0xff)};
  out.write(len_bytes, v1 ? 2 : 4);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(array.bytes.data()), static_cast<std::streamsize>(array.bytes.size()));
  if (!out) fail(path, "write error");
}

HostArray convert(const HostArray& array, DType to) {
  if (array.dtype == to) return array;
  HostArray out;
  out.dtype = to;
  out.shape = array.shape;
  const std::int64_t n = array.numel();
  out.bytes.resize(static_cast<std::size_t>(n) * dtype_size(to));
  for (std::int64_t i = 0; i < n; ++i)
    store_element(out.bytes.data(), to, i, load_element(array.bytes.data(), array.dtype, i));
  return out;
}

}  // namespace hal::io
