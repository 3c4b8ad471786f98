// Launchers of cast and copy (ptx/kernels/cast_copy.cu). A copy between two
// contiguous tensors is one cuMemcpyDtoDAsync.
#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_kernel_args.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_paths.h"
#include "backends/cuda/cuda_stream.h"
#include "ptx/kernels/cast_copy_params.h"

namespace hal::cuda {

namespace {
bool float_type(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::f8e4m3 || t == DType::f8e5m2;
}
// cast_contiguous's conditions: both sides contiguous, 16-byte aligned, floating.
bool contiguous_float_cast(const CastCall& call) {
  return call.x.is_contiguous() && call.y.is_contiguous() && aligned16(call.x.first()) && aligned16(call.y.first()) &&
         float_type(call.x.dtype) && float_type(call.y.dtype);
}
}  // namespace

void run_cast(CudaStream& s, const CastCall& call) {
  ptx::CastParams p{};
  p.x = call.x.first();
  p.y = call.y.first();
  p.n = call.y.numel();
  p.scale = call.scale;
  p.x_dtype = elem_type(call.x.dtype);
  p.y_dtype = elem_type(call.y.dtype);
  p.shape = kernel_shape(call.y.shape);
  p.x_strides = kernel_strides(call.x.strides);
  p.y_strides = kernel_strides(call.y.strides);
  if (p.n == 0) return;
  if (contiguous_float_cast(call) && path_enabled("cast_vec")) {
    launch(s, "cast_contiguous", grid_stride_shape((p.n + 7) / 8, stream_caps(s).sm_count), p);
    return;
  }
  launch(s, "cast_strided", grid_stride_shape(p.n, stream_caps(s).sm_count), p);
}

void run_copy(CudaStream& s, const CopyCall& call) {
  const std::int64_t n = call.y.numel();
  if (n == 0) return;
  const std::size_t elem = dtype_size(call.y.dtype);
  if (call.x.is_contiguous() && call.y.is_contiguous()) {
    s.copy(call.y.first(), call.x.first(), static_cast<std::size_t>(n) * elem, CopyKind::device_to_device);
    return;
  }
  ptx::CopyParams p{};
  p.x = call.x.first();
  p.y = call.y.first();
  p.n = n;
  p.elem_bytes = static_cast<int32_t>(elem);
  p.shape = kernel_shape(call.y.shape);
  p.x_strides = kernel_strides(call.x.strides);
  p.y_strides = kernel_strides(call.y.strides);
  launch(s, "copy_strided", grid_stride_shape(n, stream_caps(s).sm_count), p);
}

}  // namespace hal::cuda
