// Packing of the training kernels' arguments, shared by both GPU backends
// (kernel_args.h, kernel_params/training.h). The calls are validated by ops/:
// shapes agree, dtypes are those the support matrix accepts.
#include <cmath>
#include <cstdint>

#include "backends/gpu/kernel_args.h"
#include "hal/error.h"

namespace hal::gpu {

namespace kp = kernel_params;

static_assert(kp::kGlobalNormMaxTensors == static_cast<int>(kMaxGlobalNormTensors),
              "GlobalNormFinishParams holds one chunk range per tensor hal::GlobalNormCall may list");

kp::UnaryBackwardParams unary_backward_params(const UnaryBackwardCall& c) {
  kp::UnaryBackwardParams p{};
  p.x = c.x.first();
  p.dy = c.dy.first();
  p.dx = c.dx.first();
  p.n = c.dx.numel();
  p.op = static_cast<std::int32_t>(c.kind);
  p.dtype = elem_type(c.dx.dtype);
  p.shape = kernel_shape(c.x.shape);
  p.x_strides = kernel_strides(c.x.strides);
  p.dy_strides = kernel_strides(c.dy.strides);
  p.dx_strides = kernel_strides(c.dx.strides);
  return p;
}

kp::SwigluBackwardParams swiglu_backward_params(const SwigluBackwardCall& c) {
  kp::SwigluBackwardParams p{};
  p.gate = c.gate.first();
  p.up = c.up.first();
  p.dy = c.dy.first();
  p.dgate = c.dgate.first();
  p.dup = c.dup.first();
  p.n = c.gate.numel();
  p.dtype = elem_type(c.dup.dtype);
  p.shape = kernel_shape(c.gate.shape);
  p.gate_strides = kernel_strides(c.gate.strides);
  p.up_strides = kernel_strides(c.up.strides);
  p.dy_strides = kernel_strides(c.dy.strides);
  p.dgate_strides = kernel_strides(c.dgate.strides);
  p.dup_strides = kernel_strides(c.dup.strides);
  return p;
}

kp::AdamwParams adamw_params(const AdamwCall& c) {
  kp::AdamwParams p{};
  p.param = c.param.first();
  p.grad = c.grad.first();
  p.m = static_cast<float*>(c.m.first());
  p.v = static_cast<float*>(c.v.first());
  p.n = c.param.numel();
  p.shape = kernel_shape(c.param.shape);
  p.param_strides = kernel_strides(c.param.strides);
  p.grad_strides = kernel_strides(c.grad.strides);
  p.m_strides = kernel_strides(c.m.strides);
  p.v_strides = kernel_strides(c.v.strides);
  if (c.master) {
    p.master = static_cast<float*>(c.master->first());
    p.master_strides = kernel_strides(c.master->strides);
  }
  p.param_type = elem_type(c.param.dtype);
  p.grad_type = elem_type(c.grad.dtype);
  // The same fp64 expressions and single roundings as cpu_ref/adamw.cpp.
  const double b1 = c.beta1, b2 = c.beta2, t = static_cast<double>(c.step);
  p.beta1 = static_cast<float>(b1);
  p.beta2 = static_cast<float>(b2);
  p.one_minus_beta1 = static_cast<float>(1.0 - b1);
  p.one_minus_beta2 = static_cast<float>(1.0 - b2);
  p.step_size = static_cast<float>(static_cast<double>(c.lr) / (1.0 - std::pow(b1, t)));
  p.inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(b2, t)));
  p.decay = static_cast<float>(1.0 - static_cast<double>(c.lr) * static_cast<double>(c.weight_decay));
  p.eps = c.eps;
  return p;
}

kp::RowTensors row_tensors(const Tensor& forward, const Tensor& dy, const Tensor& dx) {
  kp::RowTensors l{};
  const Tensor* ts[kp::kRowTensors] = {&forward, &dy, &dx};
  const int rank = forward.rank();
  l.outer_rank = rank > 0 ? rank - 1 : 0;
  l.rows = 1;
  for (int d = 0; d < l.outer_rank; ++d) {
    l.outer_shape[d] = forward.shape[d];
    l.rows *= forward.shape[d];
    for (int k = 0; k < kp::kRowTensors; ++k) l.outer_stride[k][d] = ts[k]->strides[d];
  }
  l.cols = rank > 0 ? forward.shape[rank - 1] : 1;
  for (int k = 0; k < kp::kRowTensors; ++k) l.col_stride[k] = rank > 0 ? ts[k]->strides[rank - 1] : 1;
  return l;
}

kp::SoftmaxBackwardParams softmax_backward_params(const SoftmaxBackwardCall& c) {
  kp::SoftmaxBackwardParams p{};
  p.layout = row_tensors(c.y, c.dy, c.dx);
  p.y = c.y.first();
  p.dy = c.dy.first();
  p.dx = c.dx.first();
  p.dtype = elem_type(c.dx.dtype);
  p.scale = c.scale;
  p.causal = c.causal;
  p.log = c.log;
  return p;
}

kp::NormBackwardParams norm_backward_params(const NormBackwardCall& c) {
  kp::NormBackwardParams p{};
  p.layout = row_tensors(c.x, c.dy, c.dx);
  p.x = c.x.first();
  p.weight = c.weight.first();
  p.dy = c.dy.first();
  p.dx = c.dx.first();
  p.dweight = c.dweight.first();
  p.weight_stride = c.weight.strides[0];
  p.dweight_stride = c.dweight.strides[0];
  if (c.dbias) {
    p.dbias = c.dbias->first();
    p.dbias_stride = c.dbias->strides[0];
  }
  p.block_rows = kp::norm_backward_block_rows(p.layout.rows);
  p.blocks = kp::norm_backward_blocks(p.layout.rows);
  p.dtype = elem_type(c.x.dtype);
  p.eps = c.eps;
  p.rms = c.rms;
  return p;
}

std::int64_t norm_backward_scratch_floats(const kp::NormBackwardParams& p) {
  const std::int64_t partial = p.blocks * p.layout.cols;
  return 2 * p.layout.rows + partial * (p.dbias != nullptr ? 2 : 1);
}

kp::RopeParams rope_backward_params(const RopeBackwardCall& c) {
  const RopeCall as_rope{c.dy, c.positions, c.dx, c.theta, c.style, c.rotary_dim, c.inv_freq};
  kp::RopeParams p = rope_params(as_rope);
  p.inverse = 1;
  return p;
}

kp::GlobalNormPartialParams global_norm_partial_params(const Tensor& x, float* partials) {
  kp::GlobalNormPartialParams p{};
  p.x = x.first();
  p.partials = partials;
  p.n = x.numel();
  p.dtype = elem_type(x.dtype);
  p.shape = kernel_shape(x.shape);
  p.strides = kernel_strides(x.strides);
  return p;
}

kp::GlobalNormFinishParams global_norm_finish_params(const GlobalNormCall& c, const float* partials) {
  kp::GlobalNormFinishParams p{};
  p.partials = partials;
  p.y = c.y.first();
  p.y_type = elem_type(c.y.dtype);
  p.tensors = static_cast<std::int32_t>(c.xs.size());
  p.chunk_begin[0] = 0;
  for (std::size_t k = 0; k < c.xs.size(); ++k)
    p.chunk_begin[k + 1] = p.chunk_begin[k] + kp::global_norm_chunks(c.xs[k].numel());
  return p;
}

kp::CrossEntropyCheckParams cross_entropy_check_params(const CrossEntropyCall& c) {
  kp::CrossEntropyCheckParams p{};
  p.targets = c.targets.first();
  p.n = c.targets.shape[0];
  p.vocab = c.logits.shape[1];
  p.targets_stride = c.targets.strides[0];
  p.ignore_index = c.ignore_index;
  p.targets_i64 = c.targets.dtype == DType::i64;
  return p;
}

kp::CrossEntropyParams cross_entropy_params(const CrossEntropyCall& c, std::int64_t counted) {
  kp::CrossEntropyParams p{};
  p.logits = c.logits.first();
  p.targets = c.targets.first();
  p.n = c.logits.shape[0];
  p.vocab = c.logits.shape[1];
  p.logits_row_stride = c.logits.strides[0];
  p.logits_col_stride = c.logits.strides[1];
  if (c.dlogits) {
    p.dlogits = c.dlogits->first();
    p.dlogits_row_stride = c.dlogits->strides[0];
    p.dlogits_col_stride = c.dlogits->strides[1];
  }
  p.targets_stride = c.targets.strides[0];
  if (c.reduction == LossReduction::none) {
    p.row_loss = static_cast<float*>(c.loss.first());
    p.row_loss_stride = c.loss.strides[0];
  } else {
    p.row_loss_stride = 1;
  }
  p.ignore_index = c.ignore_index;
  p.logits_type = elem_type(c.logits.dtype);
  p.targets_i64 = c.targets.dtype == DType::i64;
  // The fp32 constants of cpu_ref/cross_entropy.cpp, with the same operations.
  const float smoothing = c.label_smoothing;
  p.smoothing = smoothing;
  p.keep = 1.0f - smoothing;
  p.spread = p.vocab > 0 ? smoothing / static_cast<float>(p.vocab) : 0.0f;
  p.weight = c.reduction == LossReduction::mean ? 1.0f / static_cast<float>(counted) : 1.0f;
  return p;
}

kp::AttentionBackwardParams attention_backward_params(const AttentionBackwardCall& c, const char* backend) {
  kp::AttentionBackwardParams p{};
  p.q = c.q.first();
  p.k = c.k.first();
  p.v = c.v.first();
  p.y = c.y.first();
  p.dy = c.dy.first();
  p.lse = static_cast<const float*>(c.lse.first());
  p.dq = c.dq.first();
  p.dk = c.dk.first();
  p.dv = c.dv.first();
  for (int d = 0; d < 4; ++d) {
    p.q_stride[d] = c.q.strides[d];
    p.k_stride[d] = c.k.strides[d];
    p.v_stride[d] = c.v.strides[d];
    p.y_stride[d] = c.y.strides[d];
    p.dy_stride[d] = c.dy.strides[d];
    p.dq_stride[d] = c.dq.strides[d];
    p.dk_stride[d] = c.dk.strides[d];
    p.dv_stride[d] = c.dv.strides[d];
  }
  for (int d = 0; d < 3; ++d) p.lse_stride[d] = c.lse.strides[d];
  const AttentionDims dims = attention_dims(c.q, c.k, c.v, backend, "attention_backward");
  p.batch = dims.batch;
  p.sq = dims.sq;
  p.sk = dims.sk;
  p.hq = dims.hq;
  p.hkv = dims.hkv;
  p.d = dims.d;
  p.dv_dim = dims.dv;
  p.dtype = static_cast<std::uint8_t>(c.q.dtype);
  p.causal = c.causal;
  p.scale = c.scale;
  return p;
}

}  // namespace hal::gpu
