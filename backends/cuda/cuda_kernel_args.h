#pragma once
// CUDA launch geometry over the shared argument packing
// (backends/gpu/kernel_args.h, kernel_params/).
#include <algorithm>
#include <cstdint>

#include "backends/cuda/cuda_launch.h"
#include "backends/gpu/kernel_args.h"

namespace hal::cuda {

using gpu::aligned16;
using gpu::elem_type;
using gpu::kernel_shape;
using gpu::kernel_strides;

// A 1-D grid-stride launch over `work` items: 256 threads, at most 8 blocks per SM.
inline LaunchShape grid_stride_shape(std::int64_t work, int sm_count) {
  LaunchShape s;
  s.block[0] = 256;
  const std::int64_t blocks = std::max<std::int64_t>(1, (work + 255) / 256);
  s.grid[0] = static_cast<unsigned>(std::min<std::int64_t>(blocks, std::max(1, sm_count) * 8LL));
  return s;
}

}  // namespace hal::cuda
