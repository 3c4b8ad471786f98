// Launchers of cast and copy (hip/kernels/cast_copy.hip).
#include <algorithm>
#include <cstdint>

#include "backends/hip/hip_device.h"
#include "backends/hip/hip_kernel_args.h"
#include "backends/hip/hip_ops.h"
#include "backends/hip/hip_stream.h"

namespace hal::hip {

void run_cast(HipStream& s, const CastCall& c) {
  const kernel_params::CastParams p = gpu::cast_params(c);
  if (p.n == 0) return;
  // Work items: steps of 16 / (wider element size) elements on the chunk path.
  const std::int64_t per_step =
      p.vec16 ? 16 / static_cast<std::int64_t>(std::max(dtype_size(c.x.dtype), dtype_size(c.y.dtype))) : 1;
  launch(s, "hal_cast", grid_stride_shape(std::max<std::int64_t>(1, p.n / per_step), stream_caps(s).compute_units), p);
}

void run_copy(HipStream& s, const CopyCall& c) {
  const kernel_params::CopyParams p = gpu::copy_params(c);
  if (p.n == 0) return;
  // Both contiguous: one DMA copy of the bytes.
  if (p.contiguous) {
    s.copy(c.y.first(), c.x.first(), static_cast<std::size_t>(p.n) * dtype_size(c.y.dtype), CopyKind::device_to_device);
    return;
  }
  launch(s, "hal_copy", grid_stride_shape(p.n, stream_caps(s).compute_units), p);
}

}  // namespace hal::hip
