#pragma once
// The training op calls: backward passes of the forward ops, the fused
// cross-entropy loss and the AdamW step. Included by hal/op.h (they are
// alternatives of OpCall); the shared semantics stated there hold: inputs
// widened, fp32 compute (fp64 for f64 tensors on the CPU), one rounding per
// output. Every gradient that sums over rows or tokens sums them in a fixed
// order, so its bits do not depend on the thread count.
//
// A "gradient" input named d<name> is dL/d<name> for some scalar loss L; the
// op writes dL/d<input> by the chain rule. Outputs are written, not added to,
// unless their role says accumulated (embedding_backward's dtable, AdamW's
// parameters and moments).
//
// Include hal/op.h, not this file: it is read there, after the enums and
// TensorRole it uses and before OpCall lists these calls.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "hal/tensor.h"

namespace hal {

enum class LossReduction { none, mean, sum };

// The gradient of softmax (or log_softmax) over the last axis, from its
// output y = softmax(scale * x + mask):
//   softmax:     dx = scale * y * (dy - sum_j dy_j y_j)
//   log_softmax: dx = scale * (dy - exp(y) * sum_j dy_j)
// The sums run over the visible keys of the row; masked entries (causal, as in
// SoftmaxCall) get dx = 0 and their y and dy are not read. y, dy, dx share
// one dtype and shape.
struct SoftmaxBackwardCall {
  Tensor y, dy, dx;
  float scale = 1.0f;
  bool causal = false;
  bool log = false;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("y", c.y, TensorRole::input);
    f("dy", c.dy, TensorRole::input);
    f("dx", c.dx, TensorRole::output);
  }
};

// The gradient of layernorm / rmsnorm (NormCall) over the last axis D, from
// the forward's input x (the statistics are recomputed):
//   xhat = (x - mean) * r (layernorm) or x * r (rmsnorm), r = 1/sqrt(var + eps)
//   g = dy * weight
//   layernorm: dx = r * (g - mean(g) - xhat * mean(g * xhat))
//   rmsnorm:   dx = r * (g - xhat * mean(g * xhat))
//   dweight = sum over rows of dy * xhat;  dbias = sum over rows of dy
// x, dy, dx: [..., D]; weight, dweight, dbias: [D]; all of x's dtype. The
// row sums of dweight and dbias are blocked by a fixed number of rows and the
// blocks added in order: the same bits for any thread count.
struct NormBackwardCall {
  Tensor x, weight, dy, dx, dweight;
  std::optional<Tensor> dbias;  // layernorm only
  float eps = 1e-5f;
  bool rms = false;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("x", c.x, TensorRole::input);
    f("weight", c.weight, TensorRole::input);
    f("dy", c.dy, TensorRole::input);
    f("dx", c.dx, TensorRole::output);
    f("dweight", c.dweight, TensorRole::output);
    if (c.dbias) f("dbias", *c.dbias, TensorRole::output);
  }
};

// dx = dy * f'(x) element-wise, for f in gelu, gelu_tanh, silu, relu,
// sigmoid, tanh, exp (the other unary kinds are rejected). relu'(x) is 1 for
// x > 0 and 0 otherwise (NaN included: PyTorch's threshold_backward).
// x, dy, dx share one dtype and shape.
struct UnaryBackwardCall {
  UnaryKind kind;
  Tensor x, dy, dx;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("x", c.x, TensorRole::input);
    f("dy", c.dy, TensorRole::input);
    f("dx", c.dx, TensorRole::output);
  }
};

// The gradient of y = silu(gate) * up: dgate = dy * up * silu'(gate),
// dup = dy * silu(gate). All five tensors share one dtype and shape.
struct SwigluBackwardCall {
  Tensor gate, up, dy, dgate, dup;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("gate", c.gate, TensorRole::input);
    f("up", c.up, TensorRole::input);
    f("dy", c.dy, TensorRole::input);
    f("dgate", c.dgate, TensorRole::output);
    f("dup", c.dup, TensorRole::output);
  }
};

// Fused softmax cross-entropy over logits [N, V] and targets [N] (i32/i64):
//   loss_i = (1 - s) * (lse_i - z_i,t) + s * (lse_i - mean_j z_ij)
// with s = label_smoothing and lse the log-sum-exp of the row (fp32). A row
// whose target is ignore_index has loss 0 and dlogits 0 and is not counted.
// reduction none: loss [N]; sum: loss [] (the sum of the rows); mean: loss []
// (the sum over the counted rows divided by their number; NaN when none is
// counted, as in PyTorch). loss is f32 (f64 with f64 logits).
// dlogits (optional, logits' dtype and shape) is the gradient of the reduced
// loss (for none: of the sum of the rows), written in the same pass:
//   dlogits_ij = w * (softmax(z_i)_j - (1 - s) [j == t] - s / V),
// w = 1 (none, sum) or 1 / count (mean). A target outside [0, V) that is not
// ignore_index is an error, raised before anything is written. Row sums and
// the reduction over rows run in fixed orders.
struct CrossEntropyCall {
  Tensor logits, targets, loss;
  std::optional<Tensor> dlogits;
  std::int64_t ignore_index = -100;
  float label_smoothing = 0.0f;
  LossReduction reduction = LossReduction::mean;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("logits", c.logits, TensorRole::input);
    f("targets", c.targets, TensorRole::input);
    f("loss", c.loss, TensorRole::output);
    if (c.dlogits) f("dlogits", *c.dlogits, TensorRole::output);
  }
};

// Adds the rows of dy into dtable by id: dtable[ids[i], :] += dy[i, :] for
// every position i of ids (row-major). ids: i32/i64 of any shape; dy:
// ids.shape + [D]; dtable: [V, D], accumulated (its prior contents are the
// start, so gradient accumulation over micro-batches works), f32 or dy's
// dtype. Each table row sums its contributions in ascending position order
// in fp32, starting from its prior value, and is rounded once; rows no id
// names are left untouched. An id outside [0, V) is an error, raised before
// anything is written.
struct EmbeddingBackwardCall {
  Tensor ids, dy, dtable;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("ids", c.ids, TensorRole::input);
    f("dy", c.dy, TensorRole::input);
    f("dtable", c.dtable, TensorRole::accumulated);
  }
};

// One fused AdamW step (PyTorch's torch.optim.AdamW, decoupled weight decay),
// element-wise, at step t = step (>= 1):
//   m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
//   p = p (1 - lr wd) - (lr / (1 - beta1^t)) m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// The scalar factors (1 - beta^t, lr / ..., 1 / sqrt(...), 1 - lr wd, 1 -
// beta) are computed in fp64 once per call and rounded to fp32. m, v: f32
// (f64 with f64 param), accumulated. param and grad share a dtype. With
// master (an f32 copy of a 16-bit param, accumulated) the step updates master
// and writes param = master rounded once; param's prior value is not read.
struct AdamwCall {
  Tensor param, grad, m, v;
  std::optional<Tensor> master;
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.01f;
  std::int64_t step = 1;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("grad", c.grad, TensorRole::input);
    f("param", c.param, c.master ? TensorRole::output : TensorRole::accumulated);
    f("m", c.m, TensorRole::accumulated);
    f("v", c.v, TensorRole::accumulated);
    if (c.master) f("master", *c.master, TensorRole::accumulated);
  }
};

// y = sqrt(sum over the tensors, in list order, of sum x^2), for gradient
// clipping. Up to kMaxGlobalNormTensors tensors of any float dtype and shape;
// y: [] f32 (f64 when every x is f64). Each tensor's squares are summed in a
// fixed order (blocks of its logical elements), then the tensors in order.
inline constexpr std::size_t kMaxGlobalNormTensors = 64;
std::string_view global_norm_input_name(std::size_t i);  // "x0", "x1", ...
struct GlobalNormCall {
  std::vector<Tensor> xs;
  Tensor y;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    for (std::size_t i = 0; i < c.xs.size(); ++i) f(global_norm_input_name(i), c.xs[i], TensorRole::input);
    f("y", c.y, TensorRole::output);
  }
};

// The gradient of rope: dx = dy rotated back (by -pos * f_i), the transpose
// of the forward's rotation; options and shapes exactly as RopeCall with
// (dy, dx) in place of (x, y). Channels past rotary_dim are copied.
struct RopeBackwardCall {
  Tensor dy, positions, dx;
  float theta = 10000.0f;
  RopeStyle style = RopeStyle::neox;
  int rotary_dim = 0;  // normalised by ops/ (0 -> head_dim)
  std::optional<Tensor> inv_freq{};

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("dy", c.dy, TensorRole::input);
    f("positions", c.positions, TensorRole::input);
    if (c.inv_freq) f("inv_freq", *c.inv_freq, TensorRole::input);
    f("dx", c.dx, TensorRole::output);
  }
};

// The gradient of attention (AttentionCall, same scale, causal mask and
// grouped-query heads) from its inputs q, k, v, its output y, the row
// log-sum-exp lse it wrote and dy = dL/dy:
//   P = exp(scale * Q K^T + mask - lse)   (recomputed per tile)
//   D_i = sum_c dy_ic y_ic
//   dV = P^T dY;  dS = P * (dY V^T - D);  dQ = scale dS K;  dK = scale dS^T Q
// q, dq: [b, sq, hq, d]; k, dk: [b, sk, hkv, d]; v, dv: [b, sk, hkv, dv];
// y, dy: [b, sq, hq, dv]; lse: [b, sq, hq] f32 (f64 with f64 q); every other
// tensor of q's dtype. The [sq, sk] matrix is never stored. Sums run in fixed
// orders: dk and dv of a key over the query heads of its kv head in
// ascending order, each over its queries in ascending order; dq of a query
// over the keys in ascending order; the same bits for any thread count. A
// masked key contributes nothing; a query with no unmasked key gets dq = 0.
struct AttentionBackwardCall {
  Tensor q, k, v, y, dy, lse, dq, dk, dv;
  float scale = 0.0f;  // normalised by ops/ (0 -> 1/sqrt(d))
  bool causal = false;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("q", c.q, TensorRole::input);
    f("k", c.k, TensorRole::input);
    f("v", c.v, TensorRole::input);
    f("y", c.y, TensorRole::input);
    f("dy", c.dy, TensorRole::input);
    f("lse", c.lse, TensorRole::input);
    f("dq", c.dq, TensorRole::output);
    f("dk", c.dk, TensorRole::output);
    f("dv", c.dv, TensorRole::output);
  }
};

std::string_view to_string(LossReduction v);
// "silu_backward", ...; "unary_backward" for a kind that has no backward op.
std::string_view unary_backward_name(UnaryKind v);

}  // namespace hal
