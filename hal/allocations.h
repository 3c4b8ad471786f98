#pragma once
// hal::AllocationTable: the extents of one device's live allocations, so that
// the validation layer (hal/bounds_check.h) can tell whether a tensor view lies
// inside memory that is still allocated.
//
// hal::Buffer records what it allocates and erases it before freeing it.
// Memory that hal did not allocate (a DLPack import, a user's cudaMalloc, a
// host vector on the CPU device) is recorded with Device::register_external(),
// whose ExternalAllocation handle erases it again when destroyed.
//
// Extents may overlap or nest (an import of memory that is itself a hal
// Buffer): a range is accepted when one live extent holds all of it, never
// when it needs two (two adjacent allocations are two, not one). Thread-safe:
// lookups share a lock, additions and removals take it exclusively.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <shared_mutex>
#include <string>

namespace hal {

class Device;

enum class AllocationKind {
  owned,     // allocated by hal (a hal::Buffer)
  external,  // registered with Device::register_external()
};

// One recorded extent [begin, end) in the device's address space.
struct AllocationExtent {
  std::uintptr_t begin = 0, end = 0;
  AllocationKind kind = AllocationKind::owned;
  std::string str() const;  // "256 bytes at 0x7f00 (a hal buffer)"
};

class AllocationTable {
 public:
  AllocationTable() = default;
  AllocationTable(const AllocationTable&) = delete;
  AllocationTable& operator=(const AllocationTable&) = delete;

  // Records [ptr, ptr + bytes); returns the id that remove() takes. Throws
  // invalid_argument for a null pointer or a range that wraps the address space.
  std::uint64_t add(const void* ptr, std::size_t bytes, AllocationKind kind);
  // Erases the extent `add` returned `id` for; unknown ids are ignored.
  void remove(const void* ptr, std::uint64_t id) noexcept;

  // What a lookup of [begin, end) found: the extent holding it, or the nearest
  // extent that holds `begin` (for the error message), or nothing.
  struct Lookup {
    bool inside = false;
    std::optional<AllocationExtent> nearest;
  };

  // Lookups under one shared lock (an op checks all its tensors at once).
  class Reader {
   public:
    explicit Reader(const AllocationTable& table) : table_(table), lock_(table.mutex_) {}
    Lookup find(std::uintptr_t begin, std::uintptr_t end) const { return table_.find_locked(begin, end); }

   private:
    const AllocationTable& table_;
    std::shared_lock<std::shared_mutex> lock_;
  };
  Lookup find(std::uintptr_t begin, std::uintptr_t end) const { return Reader(*this).find(begin, end); }

  std::size_t size() const;  // live extents

 private:
  struct Entry {
    std::uintptr_t end;
    std::uint64_t id;
    AllocationKind kind;
  };
  Lookup find_locked(std::uintptr_t begin, std::uintptr_t end) const;

  mutable std::shared_mutex mutex_;
  std::multimap<std::uintptr_t, Entry> by_begin_;
  std::uint64_t next_id_ = 1;
};

// Keeps an external allocation registered with its device while it lives.
class ExternalAllocation {
 public:
  ExternalAllocation() = default;
  ExternalAllocation(Device& device, const void* ptr, std::uint64_t id) : device_(&device), ptr_(ptr), id_(id) {}
  ExternalAllocation(ExternalAllocation&& other) noexcept;
  ExternalAllocation& operator=(ExternalAllocation&& other) noexcept;
  ExternalAllocation(const ExternalAllocation&) = delete;
  ExternalAllocation& operator=(const ExternalAllocation&) = delete;
  ~ExternalAllocation() { release(); }

  // Erases the registration now (views of the memory are refused again).
  void release() noexcept;
  bool active() const noexcept { return device_ != nullptr; }

 private:
  Device* device_ = nullptr;
  const void* ptr_ = nullptr;
  std::uint64_t id_ = 0;
};

}  // namespace hal
