#pragma once
// The kernel code-object bundles embedded into libhal at build time
// (hip/CMakeLists.txt generates the table). Data lives for the whole process.
#include <cstddef>
#include <span>

namespace hal::hip {

struct EmbeddedCodeObject {
  const char* file;            // kernel source name, e.g. "elementwise"
  const char* const* kernels;  // extern "C" kernel names found in the source; nullptr-terminated (a hint)
  const char* targets;         // offload targets in the bundle, comma-separated ("gfx90a,gfx940")
  const unsigned char* data;   // clang offload bundle, 64-byte aligned
  std::size_t size;
};

std::span<const EmbeddedCodeObject> embedded_code_objects();

}  // namespace hal::hip
