#include "hal/stream.h"

#include <fmt/format.h>

#include "hal/bounds_check.h"
#include "hal/error.h"

namespace hal {

Stream::Stream(Device& device) : device_(&device), impl_(device.create_stream()) {}
Stream::Stream(Device& device, std::unique_ptr<StreamImpl> impl) : device_(&device), impl_(std::move(impl)) {}
Stream::~Stream() = default;

// A null address with a non-zero size is refused before it reaches the
// backend (a CPU memmove or a driver call would crash or report an opaque
// failure); zero bytes from or to null is a no-op, as for memcpy's callers.
// Then each copy checks its device-side ranges (hal/bounds_check.h); host
// memory is the caller's and is not tracked.
static void check_address(std::string_view fn, std::string_view arg, const void* p, std::size_t bytes) {
  if (p == nullptr && bytes != 0)
    throw_invalid_argument(fn, arg, "a non-null address", fmt::format("null with {} bytes", bytes));
}

void Stream::copy_from_host(void* dst, const void* src, std::size_t bytes) {
  check_address("Stream::copy_from_host", "device_dst", dst, bytes);
  check_address("Stream::copy_from_host", "host_src", src, bytes);
  validate_range_bounds(*device_, "Stream::copy_from_host", "device_dst", dst, bytes);
  impl_->copy(dst, src, bytes, CopyKind::host_to_device);
}
void Stream::copy_to_host(void* dst, const void* src, std::size_t bytes) {
  check_address("Stream::copy_to_host", "host_dst", dst, bytes);
  check_address("Stream::copy_to_host", "device_src", src, bytes);
  validate_range_bounds(*device_, "Stream::copy_to_host", "device_src", src, bytes);
  impl_->copy(dst, src, bytes, CopyKind::device_to_host);
}
void Stream::copy_on_device(void* dst, const void* src, std::size_t bytes) {
  check_address("Stream::copy_on_device", "device_dst", dst, bytes);
  check_address("Stream::copy_on_device", "device_src", src, bytes);
  validate_range_bounds(*device_, "Stream::copy_on_device", "device_src", src, bytes);
  validate_range_bounds(*device_, "Stream::copy_on_device", "device_dst", dst, bytes);
  impl_->copy(dst, src, bytes, CopyKind::device_to_device);
}
void Stream::memset(void* dst, int value, std::size_t bytes) {
  check_address("Stream::memset", "device_dst", dst, bytes);
  validate_range_bounds(*device_, "Stream::memset", "device_dst", dst, bytes);
  impl_->memset(dst, value, bytes);
}

static std::size_t tensor_bytes_for_copy(const Tensor& t, Device* device, std::string_view fn) {
  if (t.device != device)
    throw_invalid_argument(fn, "tensor", fmt::format("a tensor on {}", device->name()), t.str());
  if (!t.is_contiguous()) throw_invalid_argument(fn, "tensor", "a contiguous tensor", t.str());
  return static_cast<std::size_t>(checked_mul(t.numel(), static_cast<std::int64_t>(dtype_size(t.dtype)), fn));
}

void Stream::upload(const Tensor& dst, const void* host_src) {
  const std::size_t bytes = tensor_bytes_for_copy(dst, device_, "Stream::upload");
  check_address("Stream::upload", "host_src", host_src, bytes);
  check_address("Stream::upload", "dst", dst.data, bytes);
  if (bounds_checks_enabled()) check_tensor_bounds("Stream::upload", "dst", dst);
  if (bytes) impl_->copy(dst.first(), host_src, bytes, CopyKind::host_to_device);
}

void Stream::download(void* host_dst, const Tensor& src) {
  const std::size_t bytes = tensor_bytes_for_copy(src, device_, "Stream::download");
  check_address("Stream::download", "host_dst", host_dst, bytes);
  check_address("Stream::download", "src", src.data, bytes);
  if (bounds_checks_enabled()) check_tensor_bounds("Stream::download", "src", src);
  if (bytes) impl_->copy(host_dst, src.first(), bytes, CopyKind::device_to_host);
}

void Stream::synchronize() { impl_->synchronize(); }
void Stream::record(Event& event) { impl_->record(event.impl()); }
void Stream::wait(Event& event) { impl_->wait(event.impl()); }

Event::Event(Device& device) : device_(&device), impl_(device.create_event()) {}
Event::~Event() = default;
void Event::synchronize() { impl_->synchronize(); }
double Event::elapsed_ms_since(const Event& start) const {
  if (start.device_ != device_)
    throw_invalid_argument("Event::elapsed_ms_since", "start", fmt::format("an event of {}", device_->name()),
                           fmt::format("an event of {}", start.device_->name()));
  return impl_->elapsed_ms(start.impl());
}

}  // namespace hal
