#pragma once
// HIP launch geometries over the shared argument packing
// (backends/gpu/kernel_args.h, kernel_params/). Host-only, no HIP call:
// unit-tested without a GPU (tests/hip/kernel_args_test.cpp).
#include <algorithm>
#include <cstdint>

#include "backends/gpu/kernel_args.h"
#include "backends/hip/hip_launch.h"
#include "hip/kernels/rows_geometry.h"

namespace hal::hip {

using gpu::elem_type;
using gpu::kernel_shape;
using gpu::kernel_strides;

// A 1-D grid-stride launch over `work` items: 256 threads (4 wave64s) per
// workgroup, at most 8 workgroups per CU (more only adds scheduling cost:
// the loops are grid-stride).
inline LaunchShape grid_stride_shape(std::int64_t work, int compute_units) {
  LaunchShape s;
  s.block[0] = 256;
  const std::int64_t blocks = std::max<std::int64_t>(1, (work + 255) / 256);
  s.grid[0] = static_cast<unsigned>(std::min<std::int64_t>(blocks, std::max(1, compute_units) * 8LL));
  return s;
}

// One workgroup per row, grid-strided past 65535 * 8 rows... capped so the
// grid stays well inside HIP's limits.
inline LaunchShape rows_shape(std::int64_t rows) {
  LaunchShape s;
  s.block[0] = kernels::kRowThreads;
  s.grid[0] = static_cast<unsigned>(std::clamp<std::int64_t>(rows, 1, 1 << 20));
  return s;
}

}  // namespace hal::hip
