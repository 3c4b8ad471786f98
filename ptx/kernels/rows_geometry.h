#pragma once
// Launch geometry of the CUDA row kernels (rows_common.cuh), shared with their
// launcher (backends/cuda/cuda_rows.cpp): 256-thread blocks; the "rows_reg"
// kernels hold a row in registers, at most kRegChunks 8-element chunks per
// thread, so rows of at most kRegMaxCols. The kernels take
// hal::kernel_params::*Params (kernel_params/rows.h). Plain host/device header.
#include <stdint.h>

namespace hal::ptx {

inline constexpr int kRowsBlockThreads = 256;
inline constexpr int kRegChunks = 4;
inline constexpr int64_t kRegMaxCols = 8LL * kRowsBlockThreads * kRegChunks;

}  // namespace hal::ptx
