#pragma once
// Two rows of 32 bf16 (k even, k + 1) interleaved into the 32 bf16-pair words
// of the bf16_pairs / amx_bf16 B packing, in AVX-512 registers. For the ISA
// files only (*_avx512bf16.cpp, *_amx.cpp): everything here has internal
// linkage, so no AVX-512 code becomes a weak symbol a baseline caller could
// bind to (cmake/check_isa_objects.cmake).
#include <immintrin.h>

#include <cstdint>

namespace hal::cpu_ref::pair_interleave {

// Pair words of rows k (low halves) and k + 1 (high halves) for columns
// 0..15 (lo) and 16..31 (hi), as _mm512_permutex2var_epi16 indices.
alignas(64) static constexpr std::int16_t kLo[32] = {0,  32, 1,  33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39,
                                                      8,  40, 9,  41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
alignas(64) static constexpr std::int16_t kHi[32] = {16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21, 53, 22, 54, 23, 55,
                                                      24, 56, 25, 57, 26, 58, 27, 59, 28, 60, 29, 61, 30, 62, 31, 63};

}  // namespace hal::cpu_ref::pair_interleave
