#pragma once
// CudaStream: an in-order CUstream of one CudaDevice. CudaEvent: a CUevent
// with timing enabled. Both are created and destroyed with the device's
// context current; destruction never throws (errors there are ignored, the
// process is usually shutting down).
#include <cuda.h>

#include "hal/device.h"

namespace hal::cuda {

class CudaDevice;

class CudaStream final : public StreamImpl {
 public:
  explicit CudaStream(CudaDevice& device);
  ~CudaStream() override;
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) override;
  void memset(void* dst, int value, std::size_t bytes) override;
  void synchronize() override;
  void record(EventImpl& event) override;
  void wait(EventImpl& event) override;

  CudaDevice& device() const noexcept { return device_; }
  CUstream handle() const noexcept { return stream_; }
  void* native_handle() override { return stream_; }

 private:
  CudaDevice& device_;
  CUstream stream_ = nullptr;
};

class CudaEvent final : public EventImpl {
 public:
  explicit CudaEvent(CudaDevice& device);
  ~CudaEvent() override;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  void synchronize() override;
  double elapsed_ms(const EventImpl& start) const override;
  CUevent handle() const noexcept { return event_; }

 private:
  CudaDevice& device_;
  CUevent event_ = nullptr;
};

}  // namespace hal::cuda
