#pragma once
// CudaStream: an in-order CUstream of one CudaDevice. CudaEvent: a CUevent
// with timing enabled. Both are created and destroyed with the device's
// context current; destruction never throws (errors there are ignored, the
// process is usually shutting down).
#include <cuda.h>

#include <memory>

#include "backends/cuda/cuda_launch.h"
#include "backends/gpu/stream_workspace.h"
#include "hal/device.h"

namespace hal::cuda {

class CudaDevice;

class CudaStream final : public StreamImpl {
 public:
  explicit CudaStream(CudaDevice& device);
  // Adopts `stream` (a green context's, backends/cuda/cuda_partition.cpp):
  // launchers see `sm_count` SMs, and `owner` (the green context) lives as
  // long as the stream.
  CudaStream(CudaDevice& device, CUstream stream, int sm_count, std::shared_ptr<void> owner);
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
  // The device's caps, with the SMs of this stream's partition when it has one:
  // what grid sizes are computed from (the persistent GEMM's grid).
  const CudaDeviceCaps& caps() const noexcept { return caps_; }
  void* native_handle() override { return stream_; }
  // Device scratch of at least `bytes` for this stream's kernels (the decode
  // GEMM's partial sums), grow-only, freed with the stream. Reusing it without
  // waiting is safe because the stream is in order: the next call's kernels
  // start after the previous call's finished. Growing synchronises the stream
  // first (queued kernels may still read the old block).
  void* workspace(std::size_t bytes) { return workspace_.get(bytes); }

 private:
  CudaDevice& device_;
  CUstream stream_ = nullptr;
  CudaDeviceCaps caps_;
  gpu::StreamWorkspace workspace_;  // its block is freed in ~Stream, before the handle
  std::shared_ptr<void> owner_;  // declared last: destroyed after the stream
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
