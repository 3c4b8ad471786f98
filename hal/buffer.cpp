#include "hal/buffer.h"

#include <fmt/format.h>

#include <utility>

#include "hal/error.h"

namespace hal {

Buffer::Buffer(Device& device, std::size_t bytes) : device_(&device), data_(device.allocate(bytes)), bytes_(bytes) {}

Buffer Buffer::for_tensor(Device& device, DType dtype, const Shape& shape) {
  const std::int64_t n = checked_numel(shape, "Buffer::for_tensor");
  return Buffer(device, static_cast<std::size_t>(
                            checked_mul(n, static_cast<std::int64_t>(dtype_size(dtype)), "Buffer::for_tensor")));
}

Buffer::Buffer(Buffer&& other) noexcept
    : device_(std::exchange(other.device_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    if (device_ && data_) device_->deallocate(data_);
    device_ = std::exchange(other.device_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

Buffer::~Buffer() {
  if (device_ && data_) device_->deallocate(data_);
}

Tensor Buffer::view(DType dtype, const Shape& shape) const {
  const std::int64_t n = checked_numel(shape, "Buffer::view");
  const std::int64_t need = checked_mul(n, static_cast<std::int64_t>(dtype_size(dtype)), "Buffer::view");
  if (static_cast<std::uint64_t>(need) > bytes_)
    throw_invalid_argument("Buffer::view", "shape", fmt::format("at most {} bytes", bytes_),
                           fmt::format("{}{} ({} bytes)", dtype_name(dtype), shape.str(), need));
  return Tensor::contiguous(data_, device_, dtype, shape);
}

}  // namespace hal
