#pragma once
// hal::Buffer: owning device memory (256-byte aligned), freed on destruction.
// Views made with view() borrow the memory; they must not outlive the buffer.
// The buffer records its extent in its device's allocations() while it lives,
// so that the validation layer refuses views past its end or after its free.
#include <cstddef>
#include <cstdint>

#include "hal/device.h"
#include "hal/tensor.h"

namespace hal {

class Buffer {
 public:
  Buffer() = default;
  Buffer(Device& device, std::size_t bytes);
  // A buffer sized for a contiguous tensor (size computed with overflow checks).
  static Buffer for_tensor(Device& device, DType dtype, const Shape& shape);
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  void* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return bytes_; }
  Device* device() const noexcept { return device_; }

  // Contiguous view at byte offset 0; throws if it does not fit.
  Tensor view(DType dtype, const Shape& shape) const;

 private:
  void release() noexcept;  // erase from allocations(), then free

  Device* device_ = nullptr;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::uint64_t allocation_id_ = 0;  // its entry in device_->allocations()
};

}  // namespace hal
