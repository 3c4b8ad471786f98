#pragma once
// Parameter structs of the elementwise kernels (hip/kernels/elementwise.hip),
// shared by the kernels and their host launchers (backends/hip/). Plain
// standard-layout C++ with no HIP include: the host passes the struct by value
// through hipModuleLaunchKernel, so both sides must see the same layout.
//
// Strided addressing: a kernel walks the row-major logical index i of the
// OUTPUT shape and turns it into an element offset per operand with that
// operand's strides (0 for a broadcast dimension). Pointers already include
// the tensor's offset. Rank <= 8 (hal::kMaxRank).
#include <stdint.h>

#ifndef HAL_HIP_HD
#if defined(__HIPCC__)
#define HAL_HIP_HD __host__ __device__
#else
#define HAL_HIP_HD
#endif
#endif

namespace hal::hip::kernels {

inline constexpr int kKernelMaxRank = 8;

struct KernelShape {
  int64_t extent[kKernelMaxRank];
  int32_t rank;  // 0 for a scalar
};

struct KernelStrides {
  int64_t s[kKernelMaxRank];  // in elements
};

// Element offset of logical index i (row-major over `shape`).
HAL_HIP_HD inline int64_t strided_offset(const KernelShape& shape, const KernelStrides& strides, int64_t i) {
  int64_t off = 0;
  for (int d = shape.rank - 1; d >= 0; --d) {
    const int64_t e = shape.extent[d];
    const int64_t q = i / e;
    off += (i - q * e) * strides.s[d];
    i = q;
  }
  return off;
}

// y = a (op) b. op: hal::BinaryKind numbering; dtype: hal::DType numbering.
// contiguous != 0: every operand is contiguous in y's shape (offset == i).
// vec16 != 0 (implies contiguous): every operand's first element is also
// 16-byte aligned, so the kernel moves 16-byte chunks (4 x f32, 8 x bf16,
// 16 x fp8 ...) and finishes the last n % (16 / size) elements one by one.
struct BinaryParams {
  const void* a;
  const void* b;
  void* y;
  int64_t n;
  int32_t op;
  int32_t dtype;
  int32_t contiguous;
  int32_t vec16;
  KernelShape shape;
  KernelStrides a_strides, b_strides, y_strides;
};

// y = f(x). op: hal::UnaryKind numbering. contiguous / vec16 as BinaryParams.
struct UnaryParams {
  const void* x;
  void* y;
  int64_t n;
  int32_t op;
  int32_t dtype;
  int32_t contiguous;
  int32_t vec16;
  KernelShape shape;
  KernelStrides x_strides, y_strides;
};

// y = silu(gate) * up. contiguous / vec16 as BinaryParams.
struct SwigluParams {
  const void* gate;
  const void* up;
  void* y;
  int64_t n;
  int32_t dtype;
  int32_t contiguous;
  int32_t vec16;
  int32_t pad_;
  KernelShape shape;
  KernelStrides gate_strides, up_strides, y_strides;
};

}  // namespace hal::hip::kernels
