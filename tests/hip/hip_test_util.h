#pragma once
// Shared helpers of the HIP tests. Every test that needs a GPU starts with
// HAL_REQUIRE_HIP(), which skips with the backend's reason when no hip device
// is registered (so CI without a GPU passes).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "hal/buffer.h"
#include "hal/dtype.h"
#include "hal/registry.h"
#include "hal/stream.h"

namespace hal::hip_test {

inline Device* hip_device() {
  for (Device* d : devices())
    if (d->name() == "hip:0") return d;
  return nullptr;
}

inline std::string hip_reason() {
  for (const BackendStatus& b : backends())
    if (b.name == "hip") return b.available ? "available" : b.reason;
  return "hip backend not compiled in";
}

#define HAL_REQUIRE_HIP()                                                    \
  do {                                                                       \
    if (::hal::hip_test::hip_device() == nullptr)                            \
      GTEST_SKIP() << "no hip device: " << ::hal::hip_test::hip_reason();    \
  } while (0)

// A contiguous tensor on `dev` holding `values` rounded to `t`.
struct Owned {
  Buffer buffer;
  Tensor tensor;
};

inline Owned upload(Device& dev, Stream& s, DType t, const Shape& shape, const std::vector<float>& values) {
  Owned o{Buffer::for_tensor(dev, t, shape), {}};
  o.tensor = o.buffer.view(t, shape);
  std::vector<unsigned char> host(values.size() * dtype_size(t));
  for (std::size_t i = 0; i < values.size(); ++i) store_element_f32(host.data(), t, static_cast<std::int64_t>(i), values[i]);
  s.upload(o.tensor, host.data());
  return o;
}

inline std::vector<unsigned char> download_bytes(Stream& s, const Tensor& t) {
  std::vector<unsigned char> host(static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype));
  s.download(host.data(), t);
  s.synchronize();
  return host;
}

inline std::vector<float> download(Stream& s, const Tensor& t) {
  const auto bytes = download_bytes(s, t);
  std::vector<float> v(static_cast<std::size_t>(t.numel()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = load_element_f32(bytes.data(), t.dtype, static_cast<std::int64_t>(i));
  return v;
}

// Deterministic test inputs in [-1, 1).
inline std::vector<float> ramp(std::size_t n, unsigned salt = 1) {
  std::vector<float> v(n);
  std::uint32_t x = 0x9E3779B9u * salt + 12345u;
  for (auto& e : v) {
    x = x * 1664525u + 1013904223u;
    e = static_cast<float>(x >> 8) * (1.0f / 8388608.0f) - 1.0f;
  }
  return v;
}

}  // namespace hal::hip_test
