#include "hal/buffer.h"

#include <fmt/format.h>

#include <utility>

#include "hal/error.h"

namespace hal {

Buffer::Buffer(Device& device, std::size_t bytes) : device_(&device), data_(device.allocate(bytes)), bytes_(bytes) {
  if (!data_) return;  // a device that allocates nothing (test devices)
  try {
    allocation_id_ = device.allocations().add(data_, bytes_, AllocationKind::owned);
  } catch (...) {
    device.deallocate(data_);
    throw;
  }
}

// Erased from the table before the memory is freed, so that no check on
// another thread sees freed memory as live. The id, not the address, names the
// entry: an external registration may start at the same address.
void Buffer::release() noexcept {
  if (device_ && data_) {
    device_->allocations().remove(data_, allocation_id_);
    device_->deallocate(data_);
  }
}

Buffer Buffer::for_tensor(Device& device, DType dtype, const Shape& shape) {
  const std::int64_t n = checked_numel(shape, "Buffer::for_tensor");
  return Buffer(device, static_cast<std::size_t>(
                            checked_mul(n, static_cast<std::int64_t>(dtype_size(dtype)), "Buffer::for_tensor")));
}

Buffer::Buffer(Buffer&& other) noexcept
    : device_(std::exchange(other.device_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      allocation_id_(std::exchange(other.allocation_id_, 0)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    release();
    device_ = std::exchange(other.device_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    allocation_id_ = std::exchange(other.allocation_id_, 0);
  }
  return *this;
}

Buffer::~Buffer() { release(); }

Tensor Buffer::view(DType dtype, const Shape& shape) const {
  const std::int64_t n = checked_numel(shape, "Buffer::view");
  const std::int64_t need = checked_mul(n, static_cast<std::int64_t>(dtype_size(dtype)), "Buffer::view");
  if (static_cast<std::uint64_t>(need) > bytes_)
    throw_invalid_argument("Buffer::view", "shape", fmt::format("at most {} bytes", bytes_),
                           fmt::format("{}{} ({} bytes)", dtype_name(dtype), shape.str(), need));
  return Tensor::contiguous(data_, device_, dtype, shape);
}

}  // namespace hal
