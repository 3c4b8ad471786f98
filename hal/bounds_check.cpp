#include "hal/bounds_check.h"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "hal/allocations.h"
#include "hal/device.h"
#include "hal/error.h"

namespace hal {

namespace {

bool enabled_from_environment() {
  const char* v = std::getenv("HAL_VALIDATE");
  return !(v && std::strcmp(v, "0") == 0);
}

std::atomic<bool>& enabled_flag() {
  static std::atomic<bool> flag{enabled_from_environment()};
  return flag;
}

// The bytes [begin, end) a view touches, or why it has none in the address space.
struct ByteRange {
  std::uintptr_t begin = 0, end = 0;
  const char* impossible = nullptr;  // set when the range leaves the address space
};

// Element indices relative to `data` are summed in 128 bits, so no shape,
// stride or offset (negative ones included) can overflow on the way.
ByteRange byte_range(const Tensor& t) {
  __int128 lo = t.offset, hi = t.offset;
  for (int i = 0; i < t.rank(); ++i) {
    const __int128 span = static_cast<__int128>(t.shape[i] - 1) * t.strides[i];
    (span < 0 ? lo : hi) += span;
  }
  const auto esize = static_cast<__int128>(dtype_size(t.dtype));
  const auto base = static_cast<__int128>(reinterpret_cast<std::uintptr_t>(t.data));
  const __int128 begin = base + lo * esize, end = base + (hi + 1) * esize;
  ByteRange r;
  if (begin < 0 || end > static_cast<__int128>(UINTPTR_MAX)) {
    r.impossible = "it reaches outside the address space";
    return r;
  }
  r.begin = static_cast<std::uintptr_t>(begin);
  r.end = static_cast<std::uintptr_t>(end);
  return r;
}

// Why a range is not inside one live allocation, from what the lookup found.
std::string why_outside(const Device& device, const ByteRange& r, const AllocationTable::Lookup& found) {
  if (found.nearest)
    return fmt::format("bytes [{:#x}, {:#x}) run {} bytes past the end of {}", r.begin, r.end,
                       r.end - found.nearest->end, found.nearest->str());
  return fmt::format(
      "no live allocation of {} holds byte {:#x} (memory that was freed, or that hal did not allocate: "
      "register that with Device::register_external)",
      device.name(), r.begin);
}

// `what`: "a view" (a tensor) or "a range" (raw bytes).
[[noreturn]] void refuse(const Device& device, std::string_view what, std::string_view fn, std::string_view arg,
                         const std::string& given, const std::string& why) {
  throw_invalid_argument(fn, arg, fmt::format("{} inside one live allocation of {}", what, device.name()),
                         fmt::format("{}: {}", given, why));
}

std::string describe(const Tensor& t) { return fmt::format("{}, offset {}", t.str(), t.offset); }

void check_tensor_with(const AllocationTable::Reader* reader, std::string_view fn, std::string_view arg,
                       const Tensor& t) {
  if (t.numel() == 0) return;  // touches no memory
  if (!t.device) throw_invalid_argument(fn, arg, "a tensor on a device", describe(t));
  const ByteRange r = byte_range(t);
  if (r.impossible) refuse(*t.device, "a view", fn, arg, describe(t), r.impossible);
  const AllocationTable::Lookup found =
      reader ? reader->find(r.begin, r.end) : t.device->allocations().find(r.begin, r.end);
  if (!found.inside) refuse(*t.device, "a view", fn, arg, describe(t), why_outside(*t.device, r, found));
}

}  // namespace

bool bounds_checks_enabled() noexcept { return enabled_flag().load(std::memory_order_relaxed); }
void set_bounds_checks(bool enabled) noexcept { enabled_flag().store(enabled, std::memory_order_relaxed); }

void check_op_bounds(const OpCall& call) {
  // Every tensor of a call is on one device (ops/ checked that first): one
  // shared lock of its table covers them all.
  const Device* device = nullptr;
  for_each_tensor(call, [&](std::string_view, const Tensor& t, TensorRole) {
    if (!device) device = t.device;
  });
  if (!device) return;
  const AllocationTable::Reader reader(device->allocations());
  const std::string_view op = op_name(call);
  for_each_tensor(call, [&](std::string_view name, const Tensor& t, TensorRole) {
    check_tensor_with(t.device == device ? &reader : nullptr, op, name, t);
  });
}

void check_tensor_bounds(std::string_view fn, std::string_view arg, const Tensor& t) {
  check_tensor_with(nullptr, fn, arg, t);
}

void check_range_bounds(const Device& device, std::string_view fn, std::string_view arg, const void* ptr,
                        std::size_t bytes) {
  if (bytes == 0) return;
  const auto begin = reinterpret_cast<std::uintptr_t>(ptr);
  const auto given = [&] { return fmt::format("{} bytes at {:#x}", bytes, begin); };  // only for a refusal
  if (bytes > UINTPTR_MAX - begin)
    refuse(device, "a range", fn, arg, given(), "it reaches outside the address space");
  const ByteRange r{begin, begin + bytes, nullptr};
  const AllocationTable::Lookup found = device.allocations().find(r.begin, r.end);
  if (!found.inside) refuse(device, "a range", fn, arg, given(), why_outside(device, r, found));
}

}  // namespace hal
