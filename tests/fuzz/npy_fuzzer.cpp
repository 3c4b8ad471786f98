// libFuzzer target: hal::io::read_npy on arbitrary bytes. Properties: the
// reader either throws hal::Error or returns an array whose byte count is
// numel * dtype_size; an accepted array written back with write_npy reads
// back identical. Any other exception, a crash or a sanitizer report is a
// finding.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hal/error.h"
#include "hal/io/npy.h"
#include "tests/fuzz/fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string in_path = hal::fuzz::scratch_path("in.npy");
  static const std::string out_path = hal::fuzz::scratch_path("out.npy");
  hal::fuzz::write_file(in_path, data, size);
  hal::io::HostArray a;
  try {
    a = hal::io::read_npy(in_path);
  } catch (const hal::Error&) {
    return 0;  // a refusal is the right answer to most inputs
  }
  if (a.bytes.size() != static_cast<std::size_t>(a.numel()) * hal::dtype_size(a.dtype))
    hal::fuzz::finding("read_npy: byte count differs from numel * dtype size");
  hal::io::HostArray back;
  try {
    hal::io::write_npy(out_path, a);
    back = hal::io::read_npy(out_path);
  } catch (const hal::Error& e) {
    hal::fuzz::finding(std::string("an accepted array does not round-trip: ") + e.what());
  }
  if (back.dtype != a.dtype || !(back.shape == a.shape) || back.bytes != a.bytes)
    hal::fuzz::finding("write_npy then read_npy changed the array");
  return 0;
}
