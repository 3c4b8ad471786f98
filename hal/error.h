#pragma once
// hal::Error: the one exception type of the library.
//
// Every misuse is reported with the op (or API function) that detected it, the
// argument at fault, what was expected and what was given, e.g.
//   "softmax: argument 'y': expected shape [4, 7] (same as x), given [4, 8]".
// Nothing is written to any output before validation passes, so a caught
// Error leaves the caller's buffers as they were.
#include <stdexcept>
#include <string>
#include <string_view>

namespace hal {

enum class ErrorCode {
  invalid_argument,  // the caller's mistake: shape, dtype, stride, index, option
  unsupported,       // valid request that this backend/device does not implement
  out_of_memory,     // an allocation failed
  device_error,      // the device or its driver reported a failure
  io_error,          // a file could not be read or written, or is malformed
};

std::string_view error_code_name(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message);
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

// "<op>: argument '<arg>': expected <expected>, given <given>"
[[noreturn]] void throw_invalid_argument(std::string_view op, std::string_view arg,
                                         std::string_view expected, std::string_view given);
// "<backend>: <op> is not supported for <what>"
[[noreturn]] void throw_unsupported(std::string_view backend, std::string_view op,
                                    std::string_view what);

}  // namespace hal
