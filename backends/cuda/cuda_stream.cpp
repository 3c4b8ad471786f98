#include "backends/cuda/cuda_stream.h"

#include <fmt/format.h>

#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/cuda_status.h"
#include "hal/error.h"

namespace hal::cuda {

namespace {
CUdeviceptr dptr(const void* p) { return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(p)); }
}  // namespace

CudaStream::CudaStream(CudaDevice& device) : device_(device), caps_(device.caps()), workspace_(device, *this) {
  device_.make_current();
  check(driver()->cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), device_.name(), "cuStreamCreate");
}

CudaStream::CudaStream(CudaDevice& device, CUstream stream, int sm_count, std::shared_ptr<void> owner)
    : device_(device), stream_(stream), caps_(device.caps()), workspace_(device, *this), owner_(std::move(owner)) {
  caps_.sm_count = sm_count;
}

CudaStream::~CudaStream() {
  const Driver* d = driver();
  workspace_.release();  // while the stream can still synchronise
  if (stream_ && d && d->cuCtxSetCurrent != nullptr) {
    try {
      device_.make_current();
    } catch (...) {
    }
    d->cuStreamDestroy_v2(stream_);
  }
}

void CudaStream::copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) {
  if (bytes == 0) return;
  device_.make_current();
  const Driver& d = *driver();
  switch (kind) {
    case CopyKind::host_to_device:
      check(d.cuMemcpyHtoDAsync_v2(dptr(dst), src, bytes, stream_), device_.name(),
            fmt::format("cuMemcpyHtoDAsync_v2({} bytes)", bytes));
      return;
    case CopyKind::device_to_host:
      check(d.cuMemcpyDtoHAsync_v2(dst, dptr(src), bytes, stream_), device_.name(),
            fmt::format("cuMemcpyDtoHAsync_v2({} bytes)", bytes));
      return;
    case CopyKind::device_to_device:
      check(d.cuMemcpyDtoDAsync_v2(dptr(dst), dptr(src), bytes, stream_), device_.name(),
            fmt::format("cuMemcpyDtoDAsync_v2({} bytes)", bytes));
      return;
  }
}

void CudaStream::memset(void* dst, int value, std::size_t bytes) {
  if (bytes == 0) return;
  device_.make_current();
  check(driver()->cuMemsetD8Async(dptr(dst), static_cast<unsigned char>(value), bytes, stream_), device_.name(),
        fmt::format("cuMemsetD8Async({} bytes)", bytes));
}

void CudaStream::synchronize() {
  device_.make_current();
  check(driver()->cuStreamSynchronize(stream_), device_.name(), "cuStreamSynchronize");
}

void CudaStream::record(EventImpl& event) {
  auto* e = dynamic_cast<CudaEvent*>(&event);
  if (e == nullptr) throw_invalid_argument("record", "event", "an event of a cuda device", "another backend's event");
  device_.make_current();
  check(driver()->cuEventRecord(e->handle(), stream_), device_.name(), "cuEventRecord");
}

void CudaStream::wait(EventImpl& event) {
  auto* e = dynamic_cast<CudaEvent*>(&event);
  if (e == nullptr) throw_invalid_argument("wait", "event", "an event of a cuda device", "another backend's event");
  device_.make_current();
  check(driver()->cuStreamWaitEvent(stream_, e->handle(), 0), device_.name(), "cuStreamWaitEvent");
}

CudaEvent::CudaEvent(CudaDevice& device) : device_(device) {
  device_.make_current();
  check(driver()->cuEventCreate(&event_, CU_EVENT_DEFAULT), device_.name(), "cuEventCreate");
}

CudaEvent::~CudaEvent() {
  if (event_ && driver()) {
    try {
      device_.make_current();
    } catch (...) {
    }
    driver()->cuEventDestroy_v2(event_);
  }
}

void CudaEvent::synchronize() {
  device_.make_current();
  check(driver()->cuEventSynchronize(event_), device_.name(), "cuEventSynchronize");
}

double CudaEvent::elapsed_ms(const EventImpl& start) const {
  const auto* s = dynamic_cast<const CudaEvent*>(&start);
  if (s == nullptr) throw_invalid_argument("elapsed_ms", "start", "an event of a cuda device", "another backend's event");
  device_.make_current();
  float ms = 0.0f;
  check(driver()->cuEventElapsedTime(&ms, s->event_, event_), device_.name(), "cuEventElapsedTime");
  return ms;
}

}  // namespace hal::cuda
