#pragma once
// The op calls a backend executes: plain data (tensor views and attributes),
// built and validated by ops/ and handed to Device::execute().
//
// Semantics shared by every op: inputs of 16- and 8-bit dtypes are widened,
// arithmetic is done in fp32 (fp64 for f64 tensors on the CPU), and each
// output element is rounded once to its dtype (round to nearest even; fp8
// saturating). Outputs never alias inputs except gemm's C (read for beta).
//
// Each call struct lists its tensors in a static each_tensor(call, f): f(name,
// tensor, role) for every tensor, inputs first, then outputs, in a fixed order
// (see for_each_tensor at the end of this file).
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>
#include <variant>

#include "hal/tensor.h"

namespace hal {

enum class Activation { none, relu, gelu_tanh, silu };
enum class BinaryKind { add, sub, mul, div, maximum, minimum };
enum class UnaryKind { neg, abs, exp, log, sqrt, rsqrt, tanh, sigmoid, relu, gelu, gelu_tanh, silu };
enum class ReduceKind { sum, mean, max, min, argmax };
enum class RopeStyle { neox, gptj };  // neox: pairs (i, i + rotary_dim/2); gptj: pairs (2i, 2i+1)
enum class RandomDistribution { uniform, normal };

// How an op call uses each of its tensors; see for_each_tensor() below.
enum class TensorRole {
  input,        // read only
  output,       // written only: its prior contents do not matter
  accumulated,  // read and written (gemm's C when beta != 0)
};

// C = act(alpha * op(A) @ op(B) + beta * C + bias)
// A: [M, K] ([K, M] when trans_a), optionally with a leading batch dim; same for
// B: [K, N] ([N, K] when trans_b). C: [M, N] or [batch, M, N]. A batch stride of
// 0 broadcasts that operand over the batch. bias: [N], same dtype as C.
struct GemmCall {
  Tensor a, b, c;
  std::optional<Tensor> bias;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 0.0f;
  Activation activation = Activation::none;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("a", c.a, TensorRole::input);
    f("b", c.b, TensorRole::input);
    if (c.bias) f("bias", *c.bias, TensorRole::input);
    f("c", c.c, c.beta != 0.0f ? TensorRole::accumulated : TensorRole::output);
  }
};

// y = a (op) b with NumPy broadcasting; a, b, y share one dtype; y has the
// broadcast shape (a, b are passed with their own shapes and strides).
struct BinaryCall {
  BinaryKind kind;
  Tensor a, b, y;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("a", c.a, TensorRole::input);
    f("b", c.b, TensorRole::input);
    f("y", c.y, TensorRole::output);
  }
};

struct UnaryCall {
  UnaryKind kind;
  Tensor x, y;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("x", c.x, TensorRole::input);
    f("y", c.y, TensorRole::output);
  }
};

// y = silu(gate) * up
struct SwigluCall {
  Tensor gate, up, y;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("gate", c.gate, TensorRole::input);
    f("up", c.up, TensorRole::input);
    f("y", c.y, TensorRole::output);
  }
};

// Reduces `axis` of x. y's shape is x's without that axis (or with it set to 1
// when keepdim). argmax writes i64 indices (first maximum; NaN counts as max).
struct ReduceCall {
  ReduceKind kind;
  Tensor x, y;
  int axis = -1;  // normalised (>= 0) by ops/
  bool keepdim = false;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("x", c.x, TensorRole::input);
    f("y", c.y, TensorRole::output);
  }
};

// Over the last axis: y = softmax(scale * x + mask) (or log_softmax). With
// causal, x is [..., Lq, Lk] and key j is masked for query i when
// j > i + (Lk - Lq). A fully masked row gives zeros (softmax) / -inf (log).
struct SoftmaxCall {
  Tensor x, y;
  float scale = 1.0f;
  bool causal = false;
  bool log = false;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("x", c.x, TensorRole::input);
    f("y", c.y, TensorRole::output);
  }
};

// Over the last axis. layernorm: (x - mean) / sqrt(var + eps) * weight + bias.
// rmsnorm: x / sqrt(mean(x^2) + eps) * weight. weight/bias: [D], x's dtype.
struct NormCall {
  Tensor x, weight;
  std::optional<Tensor> bias;  // layernorm only
  Tensor y;
  float eps = 1e-5f;
  bool rms = false;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("x", c.x, TensorRole::input);
    f("weight", c.weight, TensorRole::input);
    if (c.bias) f("bias", *c.bias, TensorRole::input);
    f("y", c.y, TensorRole::output);
  }
};

// x, y: [batch, seq, heads, head_dim]; positions: i32 [batch, seq] or [seq].
// Rotates pair i of the first rotary_dim channels by angle pos * f_i with
// f_i = theta^(-2i/rotary_dim), or f_i = inv_freq[i] when inv_freq is given
// ([rotary_dim / 2], f32; f64 with f64 x): frequencies a scaling scheme has
// already adjusted (Llama 3's rope_scaling, linear scaling), so that no
// kernel needs to know the scheme.
struct RopeCall {
  Tensor x, positions, y;
  float theta = 10000.0f;
  RopeStyle style = RopeStyle::neox;
  int rotary_dim = 0;  // normalised by ops/ (0 -> head_dim)
  std::optional<Tensor> inv_freq{};

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("x", c.x, TensorRole::input);
    f("positions", c.positions, TensorRole::input);
    if (c.inv_freq) f("inv_freq", *c.inv_freq, TensorRole::input);
    f("y", c.y, TensorRole::output);
  }
};

// y = convert(x * scale); any float dtype to any float dtype.
struct CastCall {
  Tensor x, y;
  float scale = 1.0f;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("x", c.x, TensorRole::input);
    f("y", c.y, TensorRole::output);
  }
};

// y[i, :] = table[ids[i], :]; ids i32/i64 of any shape; y: ids.shape + [dim].
struct EmbeddingCall {
  Tensor table, ids, y;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("table", c.table, TensorRole::input);
    f("ids", c.ids, TensorRole::input);
    f("y", c.y, TensorRole::output);
  }
};

// y = softmax(scale * Q K^T + causal mask) V, grouped-query: query head h uses
// kv head h / (hq / hkv). Q [b, sq, hq, d], K [b, sk, hkv, d], V [b, sk, hkv, dv],
// y [b, sq, hq, dv]. Causal mask as in SoftmaxCall with Lq = sq, Lk = sk.
// lse (optional, f32 (f64 with f64 q), [b, sq, hq]: q's shape without its
// last axis) is each row's natural log-sum-exp of its scaled, unmasked
// scores, what attention_backward recomputes the probabilities from; -inf for
// a query with no unmasked key (or whose scores are all -inf), NaN when a
// score is NaN. Writing it does not change y's bits.
struct AttentionCall {
  Tensor q, k, v, y;
  float scale = 0.0f;  // normalised by ops/ (0 -> 1/sqrt(d))
  bool causal = false;
  std::optional<Tensor> lse{};

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("q", c.q, TensorRole::input);
    f("k", c.k, TensorRole::input);
    f("v", c.v, TensorRole::input);
    f("y", c.y, TensorRole::output);
    if (c.lse) f("lse", *c.lse, TensorRole::output);
  }
};

// y = x element for element (any strides, e.g. a permuted view, into y).
struct CopyCall {
  Tensor x, y;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("x", c.x, TensorRole::input);
    f("y", c.y, TensorRole::output);
  }
};

// Philox4x32-10 counter-based random numbers: element i (row-major logical
// index) depends only on (seed, i), so every backend produces identical bits.
// uniform: [a, b); normal: mean a, standard deviation b.
struct FillRandomCall {
  Tensor y;
  std::uint64_t seed = 0;
  RandomDistribution distribution = RandomDistribution::uniform;
  float a = 0.0f, b = 1.0f;

  template <class Self, class F> static void each_tensor(Self& c, F&& f) {
    f("y", c.y, TensorRole::output);
  }
};

}  // namespace hal

// The scaled-FP8 calls (quantize_fp8, dequantize_fp8, gemm_fp8,
// gemm_fp8_grouped); they use Activation and TensorRole from above.
#include "hal/op_fp8.h"
// The training calls (backward ops, losses, optimizer steps).
#include "hal/op_training.h"

namespace hal {

using OpCall = std::variant<GemmCall, BinaryCall, UnaryCall, SwigluCall, ReduceCall, SoftmaxCall,
                            NormCall, RopeCall, CastCall, EmbeddingCall, AttentionCall, CopyCall,
                            FillRandomCall,
                            QuantizeFp8Call, DequantizeFp8Call, GemmFp8Call, GemmFp8GroupedCall,
                            // training (hal/op_training.h)
                            SoftmaxBackwardCall, NormBackwardCall, UnaryBackwardCall, SwigluBackwardCall,
                            CrossEntropyCall, EmbeddingBackwardCall, AdamwCall, GlobalNormCall, RopeBackwardCall,
                            AttentionBackwardCall>;

// Calls f(std::string_view name, Tensor& tensor, TensorRole role) (const
// Tensor& for a const call) for every tensor of the call, inputs first, then
// the outputs in a fixed order; absent optional tensors are skipped. Generic
// code (the suite's oracle and guards, the bounds checks of views, the Python
// module) walks calls this way, so a new op needs only its own each_tensor().
template <class Call, class F>
  requires std::is_same_v<std::remove_const_t<Call>, OpCall>
void for_each_tensor(Call& call, F&& f) {
  std::visit([&](auto& c) { std::decay_t<decltype(c)>::each_tensor(c, f); }, call);
}

// Names used in errors, the CLI and the conformance suite.
std::string_view op_name(const OpCall& call);  // "gemm", "add", "exp", "rmsnorm", ...
std::string_view to_string(Activation v);
std::string_view to_string(BinaryKind v);
std::string_view to_string(UnaryKind v);
std::string_view to_string(ReduceKind v);
std::string_view to_string(RopeStyle v);
std::string_view to_string(RandomDistribution v);

}  // namespace hal
