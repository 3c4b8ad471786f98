#pragma once
// A whole small text file (config.json, tokenizer.json, an index), or
// hal::Error(io_error) naming it.
#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <string>

#include "hal/error.h"

namespace hal::model {

inline std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorCode::io_error, fmt::format("'{}': cannot open", path));
  std::ostringstream text;
  text << f.rdbuf();
  return text.str();
}

}  // namespace hal::model
