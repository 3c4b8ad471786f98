#include "conformance/tensor_util.h"

#include <cstring>

#include "hal/registry.h"

namespace hal::conformance {

Device& cpu_device() { return hal::device("cpu"); }

std::vector<double> gather(const Tensor& t) {
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(t.numel()));
  for_each_index(t, [&](std::int64_t s) { out.push_back(load_element(t.data, t.dtype, s)); });
  return out;
}

std::size_t storage_bytes(const Tensor& t) {
  return static_cast<std::size_t>(t.numel() == 0 ? 0 : t.end_index()) * dtype_size(t.dtype);
}

HostCopy mirror_to_cpu(Stream& stream, const Tensor& t) {
  const std::size_t bytes = storage_bytes(t);
  HostCopy h{Buffer(cpu_device(), bytes), t};
  if (bytes > 0) {
    stream.copy_to_host(h.buffer.data(), t.data, bytes);
    stream.synchronize();
  }
  h.view.data = h.buffer.data();
  h.view.device = &cpu_device();
  return h;
}

std::vector<std::uint8_t> download_bytes(Stream& stream, const Tensor& t) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype));
  if (!out.empty()) {
    stream.copy_to_host(out.data(), t.first(), out.size());
    stream.synchronize();
  }
  return out;
}

}  // namespace hal::conformance
