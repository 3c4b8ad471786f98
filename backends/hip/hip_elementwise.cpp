// Launchers of the elementwise kernels (hip/kernels/elementwise.hip): 16-byte
// chunks when every operand is contiguous in y's shape and 16-byte aligned
// (the arguments' vec16, backends/gpu/kernel_args.h), element-wise otherwise
// (same fp32 math, bit-identical results).
#include <algorithm>
#include <cstdint>

#include "backends/hip/hip_device.h"
#include "backends/hip/hip_kernel_args.h"
#include "backends/hip/hip_ops.h"
#include "backends/hip/hip_stream.h"

namespace hal::hip {

namespace {

// Work items of a launch: 16-byte chunks (plus a tail the same threads
// finish) on the vector path, elements otherwise.
std::int64_t work_items(std::int64_t n, DType t, bool vec16) {
  return vec16 ? std::max<std::int64_t>(1, n / (16 / static_cast<std::int64_t>(dtype_size(t)))) : n;
}

template <class Params>
void launch_elementwise(HipStream& s, const char* kernel, DType t, const Params& p) {
  if (p.n == 0) return;
  launch(s, kernel, grid_stride_shape(work_items(p.n, t, p.vec16), stream_caps(s).compute_units), p);
}

}  // namespace

void run_binary(HipStream& s, const BinaryCall& c) {
  launch_elementwise(s, "hal_binary", c.y.dtype, gpu::binary_params(c));
}

void run_unary(HipStream& s, const UnaryCall& c) { launch_elementwise(s, "hal_unary", c.y.dtype, gpu::unary_params(c)); }

void run_swiglu(HipStream& s, const SwigluCall& c) {
  launch_elementwise(s, "hal_swiglu", c.y.dtype, gpu::swiglu_params(c));
}

}  // namespace hal::hip
