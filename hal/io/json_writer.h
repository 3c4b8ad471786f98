#pragma once
// The JSON writer: string escaping and numbers, shared by the CLI, the
// conformance suite, the benchmarks and the safetensors writer (the project has
// no JSON library dependency). hal/io/json_reader.h reads what this writes.
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hal::io {

// The body of a JSON string literal (no quotes), control characters escaped.
inline std::string json_escape(std::string_view s) {
  std::string out;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;  // UTF-8 bytes pass through unchanged
        }
    }
  }
  return out;
}

// A JSON string literal, quotes included.
// (Appended, not `"\"" + ...`: GCC 12 warns falsely (-Wrestrict) on that form.)
inline std::string json_string(std::string_view s) {
  std::string out = "\"";
  out += json_escape(s);
  out += '"';
  return out;
}

// A JSON object of string values, in the given order: {"k": "v", ...}.
inline std::string json_string_object(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out = "{";
  for (const auto& [key, value] : entries) {
    if (out.size() > 1) out += ", ";
    out += json_string(key);
    out += ": ";
    out += json_string(value);
  }
  out += '}';
  return out;
}

// JSON has no NaN or Infinity: they become null.
inline std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace hal::io
