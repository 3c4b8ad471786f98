#include "cpu_ref/unary_table16.h"

#include <emmintrin.h>  // SSE2 (x86-64 baseline): movnti
#include <tbb/task_arena.h>

#include <cstring>
#include <numeric>
#include <vector>

namespace hal::cpu_ref {

const std::uint16_t* UnaryTables16::get(UnaryKind kind, DType t, const Build& build) {
  const int k = static_cast<int>(kind);
  const int d = t == DType::bf16 ? 0 : 1;
  std::call_once(once_[k][d], [&] {
    std::vector<std::uint16_t> all(kUnaryTable16Entries);
    std::iota(all.begin(), all.end(), std::uint16_t{0});
    auto table = std::make_unique<std::uint16_t[]>(kUnaryTable16Entries);
    // Isolated: the build may run a parallel loop, and while this thread waits
    // in it oneTBB could otherwise hand it an outer task that asks for the
    // same table, re-entering this call_once (a deadlock).
    tbb::this_task_arena::isolate([&] { build(all.data(), table.get()); });
    tables_[k][d] = std::move(table);
  });
  return tables_[k][d].get();
}

namespace {

// Four results per 64-bit word: scalar loads beat AVX2 gathers here
// (vpgatherdd is microcoded on AMD; about 1.4x slower per element on the
// 2-core VM). Each input is its own 16-bit load rather than a field shifted
// out of one 64-bit load: the loop is then bound by loads (two per element)
// instead of by the shifts and masks, about 18% faster at 256 MiB on the VM.
// Streaming writes each word with movnti (write-combined into whole lines).
template <bool kStream>
std::int64_t lookup16_words(const std::uint16_t* table, const std::uint16_t* x, std::uint16_t* y, std::int64_t i,
                            std::int64_t n) {
  for (; i + 4 <= n; i += 4) {
    const std::uint64_t out = std::uint64_t{table[x[i]]} | (std::uint64_t{table[x[i + 1]]} << 16) |
                              (std::uint64_t{table[x[i + 2]]} << 32) | (std::uint64_t{table[x[i + 3]]} << 48);
    if constexpr (kStream) _mm_stream_si64(reinterpret_cast<long long*>(y + i), static_cast<long long>(out));
    else std::memcpy(y + i, &out, sizeof out);
  }
  return i;
}

}  // namespace

void lookup16(const std::uint16_t* table, const std::uint16_t* x, std::uint16_t* y, std::int64_t n, bool streaming) {
  std::int64_t i = 0;
  if (streaming) {  // movnti needs an 8-byte aligned y + i; y is 2-byte aligned
    for (; i < n && reinterpret_cast<std::uintptr_t>(y + i) % 8 != 0; ++i) y[i] = table[x[i]];
    i = lookup16_words<true>(table, x, y, i, n);
    _mm_sfence();
  } else {
    i = lookup16_words<false>(table, x, y, i, n);
  }
  for (; i < n; ++i) y[i] = table[x[i]];
}

}  // namespace hal::cpu_ref
