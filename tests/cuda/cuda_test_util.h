#pragma once
// Shared helpers of the CUDA device tests. Every test that needs a GPU starts
// with HAL_REQUIRE_CUDA(), which skips with the backend's reason when no cuda
// device is registered (so CI without a GPU passes).
#include <gtest/gtest.h>

#include <cstdint>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "hal/buffer.h"
#include "hal/registry.h"
#include "hal/stream.h"

namespace hal::cuda_test {

inline Device* cuda_device() {
  for (Device* d : devices())
    if (d->name() == "cuda:0") return d;
  return nullptr;
}

inline std::string cuda_reason() {
  for (const BackendStatus& b : backends())
    if (b.name == "cuda") return b.available ? "available" : b.reason;
  return "cuda backend not compiled in";
}

#define HAL_REQUIRE_CUDA()                                                      \
  do {                                                                          \
    if (::hal::cuda_test::cuda_device() == nullptr)                             \
      GTEST_SKIP() << "no cuda device: " << ::hal::cuda_test::cuda_reason();    \
  } while (0)

// A device buffer with kGuard bytes of sentinel after the tensor's bytes.
inline constexpr std::size_t kGuard = 256;
inline constexpr unsigned char kSentinel = 0xA5;

struct Guarded {
  Buffer buffer;
  Tensor tensor;
  std::size_t bytes;
};

inline Guarded guarded(Device& dev, Stream& s, DType t, const Shape& shape) {
  const std::size_t bytes = static_cast<std::size_t>(checked_numel(shape)) * dtype_size(t);
  Guarded g{Buffer(dev, bytes + kGuard), {}, bytes};
  g.tensor = Tensor::contiguous(g.buffer.data(), &dev, t, shape);
  s.memset(g.buffer.data(), kSentinel, bytes + kGuard);
  return g;
}

// Downloads the tensor's bytes and checks the guard after it.
inline std::vector<unsigned char> download_checked(Stream& s, const Guarded& g) {
  std::vector<unsigned char> all(g.bytes + kGuard);
  s.copy_to_host(all.data(), g.buffer.data(), all.size());
  s.synchronize();
  for (std::size_t i = g.bytes; i < all.size(); ++i) {
    EXPECT_EQ(all[i], kSentinel) << "guard byte " << (i - g.bytes) << " after the output was overwritten";
    if (all[i] != kSentinel) break;
  }
  all.resize(g.bytes);
  return all;
}

// Host bytes of `n` elements of dtype t from float values (rounded once).
inline std::vector<unsigned char> host_values(DType t, const std::vector<float>& v) {
  std::vector<unsigned char> out(v.size() * dtype_size(t));
  for (std::size_t i = 0; i < v.size(); ++i) store_element_f32(out.data(), t, static_cast<std::int64_t>(i), v[i]);
  return out;
}

// Distance in units in the last place between two values of float dtype t
// (element i of a and b); NaN vs NaN is 0, NaN vs number is huge.
inline std::int64_t ulp_distance(DType t, const unsigned char* a, const unsigned char* b, std::size_t i) {
  auto ordered = [&](const unsigned char* p) -> std::int64_t {
    if (t == DType::f32) {
      std::int32_t v;
      std::memcpy(&v, p + i * 4, 4);
      return v < 0 ? -static_cast<std::int64_t>(v & 0x7fffffff) : v;
    }
    if (dtype_size(t) == 2) {
      std::uint16_t v;
      std::memcpy(&v, p + i * 2, 2);
      return (v & 0x8000) ? -static_cast<std::int64_t>(v & 0x7fff) : v;
    }
    const std::uint8_t v = p[i];
    return (v & 0x80) ? -static_cast<std::int64_t>(v & 0x7f) : v;
  };
  const double va = load_element(a, t, static_cast<std::int64_t>(i));
  const double vb = load_element(b, t, static_cast<std::int64_t>(i));
  if (va != va || vb != vb) return (va != va && vb != vb) ? 0 : (1LL << 40);
  const std::int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

// Inputs that cover ordinary values, special values and both signs.
inline std::vector<float> test_inputs(std::size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = static_cast<double>((i * 2654435761u) % 100003u) / 100003.0;
    v[i] = static_cast<float>(lo + (hi - lo) * u);
  }
  const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
  for (std::size_t k = 0; k < sizeof(special) / sizeof(special[0]) && k < n; ++k) v[k] = special[k];
  return v;
}

}  // namespace hal::cuda_test

namespace hal::cuda_test {

struct HostTensor {
  DType dtype;
  Shape shape;
  std::vector<unsigned char> bytes;
};

using OpFn = std::function<void(Stream&, const std::vector<Tensor>& inputs, const Tensor& y)>;

// Runs `op` on `dev` with the given inputs and a guarded output of (ydtype,
// yshape); returns the output bytes (guard checked).
inline std::vector<unsigned char> run_on(Device& dev, const std::vector<HostTensor>& inputs, DType ydtype,
                                         const Shape& yshape, const OpFn& op) {
  Stream s(dev);
  std::vector<Buffer> keep;
  std::vector<Tensor> ins;
  for (const HostTensor& h : inputs) {
    keep.emplace_back(dev, h.bytes.size() + 1);
    s.copy_from_host(keep.back().data(), h.bytes.data(), h.bytes.size());
    ins.push_back(Tensor::contiguous(keep.back().data(), &dev, h.dtype, h.shape));
  }
  Guarded y = guarded(dev, s, ydtype, yshape);
  op(s, ins, y.tensor);
  return download_checked(s, y);
}

// Compares cuda:0 against the cpu device element by element within max_ulp.
inline void expect_matches_cpu(const std::vector<HostTensor>& inputs, DType ydtype, const Shape& yshape,
                               const OpFn& op, std::int64_t max_ulp, const std::string& what, double abs_tol = 0.0) {
  const auto want = run_on(device("cpu"), inputs, ydtype, yshape, op);
  const auto got = run_on(*cuda_device(), inputs, ydtype, yshape, op);
  ASSERT_EQ(want.size(), got.size());
  const std::size_t n = want.size() / dtype_size(ydtype);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t d = is_floating(ydtype) ? ulp_distance(ydtype, got.data(), want.data(), i)
                                               : std::memcmp(got.data() + i * dtype_size(ydtype),
                                                             want.data() + i * dtype_size(ydtype), dtype_size(ydtype)) != 0;
    const double g = load_element(got.data(), ydtype, static_cast<std::int64_t>(i));
    const double w = load_element(want.data(), ydtype, static_cast<std::int64_t>(i));
    const bool close = abs_tol > 0.0 && g == g && w == w && std::abs(g - w) <= abs_tol;
    if (d > max_ulp && !close && bad++ < 5)
      ADD_FAILURE() << what << ": element " << i << ": cuda " << load_element(got.data(), ydtype, static_cast<std::int64_t>(i))
                    << " cpu " << load_element(want.data(), ydtype, static_cast<std::int64_t>(i)) << " (" << d
                    << " ulp, allowed " << max_ulp << ")";
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " elements out of tolerance";
}

inline HostTensor host_tensor(DType t, const Shape& shape, float lo, float hi) {
  return {t, shape, host_values(t, test_inputs(static_cast<std::size_t>(checked_numel(shape)), lo, hi))};
}

}  // namespace hal::cuda_test
