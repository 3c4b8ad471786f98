#pragma once
// What the CPU unit tests share: the cpu device, views of host vectors, the
// error a misuse must throw, and an inert device for device-identity checks.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hal/device.h"
#include "hal/error.h"
#include "hal/registry.h"
#include "hal/tensor.h"

namespace hal::test {

inline Device& cpu() { return device("cpu"); }

// A contiguous view of host memory (the cpu device's memory is host memory).
template <class E> Tensor view_of(std::vector<E>& v, DType dtype, const Shape& shape) {
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
