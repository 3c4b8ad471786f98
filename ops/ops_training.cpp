// The public training op functions: build the op call, then validate and
// dispatch through ops::run (ops.cpp).
#include "ops/training.h"

#include "hal/error.h"

namespace hal::ops {

namespace {

void check_last_axis(std::string_view op, const Tensor& y, int axis) {
  if (y.rank() == 0 || normalize_axis(axis, y.rank(), op) != y.rank() - 1)
    throw_invalid_argument(op, "axis", "the last axis (-1)", std::to_string(axis));
}

}  // namespace

void softmax_backward(Stream& s, const Tensor& y, const Tensor& dy, const Tensor& dx, const SoftmaxOptions& o) {
  check_last_axis("softmax_backward", y, o.axis);
  run(s, SoftmaxBackwardCall{y, dy, dx, o.scale, o.causal, false});
}
void log_softmax_backward(Stream& s, const Tensor& y, const Tensor& dy, const Tensor& dx, const SoftmaxOptions& o) {
  check_last_axis("log_softmax_backward", y, o.axis);
  run(s, SoftmaxBackwardCall{y, dy, dx, o.scale, o.causal, true});
}

void layernorm_backward(Stream& s, const Tensor& x, const Tensor& weight, const Tensor& dy, const Tensor& dx,
                        const Tensor& dweight, const std::optional<Tensor>& dbias, const NormOptions& o) {
  run(s, NormBackwardCall{x, weight, dy, dx, dweight, dbias, o.eps, false});
}
void rmsnorm_backward(Stream& s, const Tensor& x, const Tensor& weight, const Tensor& dy, const Tensor& dx,
                      const Tensor& dweight, const NormOptions& o) {
  run(s, NormBackwardCall{x, weight, dy, dx, dweight, std::nullopt, o.eps, true});
}

void unary_backward(Stream& s, UnaryKind kind, const Tensor& x, const Tensor& dy, const Tensor& dx) {
  run(s, UnaryBackwardCall{kind, x, dy, dx});
}
void swiglu_backward(Stream& s, const Tensor& gate, const Tensor& up, const Tensor& dy, const Tensor& dgate,
                     const Tensor& dup) {
  run(s, SwigluBackwardCall{gate, up, dy, dgate, dup});
}

void cross_entropy(Stream& s, const Tensor& logits, const Tensor& targets, const Tensor& loss,
                   const std::optional<Tensor>& dlogits, const CrossEntropyOptions& o) {
  run(s, CrossEntropyCall{logits, targets, loss, dlogits, o.ignore_index, o.label_smoothing, o.reduction});
}

void embedding_backward(Stream& s, const Tensor& ids, const Tensor& dy, const Tensor& dtable) {
  run(s, EmbeddingBackwardCall{ids, dy, dtable});
}

void rope_backward(Stream& s, const Tensor& dy, const Tensor& positions, const Tensor& dx, const RopeOptions& o) {
  run(s, RopeBackwardCall{dy, positions, dx, o.theta, o.style, o.rotary_dim, o.inv_freq});
}

void attention_backward(Stream& s, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& y,
                        const Tensor& dy, const Tensor& lse, const Tensor& dq, const Tensor& dk, const Tensor& dv,
                        const AttentionOptions& o) {
  run(s, AttentionBackwardCall{q, k, v, y, dy, lse, dq, dk, dv, o.scale, o.causal});
}

void adamw_step(Stream& s, const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v,
                const AdamwOptions& o) {
  run(s, AdamwCall{param, grad, m, v, o.master, o.lr, o.beta1, o.beta2, o.eps, o.weight_decay, o.step});
}

void global_norm(Stream& s, const std::vector<Tensor>& xs, const Tensor& y) { run(s, GlobalNormCall{xs, y}); }

}  // namespace hal::ops
