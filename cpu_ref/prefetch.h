#pragma once
// Software prefetch of the next block or row, for the memory-bound kernels.
//
// They work a block (a row) at a time: load from memory, compute in L1, store.
// Without help the loads of one block stall while nothing computes, and the
// compute of the next runs while no load is in flight. Asking for the next
// block's lines while computing on this one overlaps the two. A hint only:
// it changes no result.
#include <cstdint>

namespace hal::cpu_ref {

inline constexpr std::int64_t kCacheLineBytes = 64;

// Prefetches [p, p + bytes) for reading, into all cache levels, at once.
inline void prefetch_for_read(const void* p, std::int64_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (std::int64_t off = 0; off < bytes; off += kCacheLineBytes) __builtin_prefetch(c + off, 0, 3);
}

// A range the caller will read next (none when data is null).
struct PrefetchHint {
  const void* data = nullptr;
  std::int64_t bytes = 0;
};

// Spreads the prefetch of a hint's lines evenly over a loop of n elements
// (a compute pass, or a store pass): the loop calls at(i) as it reaches
// element i. Issued all at once (prefetch_for_read), a row's hundreds of
// requests overflow the core's miss buffers and stall it, so loading and
// computing (or storing) still take turns; spread, the lines arrive while the
// loop works. On the 2-core VM: f32 softmax at 256 MiB about 67% -> 85% of
// the then copy ceiling, rmsnorm about 73% -> 89%.
class SpreadPrefetch {
 public:
  SpreadPrefetch(PrefetchHint hint, std::int64_t n)
      : p_(static_cast<const char*>(hint.data)), bytes_(hint.data ? hint.bytes : 0),
        step_(bytes_ > 0 ? n * kCacheLineBytes / bytes_ : 0) {}
  void at(std::int64_t i) {
    while (off_ < bytes_ && i >= due_) {
      __builtin_prefetch(p_ + off_, 0, 3);
      off_ += kCacheLineBytes;
      due_ += step_;
    }
  }

 private:
  const char* p_;
  std::int64_t bytes_;
  std::int64_t step_;  // elements per line (0: all lines at the first call)
  std::int64_t off_ = 0;
  std::int64_t due_ = 0;
};

}  // namespace hal::cpu_ref
