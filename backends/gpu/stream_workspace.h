#pragma once
// A grow-only device scratch owned by one GPU stream (CudaStream, HipStream
// ::workspace()): the decode GEMM's partial sums. Reusing it without waiting
// is safe because the stream is in order: the next call's kernels start after
// the previous call's finished. Growing synchronises the stream first (queued
// kernels may still read the old block; cuMemFree / hipFree do not wait).
//
// The owning stream calls release() in its destructor body, while it can
// still synchronise (this member is destroyed after the stream's handle).
#include <cstddef>

#include "hal/device.h"

namespace hal::gpu {

class StreamWorkspace {
 public:
  // `device` allocates and frees the block; `stream` is the one whose
  // kernels use it (synchronised before a block is freed).
  StreamWorkspace(Device& device, StreamImpl& stream) : device_(device), stream_(stream) {}
  ~StreamWorkspace() {
    if (ptr_ != nullptr) device_.deallocate(ptr_);  // release() was not called: free without waiting
  }
  StreamWorkspace(const StreamWorkspace&) = delete;
  StreamWorkspace& operator=(const StreamWorkspace&) = delete;

  // At least `bytes` of device memory, valid until a larger request or release().
  void* get(std::size_t bytes) {
    if (bytes <= bytes_) return ptr_;
    if (ptr_ != nullptr) {
      stream_.synchronize();
      device_.deallocate(ptr_);
      ptr_ = nullptr;
      bytes_ = 0;
    }
    ptr_ = device_.allocate(bytes);
    bytes_ = bytes;
    return ptr_;
  }

  // Synchronises the stream (errors ignored: a broken stream is freed anyway)
  // and frees the block. Never throws.
  void release() noexcept {
    if (ptr_ == nullptr) return;
    try {
      stream_.synchronize();
    } catch (...) {
    }
    device_.deallocate(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }

 private:
  Device& device_;
  StreamImpl& stream_;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace hal::gpu
