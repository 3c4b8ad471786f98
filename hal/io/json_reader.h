#pragma once
// The JSON reader (RFC 8259), for headers and configs that come from files a
// user did not write: safetensors headers, Hugging Face config.json and
// tokenizer.json, recorded reports.
//
// Untrusted input is the normal case, so the reader is bounded: nesting deeper
// than JsonLimits::max_depth and texts longer than max_bytes are refused, every
// escape (\" \\ \/ \b \f \n \r \t \uXXXX with surrogate pairs) is decoded to
// UTF-8, numbers follow the JSON grammar and are read without exceptions.
// Every problem throws hal::Error(io_error) "'<source>': malformed JSON at byte
// N: <what>", where <source> names the file (and part of it) being read.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hal::io {

struct JsonMember;

class JsonValue {
 public:
  enum class Kind { null, boolean, number, string, array, object };

  Kind kind() const noexcept { return kind_; }
  bool is_null() const noexcept { return kind_ == Kind::null; }
  bool is_bool() const noexcept { return kind_ == Kind::boolean; }
  bool is_number() const noexcept { return kind_ == Kind::number; }
  bool is_string() const noexcept { return kind_ == Kind::string; }
  bool is_array() const noexcept { return kind_ == Kind::array; }
  bool is_object() const noexcept { return kind_ == Kind::object; }

  // The value of a boolean / number / string; meaningless for other kinds.
  bool boolean() const noexcept { return boolean_; }
  double number() const noexcept { return number_; }
  const std::string& text() const noexcept { return text_; }
  // The number as an exact int64 when it was written as an integer literal
  // (no fraction, no exponent) that fits; otherwise nullopt.
  std::optional<std::int64_t> integer() const noexcept { return integer_; }

  // Array items and object members, in the order of the text (duplicate keys
  // are refused by the parser, so find() is unambiguous).
  const std::vector<JsonValue>& items() const noexcept { return items_; }
  const std::vector<JsonMember>& members() const noexcept { return members_; }
  const JsonValue* find(std::string_view key) const noexcept;

  static std::string_view kind_name(Kind k);

 private:
  friend class JsonParser;
  Kind kind_ = Kind::null;
  bool boolean_ = false;
  double number_ = 0.0;
  std::optional<std::int64_t> integer_;
  std::string text_;
  std::vector<JsonValue> items_;
  std::vector<JsonMember> members_;
};

struct JsonMember {
  std::string key;
  JsonValue value;
};

struct JsonLimits {
  int max_depth = 64;                            // nested arrays/objects
  std::size_t max_bytes = std::size_t{1} << 30;  // the whole text
};

// Appends code point `cp` (<= U+10FFFF) to `out` as UTF-8 (shared with the tokenizer).
void append_utf8(std::string& out, std::uint32_t cp);

// Parses one JSON value (with optional surrounding whitespace) from `text`.
JsonValue parse_json(std::string_view text, std::string_view source, const JsonLimits& limits = {});

}  // namespace hal::io
