#pragma once
// Strided addressing of the elementwise-style kernels (elementwise, cast/copy,
// random, embedding), CUDA and HIP alike.
//
// A kernel walks the row-major logical index i of the OUTPUT shape and turns
// it into an element offset per operand with that operand's strides (0 for a
// broadcast dimension). Pointers already include the tensor's offset.
// Rank <= 8 (hal::kMaxRank).
//
// Every struct in kernel_params/ is plain standard-layout C++ with no vendor
// include: the host passes it by value through cuLaunchKernel /
// hipModuleLaunchKernel, so host and device see one layout. Element types use
// hal::DType's numbering (ptx/element.cuh and hip/element.h ElemType mirror
// it); flags are int32_t, 0 or 1 (attention's are bytes, kernel_params/attention.h).
#include <stdint.h>

#include "hal/host_device.h"

namespace hal::kernel_params {

inline constexpr int kKernelMaxRank = 8;

struct KernelShape {
  int64_t extent[kKernelMaxRank];
  int32_t rank;  // 0 for a scalar
};

struct KernelStrides {
  int64_t s[kKernelMaxRank];  // in elements
};

// Element offset of logical index i (row-major over `shape`).
HAL_HOST_DEVICE inline int64_t strided_offset(const KernelShape& shape, const KernelStrides& strides, int64_t i) {
  int64_t off = 0;
  for (int d = shape.rank - 1; d >= 0; --d) {
    const int64_t e = shape.extent[d];
    const int64_t q = i / e;
    off += (i - q * e) * strides.s[d];
    i = q;
  }
  return off;
}

}  // namespace hal::kernel_params
