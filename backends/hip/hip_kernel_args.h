#pragma once
// Helpers that turn hal::Tensor views into the kernels' parameter fields
// (hip/kernels/*_params.h) and pick launch geometries. Host-only, no HIP
// call: unit-tested without a GPU (tests/hip/kernel_args_test.cpp).
#include <algorithm>
#include <cstdint>

#include "backends/hip/hip_launch.h"
#include "hal/tensor.h"
#include "hip/kernels/elementwise_params.h"
#include "hip/kernels/rows_params.h"

namespace hal::hip {

inline kernels::KernelShape kernel_shape(const Shape& s) {
  kernels::KernelShape k{};
  k.rank = s.rank();
  for (int d = 0; d < s.rank(); ++d) k.extent[d] = s[d];
  return k;
}

inline kernels::KernelStrides kernel_strides(const Strides& s) {
  kernels::KernelStrides k{};
  for (int d = 0; d < s.rank(); ++d) k.s[d] = s[d];
  return k;
}

inline int32_t elem_type(DType t) { return static_cast<int32_t>(t); }  // hip/element.h ElemType mirrors DType

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

// Rows over every axis of x but `axis`, which becomes the row (cols) axis.
// y_strides are y's strides over the same outer axes (the caller drops a
// keepdim axis of size 1 from y first). Ranks <= kRowsMaxOuterRank + 1.
inline kernels::RowsLayout rows_layout(const Tensor& x, const Strides& y_outer_strides, std::int64_t y_col_stride,
                                       int axis) {
  kernels::RowsLayout l{};
  l.rows = 1;
  int o = 0;
  for (int d = 0; d < x.rank(); ++d) {
    if (d == axis) continue;
    l.outer_shape[o] = x.shape[d];
    l.x_outer_stride[o] = x.strides[d];
    l.y_outer_stride[o] = y_outer_strides[o];
    l.rows *= x.shape[d];
    ++o;
  }
  l.outer_rank = o;
  l.cols = x.rank() == 0 ? 1 : x.shape[axis];
  l.x_col_stride = x.rank() == 0 ? 1 : x.strides[axis];
  l.y_col_stride = y_col_stride;
  return l;
}

// Whether every view is contiguous with the same shape (the kernels' offset == i fast path).
inline bool all_contiguous(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    if (!t->is_contiguous()) return false;
  return true;
}

}  // namespace hal::hip
