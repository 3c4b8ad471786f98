// Launchers of cast and copy (hip/kernels/cast_copy.hip).
#include "backends/hip/hip_device.h"
#include "backends/hip/hip_kernel_args.h"
#include "backends/hip/hip_ops.h"
#include "backends/hip/hip_stream.h"
#include "hip/kernels/cast_copy_params.h"

namespace hal::hip {

void run_cast(HipStream& s, const CastCall& c) {
  kernels::CastParams p{};
  p.x = c.x.first();
  p.y = c.y.first();
  p.n = c.y.numel();
  p.x_type = elem_type(c.x.dtype);
  p.y_type = elem_type(c.y.dtype);
  p.scale = c.scale;
  p.contiguous = c.x.is_contiguous() && c.y.is_contiguous();
  p.shape = kernel_shape(c.y.shape);
  p.x_strides = kernel_strides(c.x.strides);
  p.y_strides = kernel_strides(c.y.strides);
  if (p.n == 0) return;
  launch(s, "hal_cast", grid_stride_shape(p.n, stream_caps(s).compute_units), p);
}

void run_copy(HipStream& s, const CopyCall& c) {
  const std::int64_t n = c.y.numel();
  if (n == 0) return;
  // Both contiguous: one DMA copy of the bytes.
  if (c.x.is_contiguous() && c.y.is_contiguous()) {
    s.copy(c.y.first(), c.x.first(), static_cast<std::size_t>(n) * dtype_size(c.y.dtype), CopyKind::device_to_device);
    return;
  }
  kernels::CopyParams p{};
  p.x = c.x.first();
  p.y = c.y.first();
  p.n = n;
  p.elem_bytes = static_cast<int32_t>(dtype_size(c.y.dtype));
  p.contiguous = 0;
  p.shape = kernel_shape(c.y.shape);
  p.x_strides = kernel_strides(c.x.strides);
  p.y_strides = kernel_strides(c.y.strides);
  launch(s, "hal_copy", grid_stride_shape(n, stream_caps(s).compute_units), p);
}

}  // namespace hal::hip
