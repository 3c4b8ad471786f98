// Launchers of the row kernels (hip/kernels/rows_*.hip): softmax, norms,
// reduce, rope. Every view is passed with its strides; no copies.
#include "backends/hip/hip_device.h"
#include "backends/hip/hip_kernel_args.h"
#include "backends/hip/hip_ops.h"
#include "backends/hip/hip_stream.h"
#include "hal/error.h"
#include "hip/kernels/rows_params.h"

namespace hal::hip {

namespace {

// y's strides over x's outer axes when the row axis is the last one.
Strides leading_strides(const Tensor& t) {
  Strides s;
  for (int d = 0; d + 1 < t.rank(); ++d) s.push_back(t.strides[d]);
  return s;
}

}  // namespace

void run_softmax(HipStream& s, const SoftmaxCall& c) {
  kernels::SoftmaxParams p{};
  p.layout = rows_layout(c.x, leading_strides(c.y), c.y.strides[c.y.rank() - 1], c.x.rank() - 1);
  p.x = c.x.first();
  p.y = c.y.first();
  p.x_type = elem_type(c.x.dtype);
  p.y_type = elem_type(c.y.dtype);
  p.scale = c.scale;
  p.causal = c.causal;
  p.log = c.log;
  if (c.causal && c.x.rank() < 2)
    throw_invalid_argument("softmax", "x", "rank >= 2 with causal", c.x.shape.str());
  if (p.layout.rows == 0 || p.layout.cols == 0) return;
  launch(s, "hal_softmax", rows_shape(p.layout.rows), p);
}

void run_norm(HipStream& s, const NormCall& c) {
  kernels::NormParams p{};
  p.layout = rows_layout(c.x, leading_strides(c.y), c.y.strides[c.y.rank() - 1], c.x.rank() - 1);
  p.x = c.x.first();
  p.y = c.y.first();
  p.weight = c.weight.first();
  p.weight_stride = c.weight.strides[0];
  p.bias = c.bias ? c.bias->first() : nullptr;
  p.bias_stride = c.bias ? c.bias->strides[0] : 0;
  p.x_type = elem_type(c.x.dtype);
  p.y_type = elem_type(c.y.dtype);
  p.weight_type = elem_type(c.weight.dtype);
  p.bias_type = c.bias ? elem_type(c.bias->dtype) : 0;
  p.eps = c.eps;
  p.rms = c.rms;
  if (p.layout.rows == 0 || p.layout.cols == 0) return;
  launch(s, "hal_norm", rows_shape(p.layout.rows), p);
}

void run_reduce(HipStream& s, const ReduceCall& c) {
  Strides y_outer;
  for (int d = 0; d < c.y.rank(); ++d)
    if (!(c.keepdim && d == c.axis)) y_outer.push_back(c.y.strides[d]);
  kernels::ReduceParams p{};
  p.layout = rows_layout(c.x, y_outer, 0, c.axis);
  p.x = c.x.first();
  p.y = c.y.first();
  p.x_type = elem_type(c.x.dtype);
  p.y_type = elem_type(c.y.dtype);
  p.kind = static_cast<int32_t>(c.kind);
  if (p.layout.rows == 0) return;
  launch(s, "hal_reduce", rows_shape(p.layout.rows), p);
}

void run_rope(HipStream& s, const RopeCall& c) {
  kernels::RopeParams p{};
  p.x = c.x.first();
  p.y = c.y.first();
  p.positions = static_cast<const int32_t*>(c.positions.first());
  for (int d = 0; d < 4; ++d) {
    p.shape[d] = c.x.shape[d];
    p.x_stride[d] = c.x.strides[d];
    p.y_stride[d] = c.y.strides[d];
  }
  if (c.positions.rank() == 2) {
    p.pos_batch_stride = c.positions.strides[0];
    p.pos_seq_stride = c.positions.strides[1];
  } else {
    p.pos_batch_stride = 0;
    p.pos_seq_stride = c.positions.strides[0];
  }
  p.x_type = elem_type(c.x.dtype);
  p.y_type = elem_type(c.y.dtype);
  p.rotary_dim = c.rotary_dim;
  p.gptj = c.style == RopeStyle::gptj;
  p.theta = c.theta;
  const std::int64_t work = c.x.shape[0] * c.x.shape[1] * c.x.shape[2] * (c.x.shape[3] - c.rotary_dim / 2);
  if (work == 0) return;
  launch(s, "hal_rope", grid_stride_shape(work, stream_caps(s).compute_units), p);
}

}  // namespace hal::hip
