#pragma once
// The AVX2 kernel's GemmStreamBFn (gemm_microkernel.h) for a tile of at most
// one A panel (1..6 rows: decode), in cpu_ref/gemm_stream_rows_avx2.cpp. Call
// it only from AVX2 code (gemm_microkernel_avx2.cpp), on a CPU with AVX2+FMA.
//
// Why not stream_b_tiles (gemm_stream_b.h): for one row its 6 x 16 tile
// holds two accumulators, so each of its 16-step calls is two dependent FMA
// chains (latency-bound), and every 16-row group of B is read as 16 strided
// 32-byte pieces per panel. Here an accumulator block of up to 12 vectors
// spans several column panels (64 columns for one row), B is read 8 rows at a
// time along whole rows of the tile's columns, bf16 widened by one unpack per
// 8 elements, and the rows two groups ahead are prefetched. Each element is
// still the micro-kernel's chain: one fused multiply-add per k, ascending, so
// the bits are those of `run` on packed panels.
#include <cstdint>

#include "hal/dtype.h"

namespace hal::cpu_ref {

inline constexpr int kAvx2Mr = 6;   // the AVX2 micro-kernel's tile (gemm_microkernel_avx2.cpp)
inline constexpr int kAvx2Nr = 16;

// GemmStreamBFn's arguments for rows <= kAvx2Mr (a is the one A panel); b_dtype f32 or bf16.
void stream_b_rows_avx2(std::int64_t kc, const float* a, std::int64_t rows, const void* b, DType b_dtype,
                        std::int64_t ldb, std::int64_t panels, float* acc, std::int64_t acc_m_panels);

}  // namespace hal::cpu_ref
