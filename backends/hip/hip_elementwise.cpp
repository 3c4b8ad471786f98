// Launchers of the elementwise kernels (hip/kernels/elementwise.hip): 16-byte
// chunks when every operand is contiguous in y's shape and 16-byte aligned
// (the arguments' vec16, backends/gpu/kernel_args.h), element-wise otherwise
// (same fp32 math, bit-identical results).
#include <algorithm>
#include <cstdint>

#include "backends/hip/hip_device.h"
#include "backends/hip/hip_kernel_args.h"
#include "backends/hip/hip_ops.h"
#include "backends/gpu/rows_variants.h"
#include "backends/gpu/unverified.h"
#include "backends/hip/hip_stream.h"

namespace hal::hip {

namespace {

// Work items of a launch: 16-byte chunks (plus a tail the same threads
// finish) on the vector path, elements otherwise.
std::int64_t work_items(std::int64_t n, DType t, bool vec16) {
  return vec16 ? std::max<std::int64_t>(1, n / (16 / static_cast<std::int64_t>(dtype_size(t)))) : n;
}

// family: the 16-bit packed variant to take instead of `kernel` (issue 24,
// never run: only with HAL_GPU_UNVERIFIED=1) when one exists for the call.
template <class Params>
void launch_elementwise(HipStream& s, const char* kernel, gpu::ElementwiseFamily family, DType t, const Params& p) {
  if (p.n == 0) return;
  if (gpu::unverified_kernels_enabled()) {
    if (const char* packed = gpu::hip_elementwise_packed_kernel(family, t, p.vec16)) kernel = packed;
  }
  launch(s, kernel, grid_stride_shape(work_items(p.n, t, p.vec16), stream_caps(s).compute_units), p);
}

}  // namespace

void run_binary(HipStream& s, const BinaryCall& c) {
  launch_elementwise(s, "hal_binary", gpu::ElementwiseFamily::binary, c.y.dtype, gpu::binary_params(c));
}

void run_unary(HipStream& s, const UnaryCall& c) {
  launch_elementwise(s, "hal_unary", gpu::ElementwiseFamily::unary, c.y.dtype, gpu::unary_params(c));
}

void run_swiglu(HipStream& s, const SwigluCall& c) {
  launch_elementwise(s, "hal_swiglu", gpu::ElementwiseFamily::swiglu, c.y.dtype, gpu::swiglu_params(c));
}

}  // namespace hal::hip
