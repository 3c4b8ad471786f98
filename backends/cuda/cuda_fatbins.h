#pragma once
// The kernel fatbins embedded into libhal at build time (ptx/CMakeLists.txt
// generates the table). Data lives for the whole process.
#include <cstddef>
#include <span>

namespace hal::cuda {

struct EmbeddedFatbin {
  const char* file;             // kernel source name, e.g. "elementwise"
  const char* const* kernels;   // extern "C" kernel names found in the source; nullptr-terminated (a hint)
  const unsigned char* data;    // fatbin image, 64-byte aligned
  std::size_t size;
};

std::span<const EmbeddedFatbin> embedded_fatbins();

}  // namespace hal::cuda
