#pragma once
// Software prefetch of the next block or row, for the memory-bound kernels.
//
// They work a block (a row) at a time: load from memory, compute in L1, store.
// Without help the loads of one block stall while nothing computes, and the
// compute of the next runs while no load is in flight. Asking for the next
// block's lines before computing on this one overlaps the two. A hint only:
// it changes no result.
#include <cstdint>

namespace hal::cpu_ref {

inline constexpr std::int64_t kCacheLineBytes = 64;

// Prefetches [p, p + bytes) for reading, into all cache levels.
inline void prefetch_for_read(const void* p, std::int64_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (std::int64_t off = 0; off < bytes; off += kCacheLineBytes) __builtin_prefetch(c + off, 0, 3);
}

}  // namespace hal::cpu_ref
