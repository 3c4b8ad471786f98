// Launchers of the elementwise kernels (hip/kernels/elementwise.hip): 16-byte
// chunks when every operand is contiguous in y's shape and 16-byte aligned,
// element-wise otherwise (same fp32 math, bit-identical results).
#include <algorithm>
#include <cstdint>

#include "backends/hip/hip_device.h"
#include "backends/hip/hip_kernel_args.h"
#include "backends/hip/hip_ops.h"
#include "backends/hip/hip_stream.h"
#include "hip/kernels/elementwise_params.h"

namespace hal::hip {

namespace {
// Contiguous operands of exactly y's shape take the kernels' offset == i path.
bool flat(const Tensor& y, std::initializer_list<const Tensor*> ins) {
  if (!y.is_contiguous()) return false;
  for (const Tensor* t : ins)
    if (!(t->shape == y.shape) || !t->is_contiguous()) return false;
  return true;
}

// Flat and every first element 16-byte aligned: the kernels' 16-byte chunk path.
bool flat_aligned16(const Tensor& y, std::initializer_list<const Tensor*> ins) {
  if (!flat(y, ins) || reinterpret_cast<std::uintptr_t>(y.first()) % 16 != 0) return false;
  for (const Tensor* t : ins)
    if (reinterpret_cast<std::uintptr_t>(t->first()) % 16 != 0) return false;
  return true;
}

// Work items of a launch: 16-byte chunks (plus a tail the same threads
// finish) on the vector path, elements otherwise.
std::int64_t work_items(std::int64_t n, DType t, bool vec16) {
  return vec16 ? std::max<std::int64_t>(1, n / (16 / static_cast<std::int64_t>(dtype_size(t)))) : n;
}
}  // namespace

kernels::BinaryParams binary_params(const BinaryCall& c) {
  kernels::BinaryParams p{};
  p.a = c.a.first();
  p.b = c.b.first();
  p.y = c.y.first();
  p.n = c.y.numel();
  p.op = static_cast<int32_t>(c.kind);
  p.dtype = elem_type(c.y.dtype);
  p.contiguous = flat(c.y, {&c.a, &c.b});
  p.vec16 = flat_aligned16(c.y, {&c.a, &c.b});
  p.shape = kernel_shape(c.y.shape);
  // a and b have their own shapes: align them right-to-left with y's,
  // broadcast dimensions (size 1 or missing) get stride 0.
  auto aligned = [&](const Tensor& t) {
    kernels::KernelStrides k{};
    const int shift = c.y.rank() - t.rank();
    for (int d = 0; d < t.rank(); ++d) k.s[d + shift] = t.shape[d] == 1 ? 0 : t.strides[d];
    return k;
  };
  p.a_strides = aligned(c.a);
  p.b_strides = aligned(c.b);
  p.y_strides = kernel_strides(c.y.strides);
  return p;
}

void run_binary(HipStream& s, const BinaryCall& c) {
  const kernels::BinaryParams p = binary_params(c);
  if (p.n == 0) return;
  launch(s, "hal_binary", grid_stride_shape(work_items(p.n, c.y.dtype, p.vec16), stream_caps(s).compute_units), p);
}

void run_unary(HipStream& s, const UnaryCall& c) {
  kernels::UnaryParams p{};
  p.x = c.x.first();
  p.y = c.y.first();
  p.n = c.y.numel();
  p.op = static_cast<int32_t>(c.kind);
  p.dtype = elem_type(c.y.dtype);
  p.contiguous = flat(c.y, {&c.x});
  p.vec16 = flat_aligned16(c.y, {&c.x});
  p.shape = kernel_shape(c.y.shape);
  p.x_strides = kernel_strides(c.x.strides);
  p.y_strides = kernel_strides(c.y.strides);
  if (p.n == 0) return;
  launch(s, "hal_unary", grid_stride_shape(work_items(p.n, c.y.dtype, p.vec16), stream_caps(s).compute_units), p);
}

void run_swiglu(HipStream& s, const SwigluCall& c) {
  kernels::SwigluParams p{};
  p.gate = c.gate.first();
  p.up = c.up.first();
  p.y = c.y.first();
  p.n = c.y.numel();
  p.dtype = elem_type(c.y.dtype);
  p.contiguous = flat(c.y, {&c.gate, &c.up});
  p.vec16 = flat_aligned16(c.y, {&c.gate, &c.up});
  p.shape = kernel_shape(c.y.shape);
  p.gate_strides = kernel_strides(c.gate.strides);
  p.up_strides = kernel_strides(c.up.strides);
  p.y_strides = kernel_strides(c.y.strides);
  if (p.n == 0) return;
  launch(s, "hal_swiglu", grid_stride_shape(work_items(p.n, c.y.dtype, p.vec16), stream_caps(s).compute_units), p);
}

}  // namespace hal::hip
