#pragma once
// HipStream: an in-order hipStream_t of one HipDevice. HipEvent: a hipEvent_t
// with timing. Both are created and destroyed with their device current;
// destruction never throws (errors there are ignored, the process is usually
// shutting down).
#include <hip/hip_runtime_api.h>

#include <memory>

#include "backends/gpu/stream_workspace.h"
#include "backends/hip/hip_launch.h"
#include "hal/device.h"

namespace hal::hip {

class HipDevice;

class HipStream final : public StreamImpl {
 public:
  explicit HipStream(HipDevice& device);
  // Adopts `stream` (a CU-masked one, backends/hip/hip_partition.cpp):
  // launchers see `compute_units` CUs; `owner` (the partition's share) lives
  // as long as the stream.
  HipStream(HipDevice& device, hipStream_t stream, int compute_units, std::shared_ptr<void> owner);
  ~HipStream() override;
  HipStream(const HipStream&) = delete;
  HipStream& operator=(const HipStream&) = delete;

  void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) override;
  void memset(void* dst, int value, std::size_t bytes) override;
  void synchronize() override;
  void record(EventImpl& event) override;
  void wait(EventImpl& event) override;
  void* native_handle() override { return stream_; }

  HipDevice& device() const noexcept { return device_; }
  hipStream_t handle() const noexcept { return stream_; }
  // The device's caps, with the CUs of this stream's mask when it has one
  // (what grid sizes are computed from).
  const HipDeviceCaps& caps() const noexcept { return caps_; }
  // Device scratch of at least `bytes` for this stream's kernels (the decode
  // GEMM's partial sums), grow-only, freed with the stream. Reusing it without
  // waiting is safe because the stream is in order; growing synchronises the
  // stream first (queued kernels may still read the old block).
  void* workspace(std::size_t bytes) { return workspace_.get(bytes); }

 private:
  HipDevice& device_;
  hipStream_t stream_ = nullptr;
  HipDeviceCaps caps_;
  gpu::StreamWorkspace workspace_;  // its block is freed in ~Stream, before the handle
  std::shared_ptr<void> owner_;
};

class HipEvent final : public EventImpl {
 public:
  explicit HipEvent(HipDevice& device);
  ~HipEvent() override;
  HipEvent(const HipEvent&) = delete;
  HipEvent& operator=(const HipEvent&) = delete;

  void synchronize() override;
  double elapsed_ms(const EventImpl& start) const override;
  hipEvent_t handle() const noexcept { return event_; }

 private:
  HipDevice& device_;
  hipEvent_t event_ = nullptr;
};

}  // namespace hal::hip
