#pragma once
// safetensors, the format of Hugging Face checkpoints and of the conformance
// suite's recordings: 8-byte little-endian header length N, N bytes of JSON
// {"__metadata__": {string: string}, "<name>": {"dtype": "F32", "shape": [..],
// "data_offsets": [begin, end]}, ...} (padded with spaces), then the data.
// Offsets are relative to the end of the header.
//
// SafetensorsReader is how large files are read: it maps the file, parses and
// checks the header before any tensor is touched, and hands out each tensor's
// bytes as a view of the mapping (no copy in host memory). Files are untrusted:
// a header longer than the file or than kMaxHeaderBytes, malformed JSON, an
// unknown dtype, a negative or overflowing shape, data offsets outside the data
// or overlapping another tensor's, or a size that disagrees with the shape each
// throw hal::Error(io_error) naming the file (and the tensor).
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hal/dtype.h"
#include "hal/io/mapped_file.h"
#include "hal/shape.h"

namespace hal::io {

// Hugging Face's own reader refuses headers above 100 MB; so does this one.
inline constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

std::string_view safetensors_dtype(DType t);  // "F32", "BF16", "F8_E4M3", ...

// One tensor of a file: where its bytes lie (relative to the data section).
struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  std::uint64_t begin = 0, end = 0;
  std::uint64_t size() const { return end - begin; }
};

class SafetensorsReader {
 public:
  explicit SafetensorsReader(const std::string& path);

  const std::string& path() const noexcept { return file_.path(); }
  const std::map<std::string, std::string>& metadata() const noexcept { return metadata_; }
  // In the order of the header.
  const std::vector<SafetensorsEntry>& tensors() const noexcept { return tensors_; }
  const SafetensorsEntry* find(std::string_view name) const noexcept;
  // The tensor's bytes, a view of the mapping valid while the reader lives.
  std::span<const std::byte> bytes(const SafetensorsEntry& entry) const;

 private:
  MappedFile file_;
  std::size_t data_start_ = 0;
  std::map<std::string, std::string> metadata_;
  std::vector<SafetensorsEntry> tensors_;
};

// Whole files in memory, for small ones (conformance recordings).
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

void write_safetensors(const std::string& path, const SafetensorsFile& file);
// Reads with SafetensorsReader and copies every tensor out.
SafetensorsFile read_safetensors(const std::string& path);

}  // namespace hal::io
