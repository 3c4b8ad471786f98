// Launchers of the row kernels (hip/kernels/rows_*.hip): softmax, norms,
// reduce, rope. Every view is passed with its strides; no copies. Softmax,
// norms and reduce take the kernels' 16-byte vector path (x_vec16 / y_vec16,
// see kernel_params/rows.h, set by backends/gpu/kernel_args.cpp) when every
// row is contiguous and starts on a 16-byte boundary; the decision depends
// only on the views, so a given call always runs the same summation order.
#include <cstdint>

#include "backends/hip/hip_device.h"
#include "backends/hip/hip_kernel_args.h"
#include "backends/hip/hip_ops.h"
#include "backends/gpu/unverified.h"
#include "backends/hip/hip_stream.h"
#include "hal/error.h"

namespace hal::hip {

namespace {
// Rows the *_vec16_2b kernels take: x on the 16-byte vector path, 2-byte elements.
bool vec16_2byte(const kernel_params::RowsLayout& l, DType x) { return l.x_vec16 && dtype_size(x) == 2; }
}  // namespace

void run_softmax(HipStream& s, const SoftmaxCall& c) {
  if (c.causal && c.x.rank() < 2)
    throw_invalid_argument("softmax", "x", "rank >= 2 with causal", c.x.shape.str());
  const kernel_params::SoftmaxParams p = gpu::softmax_params(c);
  if (p.layout.rows == 0 || p.layout.cols == 0) return;
  // 16-bit vector rows: the kernel without the f32 and strided paths (issue
  // 24: fewer SGPRs spilled into VGPR lanes), never run, so only with
  // HAL_GPU_UNVERIFIED=1.
  if (gpu::unverified_kernels_enabled() && vec16_2byte(p.layout, c.x.dtype)) {
    launch(s, "hal_softmax_vec16_2b", rows_shape(p.layout.rows), p);
    return;
  }
  launch(s, "hal_softmax", rows_shape(p.layout.rows), p);
}

void run_norm(HipStream& s, const NormCall& c) {
  const kernel_params::NormParams p = gpu::norm_params(c);
  if (p.layout.rows == 0 || p.layout.cols == 0) return;
  if (gpu::unverified_kernels_enabled() && vec16_2byte(p.layout, c.x.dtype)) {  // as run_softmax
    launch(s, "hal_norm_vec16_2b", rows_shape(p.layout.rows), p);
    return;
  }
  launch(s, "hal_norm", rows_shape(p.layout.rows), p);
}

void run_reduce(HipStream& s, const ReduceCall& c) {
  const kernel_params::ReduceParams p = gpu::reduce_params(c);
  if (p.layout.rows == 0) return;
  launch(s, "hal_reduce", rows_shape(p.layout.rows), p);
}

void run_rope(HipStream& s, const RopeCall& c) {
  // One work item per rotated pair or passed-through element of a head.
  const std::int64_t work = c.x.shape[0] * c.x.shape[1] * c.x.shape[2] * (c.x.shape[3] - c.rotary_dim / 2);
  if (work == 0) return;
  launch(s, "hal_rope", grid_stride_shape(work, stream_caps(s).compute_units), gpu::rope_params(c));
}

}  // namespace hal::hip
