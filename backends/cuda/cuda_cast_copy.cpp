// Launchers of cast and copy (ptx/kernels/cast_copy.cu). A copy between two
// contiguous tensors is one cuMemcpyDtoDAsync.
#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_kernel_args.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_paths.h"
#include "backends/cuda/cuda_stream.h"

namespace hal::cuda {

void run_cast(CudaStream& s, const CastCall& call) {
  const kernel_params::CastParams p = gpu::cast_params(call);
  if (p.n == 0) return;
  // cast_contiguous: both sides contiguous and 16-byte aligned (vec16; every
  // GPU cast dtype is a float of at most 4 bytes), 8 elements per thread.
  if (p.vec16 && path_enabled("cast_vec")) {
    launch(s, "cast_contiguous", grid_stride_shape((p.n + 7) / 8, stream_caps(s).sm_count), p);
    return;
  }
  launch(s, "cast_strided", grid_stride_shape(p.n, stream_caps(s).sm_count), p);
}

void run_copy(CudaStream& s, const CopyCall& call) {
  const kernel_params::CopyParams p = gpu::copy_params(call);
  if (p.n == 0) return;
  if (p.contiguous) {
    s.copy(call.y.first(), call.x.first(), static_cast<std::size_t>(p.n) * dtype_size(call.y.dtype),
           CopyKind::device_to_device);
    return;
  }
  launch(s, "copy_strided", grid_stride_shape(p.n, stream_caps(s).sm_count), p);
}

}  // namespace hal::cuda
