#include "backends/hip/hip_stream.h"

#include <fmt/format.h>

#include "backends/hip/hip_device.h"
#include "backends/hip/hip_driver.h"
#include "backends/hip/hip_status.h"
#include "hal/error.h"

namespace hal::hip {

HipStream::HipStream(HipDevice& device) : device_(device), caps_(device.caps()), workspace_(device, *this) {
  device_.make_current();
  check(driver()->hipStreamCreateWithFlags(&stream_, hipStreamNonBlocking), device_.name(), "hipStreamCreateWithFlags");
}

HipStream::HipStream(HipDevice& device, hipStream_t stream, int compute_units, std::shared_ptr<void> owner)
    : device_(device), stream_(stream), caps_(device.caps()), workspace_(device, *this), owner_(std::move(owner)) {
  caps_.compute_units = compute_units;
}

HipStream::~HipStream() {
  const Driver* d = driver();
  workspace_.release();  // while the stream can still synchronise
  if (stream_ && d) {
    try {
      device_.make_current();
    } catch (...) {
    }
    (void)d->hipStreamDestroy(stream_);
  }
}

void HipStream::copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) {
  if (bytes == 0) return;
  device_.make_current();
  hipMemcpyKind k = hipMemcpyDeviceToDevice;
  const char* what = "hipMemcpyAsync(device to device, {} bytes)";
  if (kind == CopyKind::host_to_device) {
    k = hipMemcpyHostToDevice;
    what = "hipMemcpyAsync(host to device, {} bytes)";
  } else if (kind == CopyKind::device_to_host) {
    k = hipMemcpyDeviceToHost;
    what = "hipMemcpyAsync(device to host, {} bytes)";
  }
  check(driver()->hipMemcpyAsync(dst, src, bytes, k, stream_), device_.name(), fmt::format(fmt::runtime(what), bytes));
}

void HipStream::memset(void* dst, int value, std::size_t bytes) {
  if (bytes == 0) return;
  device_.make_current();
  check(driver()->hipMemsetAsync(dst, value & 0xFF, bytes, stream_), device_.name(),
        fmt::format("hipMemsetAsync({} bytes)", bytes));
}

void HipStream::synchronize() {
  device_.make_current();
  check(driver()->hipStreamSynchronize(stream_), device_.name(), "hipStreamSynchronize");
}

void HipStream::record(EventImpl& event) {
  auto* e = dynamic_cast<HipEvent*>(&event);
  if (e == nullptr) throw_invalid_argument("record", "event", "an event of a hip device", "another backend's event");
  device_.make_current();
  check(driver()->hipEventRecord(e->handle(), stream_), device_.name(), "hipEventRecord");
}

void HipStream::wait(EventImpl& event) {
  auto* e = dynamic_cast<HipEvent*>(&event);
  if (e == nullptr) throw_invalid_argument("wait", "event", "an event of a hip device", "another backend's event");
  device_.make_current();
  check(driver()->hipStreamWaitEvent(stream_, e->handle(), 0), device_.name(), "hipStreamWaitEvent");
}

HipEvent::HipEvent(HipDevice& device) : device_(device) {
  device_.make_current();
  check(driver()->hipEventCreate(&event_), device_.name(), "hipEventCreate");
}

HipEvent::~HipEvent() {
  if (event_ && driver()) {
    try {
      device_.make_current();
    } catch (...) {
    }
    (void)driver()->hipEventDestroy(event_);
  }
}

void HipEvent::synchronize() {
  device_.make_current();
  check(driver()->hipEventSynchronize(event_), device_.name(), "hipEventSynchronize");
}

double HipEvent::elapsed_ms(const EventImpl& start) const {
  const auto* s = dynamic_cast<const HipEvent*>(&start);
  if (s == nullptr) throw_invalid_argument("elapsed_ms", "start", "an event of a hip device", "another backend's event");
  device_.make_current();
  float ms = 0.0f;
  check(driver()->hipEventElapsedTime(&ms, s->event_, event_), device_.name(), "hipEventElapsedTime");
  return ms;
}

}  // namespace hal::hip
