#pragma once
// Helpers of the AVX-512 kernels that read a row-major bf16 B in place
// (stream_b: *_avx512bf16.cpp, *_amx.cpp). For those ISA files only:
// everything here has internal linkage, so no AVX-512 code becomes a weak
// symbol a baseline caller could bind to (cmake/check_isa_objects.cmake).
#include <immintrin.h>

#include <cstdint>

namespace hal::cpu_ref::stream_b_avx512 {

// Pair words of B rows k (low halves) and k + 1 (high halves) for columns
// 0..15 (kPairLo) and 16..31 (kPairHi), as _mm512_permutex2var_epi16 indices:
// the words of the bf16_pairs / amx_bf16 B packing.
alignas(64) static constexpr std::int16_t kPairLo[32] = {0,  32, 1,  33, 2,  34, 3,  35, 4,  36, 5,  37,
                                                          6,  38, 7,  39, 8,  40, 9,  41, 10, 42, 11, 43,
                                                          12, 44, 13, 45, 14, 46, 15, 47};
alignas(64) static constexpr std::int16_t kPairHi[32] = {16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21, 53,
                                                          22, 54, 23, 55, 24, 56, 25, 57, 26, 58, 27, 59,
                                                          28, 60, 29, 61, 30, 62, 31, 63};

// The same columns kPrefetchRows rows further down B, asked for now. The
// kernels read 16 rows at a time, 64 bytes of each per column panel: 16 short
// streams the hardware prefetcher does not ramp up on. 32 rows ahead lifted a
// 1 GB bf16 model's decode on the 2-core Xeon from 48-51% to 57-60% of the
// copy ceiling with the AMX kernel and from 51-52% to 59-61% with the pair
// kernel (16 to 48 rows ahead alike). The address is formed as an integer
// (past B's end near its last rows: no out-of-bounds pointer arithmetic); a
// prefetch never faults.
static constexpr std::int64_t kPrefetchRows = 32;
static inline void prefetch_rows_ahead(const std::uint16_t* row, std::int64_t ldb) {
  const std::uintptr_t ahead = reinterpret_cast<std::uintptr_t>(row) +
                               static_cast<std::uintptr_t>(kPrefetchRows * ldb) * sizeof(std::uint16_t);
  _mm_prefetch(reinterpret_cast<const char*>(ahead), _MM_HINT_T0);
}

}  // namespace hal::cpu_ref::stream_b_avx512
