#pragma once
// What both GPU backends do with the kernel images embedded in the library
// (cuda_fatbins.h, hip_code_objects.h): find the image that holds a kernel,
// and decide whether to synchronise after every launch.
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string_view>

namespace hal::gpu {

// Whether an image's source declares `name`: Image::kernels lists the
// extern "C" names a scan of the source found, nullptr-terminated.
template <class Image> bool declares(const Image& image, std::string_view name) {
  for (const char* const* k = image.kernels; k && *k; ++k)
    if (name == *k) return true;
  return false;
}

// The first function get(i) finds (non-null) for the kernel `name`, asking
// the images whose source declares it first, then every other one (the scan
// is a hint: a macro-made name would escape it); null when none has it.
template <class Image, class Get>
auto find_kernel(std::span<const Image> images, std::string_view name, Get get) -> decltype(get(std::size_t{})) {
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t i = 0; i < images.size(); ++i) {
      if (declares(images[i], name) != (pass == 0)) continue;
      if (auto fn = get(i)) return fn;
    }
  return nullptr;
}

// Debug builds, or the environment variable `name` set to 1: synchronise
// after every launch, so that an asynchronous fault is blamed on the kernel
// that caused it. Read on every call: callers cache it.
inline bool sync_after_launch_requested(const char* name) {
#ifndef NDEBUG
  (void)name;
  return true;
#else
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, "1") == 0;
#endif
}

}  // namespace hal::gpu
