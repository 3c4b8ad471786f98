// Launchers of binary, unary and swiglu (ptx/kernels/elementwise.cu). The
// vectorised *_contig_<t> kernels run when every operand is contiguous with
// y's shape, 16-byte aligned, and the dtype is f32/f16/bf16; otherwise the
// strided kernel handles broadcasting, views and fp8.
#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_kernel_args.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_stream.h"

namespace hal::cuda {

namespace {

const char* contig_kernel(const char* const names[3], DType t) {
  switch (t) {
    case DType::f32: return names[0];
    case DType::f16: return names[1];
    case DType::bf16: return names[2];
    default: return nullptr;
  }
}

bool dense_like(const Tensor& t, const Shape& y_shape) {
  return t.shape == y_shape && t.is_contiguous() && aligned16(t.first());
}

}  // namespace

void run_binary(CudaStream& s, const BinaryCall& call) {
  const Tensor& y = call.y;
  ptx::BinaryParams p{};
  p.a = call.a.first();
  p.b = call.b.first();
  p.y = y.first();
  p.n = y.numel();
  p.op = static_cast<int32_t>(call.kind);
  p.dtype = elem_type(y.dtype);
  if (p.n == 0) return;
  static const char* const names[3] = {"binary_contig_f32", "binary_contig_f16", "binary_contig_bf16"};
  const char* fast = contig_kernel(names, y.dtype);
  if (fast && dense_like(call.a, y.shape) && dense_like(call.b, y.shape) && dense_like(y, y.shape)) {
    launch(s, fast, grid_stride_shape(p.n / 4 + 1, stream_caps(s).sm_count), p);
    return;
  }
  p.shape = kernel_shape(y.shape);
  p.a_strides = kernel_strides(broadcast_strides(call.a.shape, call.a.strides, y.shape));
  p.b_strides = kernel_strides(broadcast_strides(call.b.shape, call.b.strides, y.shape));
  p.y_strides = kernel_strides(y.strides);
  launch(s, "binary_strided", grid_stride_shape(p.n, stream_caps(s).sm_count), p);
}

void run_unary(CudaStream& s, const UnaryCall& call) {
  const Tensor& y = call.y;
  ptx::UnaryParams p{};
  p.x = call.x.first();
  p.y = y.first();
  p.n = y.numel();
  p.op = static_cast<int32_t>(call.kind);
  p.dtype = elem_type(y.dtype);
  if (p.n == 0) return;
  static const char* const names[3] = {"unary_contig_f32", "unary_contig_f16", "unary_contig_bf16"};
  const char* fast = contig_kernel(names, y.dtype);
  if (fast && dense_like(call.x, y.shape) && dense_like(y, y.shape)) {
    launch(s, fast, grid_stride_shape(p.n / 4 + 1, stream_caps(s).sm_count), p);
    return;
  }
  p.shape = kernel_shape(y.shape);
  p.x_strides = kernel_strides(call.x.strides);
  p.y_strides = kernel_strides(y.strides);
  launch(s, "unary_strided", grid_stride_shape(p.n, stream_caps(s).sm_count), p);
}

void run_swiglu(CudaStream& s, const SwigluCall& call) {
  const Tensor& y = call.y;
  ptx::SwigluParams p{};
  p.gate = call.gate.first();
  p.up = call.up.first();
  p.y = y.first();
  p.n = y.numel();
  p.dtype = elem_type(y.dtype);
  if (p.n == 0) return;
  static const char* const names[3] = {"swiglu_contig_f32", "swiglu_contig_f16", "swiglu_contig_bf16"};
  const char* fast = contig_kernel(names, y.dtype);
  if (fast && dense_like(call.gate, y.shape) && dense_like(call.up, y.shape) && dense_like(y, y.shape)) {
    launch(s, fast, grid_stride_shape(p.n / 4 + 1, stream_caps(s).sm_count), p);
    return;
  }
  p.shape = kernel_shape(y.shape);
  p.gate_strides = kernel_strides(call.gate.strides);
  p.up_strides = kernel_strides(call.up.strides);
  p.y_strides = kernel_strides(y.strides);
  launch(s, "swiglu_strided", grid_stride_shape(p.n, stream_caps(s).sm_count), p);
}

}  // namespace hal::cuda
