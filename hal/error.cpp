#include "hal/error.h"

#include <fmt/format.h>

namespace hal {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument: return "invalid argument";
    case ErrorCode::unsupported: return "unsupported";
    case ErrorCode::out_of_memory: return "out of memory";
    case ErrorCode::device_error: return "device error";
    case ErrorCode::io_error: return "I/O error";
  }
  return "unknown error";
}

Error::Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}

void throw_invalid_argument(std::string_view op, std::string_view arg, std::string_view expected,
                            std::string_view given) {
  throw Error(ErrorCode::invalid_argument,
              fmt::format("{}: argument '{}': expected {}, given {}", op, arg, expected, given));
}

void throw_unsupported(std::string_view backend, std::string_view op, std::string_view what) {
  throw Error(ErrorCode::unsupported, fmt::format("{}: {} is not supported for {}", backend, op, what));
}

}  // namespace hal
