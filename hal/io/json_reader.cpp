#include "hal/io/json_reader.h"

#include <fmt/format.h>

#include <charconv>

#include "hal/error.h"

namespace hal::io {

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}


const JsonValue* JsonValue::find(std::string_view key) const noexcept {
  for (const JsonMember& m : members_)
    if (m.key == key) return &m.value;
  return nullptr;
}

std::string_view JsonValue::kind_name(Kind k) {
  switch (k) {
    case Kind::null: return "null";
    case Kind::boolean: return "a boolean";
    case Kind::number: return "a number";
    case Kind::string: return "a string";
    case Kind::array: return "an array";
    case Kind::object: return "an object";
  }
  return "?";
}

// Recursive descent; the depth is counted so that hostile nesting is refused
// long before the stack is at risk.
class JsonParser {
 public:
  JsonParser(std::string_view s, std::string_view source, const JsonLimits& limits)
      : s_(s), source_(source), limits_(limits) {}

  JsonValue parse() {
    if (s_.size() > limits_.max_bytes)
      fail(fmt::format("the text is {} bytes, more than the limit of {}", s_.size(), limits_.max_bytes));
    JsonValue v = value(0);
    ws();
    if (i_ != s_.size()) fail("trailing characters after the value");
    return v;
  }

 private:
  [[noreturn]] void fail(std::string_view what) const {
    throw Error(ErrorCode::io_error, fmt::format("'{}': malformed JSON at byte {}: {}", source_, i_, what));
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  char peek() {
    ws();
    if (i_ >= s_.size()) fail("unexpected end of the text");
    return s_[i_];
  }
  void expect(char c) {
    if (peek() != c) fail(fmt::format("expected '{}', found '{}'", c, printable(s_[i_])));
    ++i_;
  }
  static std::string printable(char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f ? std::string(1, c) : fmt::format("\\x{:02x}", u);
  }
  void literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) fail(fmt::format("expected '{}'", word));
    i_ += word.size();
  }

  unsigned hex4() {
    if (i_ + 4 > s_.size()) fail("a \\u escape needs four hex digits");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s_[i_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
      else fail("a \\u escape needs four hex digits");
    }
    return v;
  }
  std::string string() {
    expect('"');
    std::string out;
    for (;;) {
      if (i_ >= s_.size()) fail("unterminated string");
      const char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) {
        --i_;
        fail("a control character inside a string (it must be escaped)");
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) fail("unterminated escape");
      const char e = s_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          std::uint32_t cp = hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF) {  // a high surrogate: its low half must follow
            if (s_.substr(i_, 2) != "\\u") fail("a high surrogate without its low surrogate");
            i_ += 2;
            const std::uint32_t lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("a high surrogate without its low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail("a low surrogate without its high surrogate");
          }
          append_utf8(out, cp);
          break;
        }
        default: --i_, fail(fmt::format("unknown escape '\\{}'", printable(e)));
      }
    }
  }
  JsonValue number() {
    const std::size_t start = i_;
    bool integral = true;
    auto digits = [&] {
      const std::size_t d = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      return i_ - d;
    };
    if (s_[i_] == '-') ++i_;
    if (i_ < s_.size() && s_[i_] == '0') {
      ++i_;
    } else if (digits() == 0) {
      i_ = start;
      fail(fmt::format("expected a value, found '{}'", printable(s_[i_])));
    }
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_, integral = false;
      if (digits() == 0) fail("a fraction needs digits after '.'");
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_, integral = false;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (digits() == 0) fail("an exponent needs digits");
    }
    JsonValue v;
    v.kind_ = JsonValue::Kind::number;
    const char* b = s_.data() + start;
    const char* e = s_.data() + i_;
    const auto [p, ec] = std::from_chars(b, e, v.number_);
    if (ec != std::errc() || p != e) {
      i_ = start;
      fail(fmt::format("number '{}' is out of range", std::string_view(b, static_cast<std::size_t>(e - b))));
    }
    if (integral) {
      std::int64_t n = 0;
      const auto [q, ec2] = std::from_chars(b, e, n);
      if (ec2 == std::errc() && q == e) v.integer_ = n;
    }
    return v;
  }
  JsonValue value(int depth) {
    const char c = peek();
    JsonValue v;
    if (c == '{' || c == '[') {
      if (depth >= limits_.max_depth) fail(fmt::format("nesting deeper than {} levels", limits_.max_depth));
      ++i_;
      if (c == '{') {
        v.kind_ = JsonValue::Kind::object;
        if (peek() == '}') return ++i_, v;
        for (;;) {
          if (peek() != '"') fail("expected a member name in quotes");
          const std::size_t at = i_;
          std::string key = string();
          if (v.find(key)) {
            i_ = at;
            fail(fmt::format("duplicate member \"{}\"", key));
          }
          expect(':');
          v.members_.push_back({std::move(key), value(depth + 1)});
          if (peek() == ',') { ++i_; continue; }
          expect('}');
          return v;
        }
      }
      v.kind_ = JsonValue::Kind::array;
      if (peek() == ']') return ++i_, v;
      for (;;) {
        v.items_.push_back(value(depth + 1));
        if (peek() == ',') { ++i_; continue; }
        expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.kind_ = JsonValue::Kind::string;
      v.text_ = string();
      return v;
    }
    if (c == 't' || c == 'f') {
      literal(c == 't' ? "true" : "false");
      v.kind_ = JsonValue::Kind::boolean;
      v.boolean_ = c == 't';
      return v;
    }
    if (c == 'n') {
      literal("null");
      return v;
    }
    return number();
  }

  std::string_view s_;
  std::string_view source_;
  JsonLimits limits_;
  std::size_t i_ = 0;
};

JsonValue parse_json(std::string_view text, std::string_view source, const JsonLimits& limits) {
  return JsonParser(text, source, limits).parse();
}

}  // namespace hal::io
