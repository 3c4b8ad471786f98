// hal.Error and its subclasses: a hal::Error raised in C++ becomes the
// subclass of its code, carrying `code` (hal's name of it) and `message`.
#include <fmt/format.h>
#include <pybind11/eval.h>

#include "hal/error.h"
#include "python/src/py_tensor.h"
#include "tools/cli.h"

namespace hal::python {

namespace {

constexpr const char* kErrorClasses = R"(
class Error(Exception):
    """An error reported by hal: `code` is hal's error code, `message` its text."""
    def __init__(self, message, code="invalid_argument"):
        super().__init__(message)
        self.message = message
        self.code = code

class InvalidArgument(Error, ValueError):
    """The caller's mistake: shape, dtype, stride, device, option."""

class Unsupported(Error):
    """A valid request this device does not implement."""

class OutOfMemory(Error, MemoryError):
    """An allocation failed."""

class DeviceError(Error):
    """The device or its driver reported a failure."""

class IoError(Error, OSError):
    """A file could not be read or written, or is malformed."""
)";

const char* class_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument: return "InvalidArgument";
    case ErrorCode::unsupported: return "Unsupported";
    case ErrorCode::out_of_memory: return "OutOfMemory";
    case ErrorCode::device_error: return "DeviceError";
    case ErrorCode::io_error: return "IoError";
  }
  return "Error";
}

void raise(const char* cls, const char* message, std::string_view code) {
  py::object type = py::module_::import("hal").attr(cls);
  py::object err = type(py::str(message), py::str(std::string(code)));
  PyErr_SetObject(type.ptr(), err.ptr());
}

// The C++ enumerator's name ("invalid_argument"), as Python code compares it.
const char* code_identifier(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::unsupported: return "unsupported";
    case ErrorCode::out_of_memory: return "out_of_memory";
    case ErrorCode::device_error: return "device_error";
    case ErrorCode::io_error: return "io_error";
  }
  return "unknown";
}

}  // namespace

void register_errors(py::module_& m) {
  py::dict ns;
  ns["__name__"] = "hal";
  py::exec(kErrorClasses, ns);
  for (const char* name : {"Error", "InvalidArgument", "Unsupported", "OutOfMemory", "DeviceError", "IoError"})
    m.attr(name) = ns[name];
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const hal::Error& e) {
      raise(class_for(e.code()), e.what(), code_identifier(e.code()));
    } catch (const hal::tools::UsageError& e) {
      // An attribute value that does not parse (the op table's parser).
      raise("InvalidArgument", e.what(), code_identifier(ErrorCode::invalid_argument));
    }
  });
}

}  // namespace hal::python
