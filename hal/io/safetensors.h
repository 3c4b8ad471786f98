#pragma once
// A minimal safetensors reader/writer (the format of Hugging Face's
// `safetensors`): 8-byte little-endian header length N, N bytes of JSON
// {"__metadata__": {string: string}, "<name>": {"dtype": "F32", "shape": [..],
// "data_offsets": [begin, end]}, ...}, padded with spaces to 8 bytes, then the
// data. Offsets are relative to the end of the header.
#include <map>
#include <string>
#include <vector>

#include "hal/dtype.h"
#include "hal/shape.h"

namespace hal::io {

struct NamedTensor {
  std::string name;
  DType dtype;
  Shape shape;
  std::vector<std::uint8_t> bytes;
};

struct SafetensorsFile {
  std::map<std::string, std::string> metadata;
  std::vector<NamedTensor> tensors;
};

std::string_view safetensors_dtype(DType t);  // "F32", "BF16", "F8_E4M3", ...
void write_safetensors(const std::string& path, const SafetensorsFile& file);
// Throws hal::Error(io_error) naming the file and the problem.
SafetensorsFile read_safetensors(const std::string& path);


}  // namespace hal::io
