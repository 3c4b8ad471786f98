#pragma once
// NumPy .npy files (format versions 1.0, 2.0 and 3.0), C order, little-endian.
//
// Supported element types: '<f4' f32, '<f8' f64, '<f2' f16, '<i1'/'|i1' i8,
// '<i4' i32, '<i8' i64, '|b1' bool. Anything else (big-endian, unsigned,
// complex, Fortran order, object arrays) is rejected. Every problem with a file
// throws hal::Error(io_error) naming the file and what is wrong with it.
#include <cstddef>
#include <string>
#include <vector>

#include "hal/dtype.h"
#include "hal/shape.h"

namespace hal::io {

// A host array: row-major elements of `dtype`, `shape`.
struct HostArray {
  DType dtype = DType::f32;
  Shape shape;
  std::vector<std::byte> bytes;  // numel * dtype_size(dtype)

  std::int64_t numel() const { return checked_numel(shape); }
};

HostArray read_npy(const std::string& path);
// Writes f32, f64, f16, i8, i32, i64 and bool; other dtypes throw
// invalid_argument (convert first, e.g. bf16 to f32).
void write_npy(const std::string& path, const HostArray& array);

// Parses the text of a .npy header dict; `path` is for messages. Exposed for tests.
HostArray parse_npy_header(const std::string& header, const std::string& path);

// Element-wise conversion through double (each element rounded once to `to`).
HostArray convert(const HostArray& array, DType to);

// The '<f4'-style descriptor of a dtype that .npy can store, or empty.
std::string npy_descr(DType t);

}  // namespace hal::io
