// Launchers of cast and copy (hip/kernels/cast_copy.hip).
#include <algorithm>
#include <cstdint>

#include "backends/hip/hip_device.h"
#include "backends/hip/hip_kernel_args.h"
#include "backends/hip/hip_ops.h"
#include "backends/hip/hip_stream.h"
#include "hip/kernels/cast_copy_params.h"

namespace hal::hip {

kernels::CastParams cast_params(const CastCall& c) {
  kernels::CastParams p{};
  p.x = c.x.first();
  p.y = c.y.first();
  p.n = c.y.numel();
  p.x_type = elem_type(c.x.dtype);
  p.y_type = elem_type(c.y.dtype);
  p.scale = c.scale;
  p.contiguous = c.x.is_contiguous() && c.y.is_contiguous();
  // 16-byte chunks: both views contiguous and 16-byte aligned, element sizes
  // of at most 4 bytes (the kernel's chunk shapes).
  p.vec16 = p.contiguous && dtype_size(c.x.dtype) <= 4 && dtype_size(c.y.dtype) <= 4 &&
            reinterpret_cast<std::uintptr_t>(p.x) % 16 == 0 && reinterpret_cast<std::uintptr_t>(p.y) % 16 == 0;
  p.shape = kernel_shape(c.y.shape);
  p.x_strides = kernel_strides(c.x.strides);
  p.y_strides = kernel_strides(c.y.strides);
  return p;
}

void run_cast(HipStream& s, const CastCall& c) {
  const kernels::CastParams p = cast_params(c);
  if (p.n == 0) return;
  // Work items: steps of 16 / (wider element size) elements on the chunk path.
  const std::int64_t per_step =
      p.vec16 ? 16 / static_cast<std::int64_t>(std::max(dtype_size(c.x.dtype), dtype_size(c.y.dtype))) : 1;
  launch(s, "hal_cast", grid_stride_shape(std::max<std::int64_t>(1, p.n / per_step), stream_caps(s).compute_units), p);
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
