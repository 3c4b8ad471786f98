#include "hal/allocations.h"

#include <fmt/format.h>

#include <limits>
#include <mutex>
#include <utility>

#include "hal/device.h"
#include "hal/error.h"

namespace hal {

std::string AllocationExtent::str() const {
  return fmt::format("{} bytes at {:#x} ({})", end - begin, begin,
                     kind == AllocationKind::owned ? "a hal buffer" : "an external allocation");
}

std::uint64_t AllocationTable::add(const void* ptr, std::size_t bytes, AllocationKind kind) {
  const auto begin = reinterpret_cast<std::uintptr_t>(ptr);
  if (!ptr) throw_invalid_argument("AllocationTable::add", "ptr", "a non-null pointer", "nullptr");
  if (bytes > std::numeric_limits<std::uintptr_t>::max() - begin)
    throw_invalid_argument("AllocationTable::add", "bytes", "a range inside the address space",
                           fmt::format("{} bytes at {:#x}", bytes, begin));
  std::unique_lock lock(mutex_);
  const std::uint64_t id = next_id_++;
  by_begin_.emplace(begin, Entry{begin + bytes, id, kind});
  return id;
}

void AllocationTable::remove(const void* ptr, std::uint64_t id) noexcept {
  std::unique_lock lock(mutex_);
  auto [first, last] = by_begin_.equal_range(reinterpret_cast<std::uintptr_t>(ptr));
  for (auto it = first; it != last; ++it) {
    if (it->second.id == id) {
      by_begin_.erase(it);
      return;
    }
  }
}

std::size_t AllocationTable::size() const {
  std::shared_lock lock(mutex_);
  return by_begin_.size();
}

// The extent starting at or below `begin` nearest to it usually holds the
// range (O(log n)). Only when it does not (an error, or extents that nest)
// are the earlier ones walked.
AllocationTable::Lookup AllocationTable::find_locked(std::uintptr_t begin, std::uintptr_t end) const {
  Lookup out;
  auto it = by_begin_.upper_bound(begin);
  while (it != by_begin_.begin()) {
    --it;
    const Entry& e = it->second;
    if (e.end >= end) {
      out.inside = true;
      out.nearest = AllocationExtent{it->first, e.end, e.kind};
      return out;
    }
    // Remember the extent holding the first byte that reaches farthest: the
    // range runs past its end by the least.
    if (e.end > begin && (!out.nearest || e.end > out.nearest->end))
      out.nearest = AllocationExtent{it->first, e.end, e.kind};
  }
  return out;
}

ExternalAllocation::ExternalAllocation(ExternalAllocation&& other) noexcept
    : device_(std::exchange(other.device_, nullptr)),
      ptr_(std::exchange(other.ptr_, nullptr)),
      id_(std::exchange(other.id_, 0)) {}

ExternalAllocation& ExternalAllocation::operator=(ExternalAllocation&& other) noexcept {
  if (this != &other) {
    release();
    device_ = std::exchange(other.device_, nullptr);
    ptr_ = std::exchange(other.ptr_, nullptr);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

void ExternalAllocation::release() noexcept {
  if (device_) device_->allocations().remove(ptr_, id_);
  device_ = nullptr;
}

}  // namespace hal
