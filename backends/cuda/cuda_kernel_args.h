#pragma once
// Helpers that turn hal::Tensor views into the kernels' parameter fields
// (ptx/kernels/elementwise_params.h) and pick a launch geometry.
#include <algorithm>
#include <cstdint>

#include "backends/cuda/cuda_launch.h"
#include "hal/tensor.h"
#include "ptx/kernels/elementwise_params.h"

namespace hal::cuda {

inline ptx::KernelShape kernel_shape(const Shape& s) {
  ptx::KernelShape k{};
  k.rank = s.rank();
  for (int d = 0; d < s.rank(); ++d) k.extent[d] = s[d];
  return k;
}

inline ptx::KernelStrides kernel_strides(const Strides& s) {
  ptx::KernelStrides k{};
  for (int d = 0; d < s.rank(); ++d) k.s[d] = s[d];
  return k;
}

inline int32_t elem_type(DType t) { return static_cast<int32_t>(t); }  // ElemType mirrors DType's numbering

inline bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

// A 1-D grid-stride launch over `work` items: 256 threads, at most 8 blocks per SM.
inline LaunchShape grid_stride_shape(std::int64_t work, int sm_count) {
  LaunchShape s;
  s.block[0] = 256;
  const std::int64_t blocks = std::max<std::int64_t>(1, (work + 255) / 256);
  s.grid[0] = static_cast<unsigned>(std::min<std::int64_t>(blocks, std::max(1, sm_count) * 8LL));
  return s;
}

}  // namespace hal::cuda
