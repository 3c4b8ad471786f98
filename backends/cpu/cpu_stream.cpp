#include "backends/cpu/cpu_stream.h"

#include <cstring>

#include "hal/error.h"

namespace hal::cpu {

double CpuEvent::elapsed_ms(const EventImpl& start) const {
  const auto* s = dynamic_cast<const CpuEvent*>(&start);
  if (!s || !s->recorded_ || !recorded_)
    throw Error(ErrorCode::invalid_argument, "Event::elapsed_ms_since: both events must be recorded cpu events");
  return std::chrono::duration<double, std::milli>(time_ - s->time_).count();
}

void CpuStream::copy(void* dst, const void* src, std::size_t bytes, CopyKind) {
  if (bytes) std::memmove(dst, src, bytes);
}

void CpuStream::memset(void* dst, int value, std::size_t bytes) {
  if (bytes) std::memset(dst, value, bytes);
}

void CpuStream::record(EventImpl& event) {
  auto* e = dynamic_cast<CpuEvent*>(&event);
  if (!e) throw Error(ErrorCode::invalid_argument, "Stream::record: the event belongs to another device");
  e->stamp();
}

}  // namespace hal::cpu
