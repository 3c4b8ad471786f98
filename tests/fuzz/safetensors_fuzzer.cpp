// libFuzzer target: the safetensors reader on arbitrary bytes. Properties:
// SafetensorsReader either throws hal::Error or hands out entries whose byte
// views have the size their dtype and shape give and lie inside the file;
// read_safetensors agrees with it; an accepted file written back with
// write_safetensors reads back identical (names, dtypes, shapes, bytes,
// metadata). Any other exception, a crash or a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>

#include "hal/error.h"
#include "hal/io/safetensors.h"
#include "tests/fuzz/fuzz_file.h"

namespace {

bool same(const hal::io::SafetensorsFile& a, const hal::io::SafetensorsFile& b) {
  if (a.metadata != b.metadata || a.tensors.size() != b.tensors.size()) return false;
  for (std::size_t i = 0; i < a.tensors.size(); ++i) {
    const auto &x = a.tensors[i], &y = b.tensors[i];
    if (x.name != y.name || x.dtype != y.dtype || !(x.shape == y.shape) || x.bytes != y.bytes) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string in_path = hal::fuzz::scratch_path("in.safetensors");
  static const std::string out_path = hal::fuzz::scratch_path("out.safetensors");
  hal::fuzz::write_file(in_path, data, size);
  hal::io::SafetensorsFile file;
  try {
    hal::io::SafetensorsReader reader(in_path);
    for (const auto& e : reader.tensors()) {
      const auto bytes = reader.bytes(e);
      if (bytes.size() != e.size()) hal::fuzz::finding("safetensors: a view's size differs from its entry's");
      if (bytes.size() != static_cast<std::size_t>(hal::checked_numel(e.shape)) * hal::dtype_size(e.dtype))
        hal::fuzz::finding("safetensors: an accepted tensor's size differs from dtype size * numel");
      // Offsets are relative to the data section, which starts 8 bytes or
      // more into the file.
      if (e.begin > e.end || e.end + 8 > size) hal::fuzz::finding("safetensors: an entry lies outside the file");
    }
    file = hal::io::read_safetensors(in_path);
    if (file.tensors.size() != reader.tensors().size()) hal::fuzz::finding("read_safetensors disagrees with the reader");
  } catch (const hal::Error&) {
    return 0;
  }
  try {
    hal::io::write_safetensors(out_path, file);
    if (!same(hal::io::read_safetensors(out_path), file)) hal::fuzz::finding("write then read changed the file");
  } catch (const hal::Error& e) {
    hal::fuzz::finding(std::string("an accepted file does not round-trip: ") + e.what());
  }
  return 0;
}
