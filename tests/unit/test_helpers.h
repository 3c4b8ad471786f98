#pragma once
// What the CPU unit tests share: the cpu device, views of host vectors, the
// error a misuse must throw, and an inert device for device-identity checks.
#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "hal/device.h"
#include "hal/error.h"
#include "hal/registry.h"
#include "hal/tensor.h"

namespace hal::test {

inline Device& cpu() { return device("cpu"); }

// Registers host memory with the cpu device as an external allocation, so the
// validation layer (hal/bounds_check.h) accepts views of it. Registrations last
// for the test program (or until forget_host_memory()); one that overlaps a new
// range is dropped first (its memory was freed and reused, since two live
// vectors cannot overlap).
struct HostRegistrations {
  std::mutex mutex;
  std::map<std::uintptr_t, std::pair<std::uintptr_t, ExternalAllocation>> live;  // begin -> (end, handle)
};
inline HostRegistrations& host_registrations() {
  static auto& r = *new HostRegistrations;  // never destroyed: devices outlive it
  return r;
}
inline void register_host_memory(const void* data, std::size_t bytes) {
  if (!data || bytes == 0) return;
  HostRegistrations& r = host_registrations();
  const auto begin = reinterpret_cast<std::uintptr_t>(data), end = begin + bytes;
  const std::lock_guard lock(r.mutex);
  auto it = r.live.lower_bound(begin);
  if (it != r.live.end() && it->first == begin && it->second.first == end) return;  // already registered
  if (it != r.live.begin() && std::prev(it)->second.first > begin) --it;
  while (it != r.live.end() && it->first < end) it = r.live.erase(it);
  r.live.emplace(begin, std::pair{end, cpu().register_external(data, bytes)});
}
template <class E> void register_host_memory(const std::vector<E>& v) {
  register_host_memory(v.data(), v.size() * sizeof(E));
}
// Drops every registration made above (tests of the validation layer start
// with only their own allocations live).
inline void forget_host_memory() {
  HostRegistrations& r = host_registrations();
  const std::lock_guard lock(r.mutex);
  r.live.clear();
}

// A contiguous view of host memory (the cpu device's memory is host memory),
// registered as above.
template <class E> Tensor view_of(std::vector<E>& v, DType dtype, const Shape& shape) {
  register_host_memory(v.data(), v.size() * sizeof(E));
  return Tensor::contiguous(v.data(), &cpu(), dtype, shape);
}

// Runs `f`, which must throw hal::Error with `code`; returns the message.
template <class F> std::string error_of(F&& f, ErrorCode code = ErrorCode::invalid_argument) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected hal::Error";
  return {};
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A device that allocates nothing and runs nothing: only its name and its
// address matter (a tensor "elsewhere", a registry entry).
class InertDevice final : public Device {
 public:
  explicit InertDevice(std::string name, std::string backend = "test") {
    info_.name = std::move(name);
    info_.backend = std::move(backend);
  }
  const DeviceInfo& info() const override { return info_; }
  void* allocate(std::size_t) override { return nullptr; }
  void deallocate(void*) noexcept override {}
  std::unique_ptr<StreamImpl> create_stream() override { return nullptr; }
  std::unique_ptr<EventImpl> create_event() override { return nullptr; }
  void execute(StreamImpl&, const OpCall&) override {}

 private:
  DeviceInfo info_;
};

}  // namespace hal::test
