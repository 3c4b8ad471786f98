// .npy reading and writing. The header is a Python dict literal; it is parsed
// by hand (a small recursive-descent reader), strictly enough that a damaged
// file is reported rather than misread.
#include "hal/io/npy.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "hal/error.h"
#include "hal/io/output_file.h"

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

namespace {

// A file opened for reading with POSIX calls: every failure is an io_error
// naming the file and the system's reason (iostreams would report a
// directory as "basic_filebuf::underflow error reading the file").
class InputFile {
 public:
  explicit InputFile(const std::string& path) : path_(path), fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) fail(path_, fmt::format("cannot open for reading ({})", std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && S_ISDIR(st.st_mode)) {
      ::close(fd_);
      fail(path_, "cannot read: is a directory");
    }
    if (S_ISREG(st.st_mode)) size_ = static_cast<std::int64_t>(st.st_size);
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile() { ::close(fd_); }

  // The size of a regular file, or -1 (a pipe, a device).
  std::int64_t size() const { return size_; }

  // Reads up to `bytes` (fewer only at the end of the file); returns the count.
  std::size_t read(void* dst, std::size_t bytes) {
    std::size_t done = 0;
    while (done < bytes) {
      const ::ssize_t n = ::read(fd_, static_cast<char*>(dst) + done, std::min<std::size_t>(bytes - done, 1u << 30));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(path_, fmt::format("read error ({})", std::strerror(errno)));
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    return done;
  }

 private:
  const std::string& path_;
  int fd_;
  std::int64_t size_ = -1;
};

// .npy headers are a few hundred bytes (NumPy itself refuses more than 10000
// by default); a larger declared length is a damaged file, not an allocation.
constexpr std::size_t kMaxHeaderBytes = 1 << 20;

// Reads magic, version and header dict; leaves the file at the first data byte.
NpyHeader read_header(InputFile& in, const std::string& path) {
  unsigned char prefix[12];
  const std::size_t got = in.read(prefix, kMagicSize + 2);
  if (got < kMagicSize + 2 || std::memcmp(prefix, kMagic, kMagicSize) != 0)
    fail(path, "not a .npy file (wrong magic; expected \\x93NUMPY)");
  const int major = prefix[6];
  if (major < 1 || major > 3) fail(path, fmt::format("unsupported .npy format version {}.{}", major, int(prefix[7])));
  const int len_bytes = major == 1 ? 2 : 4;
  const std::size_t prefix_size = kMagicSize + 2 + static_cast<std::size_t>(len_bytes);
  if (in.read(prefix + 8, static_cast<std::size_t>(len_bytes)) != static_cast<std::size_t>(len_bytes))
    fail(path, "truncated header");
  const std::size_t header_len = read_le(prefix + 8, len_bytes);
  if (in.size() >= 0 && static_cast<std::uint64_t>(in.size()) - prefix_size < header_len)
    fail(path, fmt::format("truncated header: {} bytes declared, {} present", header_len,
                           static_cast<std::uint64_t>(in.size()) - prefix_size));
  if (header_len > kMaxHeaderBytes)
    fail(path, fmt::format("malformed header: {} bytes declared, at most {} supported", header_len, kMaxHeaderBytes));
  std::string text(header_len, '\0');
  const std::size_t have = in.read(text.data(), header_len);
  if (have < header_len) fail(path, fmt::format("truncated header: {} bytes declared, {} present", header_len, have));

  const HostArray parsed = parse_npy_header(text, path);
  NpyHeader h;
  h.dtype = parsed.dtype;
  h.shape = parsed.shape;
  h.data_offset = prefix_size + header_len;
  if (__builtin_mul_overflow(checked_numel(parsed.shape), static_cast<std::int64_t>(dtype_size(parsed.dtype)),
                             &h.data_bytes))
    fail(path, "invalid shape: byte size overflows int64");
  if (in.size() >= 0) {
    const auto present = static_cast<std::uint64_t>(in.size()) - h.data_offset;
    if (present < static_cast<std::uint64_t>(h.data_bytes))
      fail(path, fmt::format("truncated data: shape {} of {} needs {} bytes, file has {}", h.shape.str(),
                             dtype_name(h.dtype), h.data_bytes, present));
    if (present > static_cast<std::uint64_t>(h.data_bytes))
      fail(path, fmt::format("data size mismatch: shape {} of {} needs {} bytes, file has {}", h.shape.str(),
                             dtype_name(h.dtype), h.data_bytes, present));
  }
  return h;
}

// Reads exactly the header's data bytes into dst, then checks the file ends
// there (for files whose size fstat does not know).
void read_data(InputFile& in, const std::string& path, const NpyHeader& h, void* dst) {
  const auto bytes = static_cast<std::size_t>(h.data_bytes);
  const std::size_t got = in.read(dst, bytes);
  if (got < bytes)
    fail(path, fmt::format("truncated data: shape {} of {} needs {} bytes, file has {}", h.shape.str(),
                           dtype_name(h.dtype), bytes, got));
  char extra;
  if (in.size() < 0 && in.read(&extra, 1) != 0)
    fail(path, fmt::format("data size mismatch: shape {} of {} needs {} bytes, file has more", h.shape.str(),
                           dtype_name(h.dtype), bytes));
  if (h.dtype == DType::boolean) {
    const auto* b = static_cast<const unsigned char*>(dst);
    for (std::size_t i = 0; i < bytes; ++i)
      if (b[i] > 1) fail(path, "bool data holds a byte other than 0 or 1");
  }
}

}  // namespace

NpyHeader read_npy_header(const std::string& path) {
  InputFile in(path);
  return read_header(in, path);
}

void read_npy_into(const std::string& path, const NpyHeader& expected, void* dst) {
  InputFile in(path);
  const NpyHeader h = read_header(in, path);
  if (h.dtype != expected.dtype || !(h.shape == expected.shape))
    fail(path, fmt::format("changed while being read: {}{} now, {}{} before", dtype_name(h.dtype), h.shape.str(),
                           dtype_name(expected.dtype), expected.shape.str()));
  read_data(in, path, h, dst);
}

HostArray read_npy(const std::string& path) {
  InputFile in(path);
  const NpyHeader h = read_header(in, path);
  HostArray out;
  out.dtype = h.dtype;
  out.shape = h.shape;
  out.bytes.resize(static_cast<std::size_t>(h.data_bytes));
  read_data(in, path, h, out.bytes.data());
  return out;
}

void write_npy(const std::string& path, DType dtype, const Shape& shape, const void* data) {
  const std::string descr = npy_descr(dtype);
  if (descr.empty())
    throw_invalid_argument("write_npy", "array", "a dtype .npy can store (f32, f64, f16, i8, i32, i64, bool)",
                           std::string(dtype_name(dtype)));
  const auto bytes = static_cast<std::size_t>(checked_numel(shape, "write_npy")) * dtype_size(dtype);
  if (data == nullptr && bytes != 0) throw_invalid_argument("write_npy", "data", "a non-null address", "null");
  std::string dims;
  for (int i = 0; i < shape.rank(); ++i) dims += fmt::format("{}, ", shape[i]);
  if (shape.rank() > 1) dims.resize(dims.size() - 2);  // (n,) keeps its comma
  else if (shape.rank() == 1) dims.pop_back();
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, dims);
  // The data starts on a 64-byte boundary; the header ends with '\n'.
  const bool v1 = header.size() + 1 + 10 < 65536;
  const std::size_t prefix = v1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';

  OutputFile out(path);
  out.write(kMagic, kMagicSize);
  const char version[2] = {static_cast<char>(v1 ? 1 : 2), 0};
  out.write(version, 2);
  const std::uint32_t len = static_cast<std::uint32_t>(header.size());
  const char len_bytes[4] = {static_cast<char>(len & 0xff), static_cast<char>((len >> 8) & 0xff),
                             static_cast<char>((len >> 16) & 0xff), static_cast<char>((len >> 24) & 0xff)};
  out.write(len_bytes, v1 ? 2 : 4);
  out.write(header);
  out.write(data, bytes);
  out.close();
}

void write_npy(const std::string& path, const HostArray& array) {
  if (array.bytes.size() != static_cast<std::size_t>(array.numel()) * dtype_size(array.dtype))
    throw_invalid_argument("write_npy", "array", fmt::format("{} bytes for {}{}", array.numel() * dtype_size(array.dtype),
                                                             dtype_name(array.dtype), array.shape.str()),
                           fmt::format("{} bytes", array.bytes.size()));
  write_npy(path, array.dtype, array.shape, array.bytes.data());
}

HostArray convert(const HostArray& array, DType to) {
  const std::int64_t numel = array.numel();
  if (array.bytes.size() != static_cast<std::size_t>(numel) * dtype_size(array.dtype))
    throw_invalid_argument("convert", "array", fmt::format("{} bytes for {}{}", numel * dtype_size(array.dtype),
                                                           dtype_name(array.dtype), array.shape.str()),
                           fmt::format("{} bytes", array.bytes.size()));
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
