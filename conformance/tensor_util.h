#pragma once
// Host-side helpers of the suite: reading strided views element by element,
// owning CPU copies of tensors, and moving a view's storage between devices.
#include <cstdint>
#include <vector>

#include "hal/buffer.h"
#include "hal/stream.h"
#include "hal/tensor.h"

namespace hal::conformance {

// The CPU device (always present).
Device& cpu_device();

// Visits the storage index of every element of `shape`/`strides`/`offset` in
// row-major logical order.
template <class F>
void for_each_index(const Tensor& t, F&& f) {
  const std::int64_t n = t.numel();
  if (n == 0) return;
  std::vector<std::int64_t> idx(static_cast<std::size_t>(t.rank()), 0);
  std::int64_t storage = t.offset;
  for (std::int64_t i = 0; i < n; ++i) {
    f(storage);
    for (int d = t.rank() - 1; d >= 0; --d) {
      const auto ud = static_cast<std::size_t>(d);
      ++idx[ud];
      storage += t.strides[d];
      if (idx[ud] < t.shape[d]) break;
      storage -= t.strides[d] * t.shape[d];
      idx[ud] = 0;
    }
  }
}

// Logical (row-major) values of a host-accessible view, widened exactly to double.
std::vector<double> gather(const Tensor& t);

// Bytes of the storage a view touches, from its base pointer: end_index() elements.
std::size_t storage_bytes(const Tensor& t);

// A CPU copy of `t` (on any device) holding the same storage bytes and the same
// shape/strides/offset, so the copy reads exactly what `t` reads.
struct HostCopy {
  Buffer buffer;
  Tensor view;
};
HostCopy mirror_to_cpu(Stream& stream, const Tensor& t);

// Raw bytes of a contiguous output at t.data (numel * dtype_size).
std::vector<std::uint8_t> download_bytes(Stream& stream, const Tensor& t);

// Bit patterns: 0xFF is NaN in every float dtype this suite writes, -1 for the
// integer outputs (an impossible argmax), and 0xFF for bool (not 0 or 1).
inline constexpr std::uint8_t kPoisonByte = 0xFF;
inline constexpr std::uint8_t kGuardByte = 0xA5;
inline constexpr std::size_t kGuardBytes = 256;

}  // namespace hal::conformance
