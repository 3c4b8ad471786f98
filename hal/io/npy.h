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

// Reads the header first (magic, version, dict, the data size against the
// file's size), so that a file that is not .npy, or an enormous or endless
// one, is refused before any memory is allocated for its data; the data is
// then read straight into the array (host memory: 1x the data).
HostArray read_npy(const std::string& path);

// The header of a .npy file, for readers that place the data themselves.
struct NpyHeader {
  DType dtype = DType::f32;
  Shape shape;
  std::size_t data_offset = 0;  // bytes from the start of the file
  std::int64_t data_bytes = 0;  // numel * dtype_size
};
NpyHeader read_npy_header(const std::string& path);
// Reads the data of `path` into dst (header.data_bytes bytes, host memory);
// throws io_error if the file no longer matches `header`.
void read_npy_into(const std::string& path, const NpyHeader& header, void* dst);

// Writes f32, f64, f16, i8, i32, i64 and bool; other dtypes throw
// invalid_argument (convert first, e.g. bf16 to f32). Every write error,
// a full disk included, throws io_error; the data is written straight from
// `data` (row-major, numel * dtype_size bytes of host memory).
void write_npy(const std::string& path, const HostArray& array);
void write_npy(const std::string& path, DType dtype, const Shape& shape, const void* data);

// Parses the text of a .npy header dict; `path` is for messages. Exposed for tests.
HostArray parse_npy_header(const std::string& header, const std::string& path);

// Element-wise conversion through double (each element rounded once to `to`).
HostArray convert(const HostArray& array, DType to);

// The '<f4'-style descriptor of a dtype that .npy can store, or empty.
std::string npy_descr(DType t);

}  // namespace hal::io
