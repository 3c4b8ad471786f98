#pragma once
// hal::ops, the training side: backward passes of the forward ops, the fused
// cross-entropy loss. Same rules as ops/ops.h (validated before anything
// runs; no output written when an error is thrown); semantics in
// hal/op_training.h. A backward op computes from what the forward saw (its
// input x, or its output y where the gradient needs only that) and the
// gradient dy of its output.
//
// Gradients that need no op of their own, with forward ops (each under its
// own bound): for C = A B (gemm), dA = dC B^T is gemm(dC, B, dA, {.trans_b =
// true}) and dB = A^T dC is gemm(A, dC, dB, {.trans_a = true}); beta = 1 adds
// into a gradient accumulated over micro-batches. A bias gradient is the sum
// of dC over its rows: sum(dC viewed as [M, N], axis 0), a fixed-order
// reduction (so deterministic too).
#include <cstdint>
#include <optional>

#include "ops/ops.h"

namespace hal::ops {

// dx from softmax's / log_softmax's output y (options as in the forward).
void softmax_backward(Stream& s, const Tensor& y, const Tensor& dy, const Tensor& dx,
                      const SoftmaxOptions& options = {});
void log_softmax_backward(Stream& s, const Tensor& y, const Tensor& dy, const Tensor& dx,
                          const SoftmaxOptions& options = {});

// dx, dweight (and dbias) from the forward's x and weight.
void layernorm_backward(Stream& s, const Tensor& x, const Tensor& weight, const Tensor& dy, const Tensor& dx,
                        const Tensor& dweight, const std::optional<Tensor>& dbias, const NormOptions& options = {});
void rmsnorm_backward(Stream& s, const Tensor& x, const Tensor& weight, const Tensor& dy, const Tensor& dx,
                      const Tensor& dweight, const NormOptions& options = {});

// dx = dy * f'(x) for kind in gelu, gelu_tanh, silu, relu, sigmoid, tanh, exp.
void unary_backward(Stream& s, UnaryKind kind, const Tensor& x, const Tensor& dy, const Tensor& dx);
void swiglu_backward(Stream& s, const Tensor& gate, const Tensor& up, const Tensor& dy, const Tensor& dgate,
                     const Tensor& dup);

struct CrossEntropyOptions {
  std::int64_t ignore_index = -100;
  float label_smoothing = 0.0f;
  LossReduction reduction = LossReduction::mean;
};
// loss (and, when given, dlogits) from logits [N, V] and targets [N].
void cross_entropy(Stream& s, const Tensor& logits, const Tensor& targets, const Tensor& loss,
                   const std::optional<Tensor>& dlogits, const CrossEntropyOptions& options = {});

// dtable[ids[i]] += dy[i] (accumulating; ascending position order per row).
void embedding_backward(Stream& s, const Tensor& ids, const Tensor& dy, const Tensor& dtable);

// dx from dy: the inverse rotation of rope with the same options.
void rope_backward(Stream& s, const Tensor& dy, const Tensor& positions, const Tensor& dx,
                   const RopeOptions& options = {});

// dq, dk, dv of attention from its q, k, v, its output y, the lse it wrote
// (attention's optional output) and dy; options as in the forward.
void attention_backward(Stream& s, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& y,
                        const Tensor& dy, const Tensor& lse, const Tensor& dq, const Tensor& dk, const Tensor& dv,
                        const AttentionOptions& options = {});

struct AdamwOptions {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.01f;
  std::int64_t step = 1;               // 1 for the first step (bias correction)
  std::optional<Tensor> master{};      // f32 copy of a 16-bit param
};
// One AdamW step on param (or master, then param = master rounded), m and v.
void adamw_step(Stream& s, const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v,
                const AdamwOptions& options = {});

// y = sqrt(sum of squares of every tensor in xs), in list order.
void global_norm(Stream& s, const std::vector<Tensor>& xs, const Tensor& y);

}  // namespace hal::ops
