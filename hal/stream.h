#pragma once
// hal::Stream: an in-order queue of work on one device; hal::Event: a marker in
// a stream, for synchronisation and timing.
//
// Work is asynchronous on GPU devices: host memory passed to copy_from_host /
// copy_to_host must stay valid until synchronize() returns. On the CPU work
// runs to completion before the call returns.
#include <cstddef>
#include <memory>

#include "hal/device.h"
#include "hal/tensor.h"

namespace hal {

class Event;

class Stream {
 public:
  explicit Stream(Device& device);
  // A stream with a given implementation (a partition's, hal/partition.h).
  Stream(Device& device, std::unique_ptr<StreamImpl> impl);
  Stream(Stream&&) noexcept = default;
  Stream& operator=(Stream&&) noexcept = default;
  ~Stream();

  Device& device() const noexcept { return *device_; }
  StreamImpl& impl() noexcept { return *impl_; }

  // Raw byte copies. `dst`/`src` on the device side are device addresses.
  void copy_from_host(void* device_dst, const void* host_src, std::size_t bytes);
  void copy_to_host(void* host_dst, const void* device_src, std::size_t bytes);
  void copy_on_device(void* device_dst, const void* device_src, std::size_t bytes);
  void memset(void* device_dst, int value, std::size_t bytes);
  // Whole-tensor copies between a contiguous device tensor and host memory of
  // tensor.numel() * dtype_size bytes. Throw unless the tensor is contiguous.
  void upload(const Tensor& dst, const void* host_src);
  void download(void* host_dst, const Tensor& src);

  void synchronize();
  void record(Event& event);
  void wait(Event& event);

 private:
  Device* device_;
  std::unique_ptr<StreamImpl> impl_;
};

class Event {
 public:
  explicit Event(Device& device);
  Event(Event&&) noexcept = default;
  Event& operator=(Event&&) noexcept = default;
  ~Event();

  void synchronize();
  // Milliseconds from `start` to this event; both recorded, same device.
  double elapsed_ms_since(const Event& start) const;
  EventImpl& impl() noexcept { return *impl_; }
  const EventImpl& impl() const noexcept { return *impl_; }
  Device& device() const noexcept { return *device_; }

 private:
  Device* device_;
  std::unique_ptr<EventImpl> impl_;
};

}  // namespace hal
