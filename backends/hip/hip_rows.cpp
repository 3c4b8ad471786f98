// Launchers of the row kernels (hip/kernels/rows_*.hip): softmax, norms,
// reduce, rope. Every view is passed with its strides; no copies. Softmax,
// norms and reduce take the kernels' 16-byte vector path (x_vec16 / y_vec16,
// see hip/kernels/rows_params.h) when every row is contiguous and starts on
// a 16-byte boundary; the decision depends only on the views, so a given
// call always runs the same summation order.
#include <cstdint>

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

// Element types the vector path decodes (4 x f32 or 8 x f16/bf16 per chunk).
bool vec16_type(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// Every row of `t` (rows over layout l's outer dims with `outer_strides`,
// `col_stride` along the row) is unit-stride and starts on a 16-byte
// boundary: the first element is aligned and each outer stride of an extent
// > 1 is a whole number of 16-byte units.
bool rows_aligned16(const Tensor& t, const kernels::RowsLayout& l, const std::int64_t* outer_strides,
                    std::int64_t col_stride) {
  if (!vec16_type(t.dtype) || col_stride != 1 || !aligned16(t.first())) return false;
  const auto esize = static_cast<std::int64_t>(dtype_size(t.dtype));
  for (int d = 0; d < l.outer_rank; ++d)
    if (l.outer_shape[d] > 1 && (outer_strides[d] * esize) % 16 != 0) return false;
  return true;
}

// Sets l.x_vec16, and l.y_vec16 when y qualifies too with x's element size
// (one 16-byte chunk of x becomes one of y).
void set_vec16(kernels::RowsLayout& l, const Tensor& x, const Tensor* y) {
  l.x_vec16 = rows_aligned16(x, l, l.x_outer_stride, l.x_col_stride);
  l.y_vec16 = l.x_vec16 && y != nullptr && dtype_size(y->dtype) == dtype_size(x.dtype) &&
              rows_aligned16(*y, l, l.y_outer_stride, l.y_col_stride);
}

// A norm's weight / bias read as 16-byte chunks next to x's: unit stride,
// aligned, x's element size.
bool param_vec16(const Tensor& t, const Tensor& x) {
  return vec16_type(t.dtype) && dtype_size(t.dtype) == dtype_size(x.dtype) && aligned16(t.first()) &&
         (t.shape[0] <= 1 || t.strides[0] == 1);
}

}  // namespace

kernels::SoftmaxParams softmax_params(const SoftmaxCall& c) {
  kernels::SoftmaxParams p{};
  p.layout = rows_layout(c.x, leading_strides(c.y), c.y.strides[c.y.rank() - 1], c.x.rank() - 1);
  p.x = c.x.first();
  p.y = c.y.first();
  p.x_type = elem_type(c.x.dtype);
  p.y_type = elem_type(c.y.dtype);
  p.scale = c.scale;
  p.causal = c.causal;
  p.log = c.log;
  set_vec16(p.layout, c.x, &c.y);
  return p;
}

void run_softmax(HipStream& s, const SoftmaxCall& c) {
  if (c.causal && c.x.rank() < 2)
    throw_invalid_argument("softmax", "x", "rank >= 2 with causal", c.x.shape.str());
  const kernels::SoftmaxParams p = softmax_params(c);
  if (p.layout.rows == 0 || p.layout.cols == 0) return;
  launch(s, "hal_softmax", rows_shape(p.layout.rows), p);
}

kernels::NormParams norm_params(const NormCall& c) {
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
  set_vec16(p.layout, c.x, &c.y);
  p.weight_vec16 = p.layout.x_vec16 && param_vec16(c.weight, c.x);
  p.bias_vec16 = p.layout.x_vec16 && c.bias && param_vec16(*c.bias, c.x);
  return p;
}

void run_norm(HipStream& s, const NormCall& c) {
  const kernels::NormParams p = norm_params(c);
  if (p.layout.rows == 0 || p.layout.cols == 0) return;
  launch(s, "hal_norm", rows_shape(p.layout.rows), p);
}

kernels::ReduceParams reduce_params(const ReduceCall& c) {
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
  set_vec16(p.layout, c.x, nullptr);
  return p;
}

void run_reduce(HipStream& s, const ReduceCall& c) {
  const kernels::ReduceParams p = reduce_params(c);
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
  if (c.inv_freq) {
    p.inv_freq = static_cast<const float*>(c.inv_freq->first());
    p.inv_freq_stride = c.inv_freq->strides[0];
  }
  const std::int64_t work = c.x.shape[0] * c.x.shape[1] * c.x.shape[2] * (c.x.shape[3] - c.rotary_dim / 2);
  if (work == 0) return;
  launch(s, "hal_rope", grid_stride_shape(work, stream_caps(s).compute_units), p);
}

}  // namespace hal::hip
