// The public op functions: build the op call, then validate and dispatch.
#include "ops/ops.h"

#include <fmt/format.h>

#include "hal/bounds_check.h"
#include "hal/error.h"

namespace hal::ops {

namespace {

// Collects pointers to every tensor of a call, for the device checks.
std::vector<const Tensor*> tensors_of(const OpCall& call) {
  std::vector<const Tensor*> out;
  std::visit(
      [&](const auto& c) {
        using C = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<C, GemmCall>) {
          out = {&c.a, &c.b, &c.c};
          if (c.bias) out.push_back(&*c.bias);
        } else if constexpr (std::is_same_v<C, BinaryCall>) {
          out = {&c.a, &c.b, &c.y};
        } else if constexpr (std::is_same_v<C, UnaryCall> || std::is_same_v<C, CastCall> ||
                             std::is_same_v<C, CopyCall> || std::is_same_v<C, SoftmaxCall> ||
                             std::is_same_v<C, ReduceCall>) {
          out = {&c.x, &c.y};
        } else if constexpr (std::is_same_v<C, SwigluCall>) {
          out = {&c.gate, &c.up, &c.y};
        } else if constexpr (std::is_same_v<C, NormCall>) {
          out = {&c.x, &c.weight, &c.y};
          if (c.bias) out.push_back(&*c.bias);
        } else if constexpr (std::is_same_v<C, RopeCall>) {
          out = {&c.x, &c.positions, &c.y};
          if (c.inv_freq) out.push_back(&*c.inv_freq);
        } else if constexpr (std::is_same_v<C, EmbeddingCall>) {
          out = {&c.table, &c.ids, &c.y};
        } else if constexpr (std::is_same_v<C, AttentionCall>) {
          out = {&c.q, &c.k, &c.v, &c.y};
          if (c.lse) out.push_back(&*c.lse);
        } else if constexpr (std::is_same_v<C, FillRandomCall>) {
          out = {&c.y};
        } else {
          // Every other call (fp8, training): the walk of hal/op.h.
          C::each_tensor(c, [&](std::string_view, const Tensor& t, TensorRole) { out.push_back(&t); });
        }
      },
      call);
  return out;
}

}  // namespace

Support supports(const Device& device, const OpCall& call) {
  OpCall checked;
  try {
    checked = validate(call);
  } catch (const Error& e) {
    return {false, e.what()};
  }
  for (const Tensor* t : tensors_of(checked)) {
    if (t->device != &device)
      return {false, fmt::format("{}: tensor {} is not on {}", op_name(call), t->str(), device.name())};
  }
  return device.supports(checked);
}

void run(Stream& stream, const OpCall& call) {
  const OpCall checked = validate(call);
  Device& dev = stream.device();
  for (const Tensor* t : tensors_of(checked)) {
    if (t->device != &dev)
      throw_invalid_argument(op_name(call), "tensor", fmt::format("a tensor on the stream's device {}", dev.name()),
                             t->str());
  }
  validate_op_bounds(checked);  // the validation layer: every view inside a live allocation
  const Support s = dev.supports(checked);
  if (!s.ok) throw Error(ErrorCode::unsupported, s.reason);
  dev.execute(stream.impl(), checked);
}

void gemm(Stream& s, const Tensor& a, const Tensor& b, const Tensor& c, const GemmOptions& o) {
  run(s, GemmCall{a, b, c, o.bias, o.trans_a, o.trans_b, o.alpha, o.beta, o.activation});
}

void binary(Stream& s, BinaryKind kind, const Tensor& a, const Tensor& b, const Tensor& y) {
  run(s, BinaryCall{kind, a, b, y});
}
void add(Stream& s, const Tensor& a, const Tensor& b, const Tensor& y) { binary(s, BinaryKind::add, a, b, y); }
void sub(Stream& s, const Tensor& a, const Tensor& b, const Tensor& y) { binary(s, BinaryKind::sub, a, b, y); }
void mul(Stream& s, const Tensor& a, const Tensor& b, const Tensor& y) { binary(s, BinaryKind::mul, a, b, y); }
void div(Stream& s, const Tensor& a, const Tensor& b, const Tensor& y) { binary(s, BinaryKind::div, a, b, y); }
void maximum(Stream& s, const Tensor& a, const Tensor& b, const Tensor& y) { binary(s, BinaryKind::maximum, a, b, y); }
void minimum(Stream& s, const Tensor& a, const Tensor& b, const Tensor& y) { binary(s, BinaryKind::minimum, a, b, y); }

void unary(Stream& s, UnaryKind kind, const Tensor& x, const Tensor& y) { run(s, UnaryCall{kind, x, y}); }
void neg(Stream& s, const Tensor& x, const Tensor& y) { unary(s, UnaryKind::neg, x, y); }
void abs(Stream& s, const Tensor& x, const Tensor& y) { unary(s, UnaryKind::abs, x, y); }
void exp(Stream& s, const Tensor& x, const Tensor& y) { unary(s, UnaryKind::exp, x, y); }
void log(Stream& s, const Tensor& x, const Tensor& y) { unary(s, UnaryKind::log, x, y); }
void sqrt(Stream& s, const Tensor& x, const Tensor& y) { unary(s, UnaryKind::sqrt, x, y); }
void rsqrt(Stream& s, const Tensor& x, const Tensor& y) { unary(s, UnaryKind::rsqrt, x, y); }
void tanh(Stream& s, const Tensor& x, const Tensor& y) { unary(s, UnaryKind::tanh, x, y); }
void sigmoid(Stream& s, const Tensor& x, const Tensor& y) { unary(s, UnaryKind::sigmoid, x, y); }
void relu(Stream& s, const Tensor& x, const Tensor& y) { unary(s, UnaryKind::relu, x, y); }
void gelu(Stream& s, const Tensor& x, const Tensor& y) { unary(s, UnaryKind::gelu, x, y); }
void gelu_tanh(Stream& s, const Tensor& x, const Tensor& y) { unary(s, UnaryKind::gelu_tanh, x, y); }
void silu(Stream& s, const Tensor& x, const Tensor& y) { unary(s, UnaryKind::silu, x, y); }
void swiglu(Stream& s, const Tensor& gate, const Tensor& up, const Tensor& y) { run(s, SwigluCall{gate, up, y}); }

void reduce(Stream& s, ReduceKind kind, const Tensor& x, const Tensor& y, const ReduceOptions& o) {
  run(s, ReduceCall{kind, x, y, o.axis, o.keepdim});
}
void sum(Stream& s, const Tensor& x, const Tensor& y, const ReduceOptions& o) { reduce(s, ReduceKind::sum, x, y, o); }
void mean(Stream& s, const Tensor& x, const Tensor& y, const ReduceOptions& o) { reduce(s, ReduceKind::mean, x, y, o); }
void max(Stream& s, const Tensor& x, const Tensor& y, const ReduceOptions& o) { reduce(s, ReduceKind::max, x, y, o); }
void min(Stream& s, const Tensor& x, const Tensor& y, const ReduceOptions& o) { reduce(s, ReduceKind::min, x, y, o); }
void argmax(Stream& s, const Tensor& x, const Tensor& y, const ReduceOptions& o) {
  reduce(s, ReduceKind::argmax, x, y, o);
}

static void check_softmax_axis(std::string_view op, const Tensor& x, int axis) {
  const int last = x.rank() - 1;
  if (x.rank() == 0 || normalize_axis(axis, x.rank(), op) != last)
    throw_invalid_argument(op, "axis", "the last axis (-1)", std::to_string(axis));
}
void softmax(Stream& s, const Tensor& x, const Tensor& y, const SoftmaxOptions& o) {
  check_softmax_axis("softmax", x, o.axis);
  run(s, SoftmaxCall{x, y, o.scale, o.causal, false});
}
void log_softmax(Stream& s, const Tensor& x, const Tensor& y, const SoftmaxOptions& o) {
  check_softmax_axis("log_softmax", x, o.axis);
  run(s, SoftmaxCall{x, y, o.scale, o.causal, true});
}

void layernorm(Stream& s, const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias, const Tensor& y,
               const NormOptions& o) {
  run(s, NormCall{x, weight, bias, y, o.eps, false});
}
void rmsnorm(Stream& s, const Tensor& x, const Tensor& weight, const Tensor& y, const NormOptions& o) {
  run(s, NormCall{x, weight, std::nullopt, y, o.eps, true});
}

void rope(Stream& s, const Tensor& x, const Tensor& positions, const Tensor& y, const RopeOptions& o) {
  run(s, RopeCall{x, positions, y, o.theta, o.style, o.rotary_dim, o.inv_freq});
}

void cast(Stream& s, const Tensor& x, const Tensor& y, const CastOptions& o) { run(s, CastCall{x, y, o.scale}); }
void embedding(Stream& s, const Tensor& table, const Tensor& ids, const Tensor& y) {
  run(s, EmbeddingCall{table, ids, y});
}
void attention(Stream& s, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& y,
               const AttentionOptions& o) {
  run(s, AttentionCall{q, k, v, y, o.scale, o.causal});
}
void copy(Stream& s, const Tensor& x, const Tensor& y) { run(s, CopyCall{x, y}); }
void fill_random(Stream& s, const Tensor& y, const RandomOptions& o) {
  run(s, FillRandomCall{y, o.seed, o.distribution, o.a, o.b});
}

void quantize_fp8(Stream& s, const Tensor& x, const Tensor& y, const Tensor& scales, const QuantizeFp8Options& o) {
  run(s, QuantizeFp8Call{x, y, scales, o.block, o.pow2_scales});
}
void dequantize_fp8(Stream& s, const Tensor& y, const Tensor& scales, const Tensor& x, const DequantizeFp8Options& o) {
  run(s, DequantizeFp8Call{y, scales, x, o.block});
}
void gemm_fp8(Stream& s, const Tensor& a, const Tensor& a_scales, const Tensor& b, const Tensor& b_scales,
              const Tensor& c, const Fp8Epilogue& e) {
  run(s, GemmFp8Call{a, a_scales, b, b_scales, c, e});
}
void gemm_fp8_grouped(Stream& s, const Tensor& a, const Tensor& a_scales, const Tensor& b, const Tensor& b_scales,
                      const Tensor& offsets, const Tensor& c, const Fp8Epilogue& e) {
  run(s, GemmFp8GroupedCall{a, a_scales, b, b_scales, offsets, c, e});
}

}  // namespace hal::ops
