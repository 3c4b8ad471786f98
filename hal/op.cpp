#include "hal/op.h"

namespace hal {

std::string_view to_string(Activation v) {
  switch (v) {
    case Activation::none: return "none";
    case Activation::relu: return "relu";
    case Activation::gelu_tanh: return "gelu_tanh";
    case Activation::silu: return "silu";
  }
  return "?";
}

std::string_view to_string(BinaryKind v) {
  switch (v) {
    case BinaryKind::add: return "add";
    case BinaryKind::sub: return "sub";
    case BinaryKind::mul: return "mul";
    case BinaryKind::div: return "div";
    case BinaryKind::maximum: return "maximum";
    case BinaryKind::minimum: return "minimum";
  }
  return "?";
}

std::string_view to_string(UnaryKind v) {
  switch (v) {
    case UnaryKind::neg: return "neg";
    case UnaryKind::abs: return "abs";
    case UnaryKind::exp: return "exp";
    case UnaryKind::log: return "log";
    case UnaryKind::sqrt: return "sqrt";
    case UnaryKind::rsqrt: return "rsqrt";
    case UnaryKind::tanh: return "tanh";
    case UnaryKind::sigmoid: return "sigmoid";
    case UnaryKind::relu: return "relu";
    case UnaryKind::gelu: return "gelu";
    case UnaryKind::gelu_tanh: return "gelu_tanh";
    case UnaryKind::silu: return "silu";
  }
  return "?";
}

std::string_view to_string(ReduceKind v) {
  switch (v) {
    case ReduceKind::sum: return "sum";
    case ReduceKind::mean: return "mean";
    case ReduceKind::max: return "max";
    case ReduceKind::min: return "min";
    case ReduceKind::argmax: return "argmax";
  }
  return "?";
}

std::string_view to_string(RopeStyle v) { return v == RopeStyle::neox ? "neox" : "gptj"; }
std::string_view to_string(RandomDistribution v) { return v == RandomDistribution::uniform ? "uniform" : "normal"; }

std::string_view to_string(Fp8Block v) {
  switch (v) {
    case Fp8Block::row_1x128: return "1x128";
    case Fp8Block::block_128x128: return "128x128";
    case Fp8Block::tensor: return "tensor";
  }
  return "?";
}

std::string_view op_name(const OpCall& call) {
  struct Namer {
    std::string_view operator()(const GemmCall&) const { return "gemm"; }
    std::string_view operator()(const BinaryCall& c) const { return to_string(c.kind); }
    std::string_view operator()(const UnaryCall& c) const { return to_string(c.kind); }
    std::string_view operator()(const SwigluCall&) const { return "swiglu"; }
    std::string_view operator()(const ReduceCall& c) const { return to_string(c.kind); }
    std::string_view operator()(const SoftmaxCall& c) const { return c.log ? "log_softmax" : "softmax"; }
    std::string_view operator()(const NormCall& c) const { return c.rms ? "rmsnorm" : "layernorm"; }
    std::string_view operator()(const RopeCall&) const { return "rope"; }
    std::string_view operator()(const CastCall&) const { return "cast"; }
    std::string_view operator()(const EmbeddingCall&) const { return "embedding"; }
    std::string_view operator()(const AttentionCall&) const { return "attention"; }
    std::string_view operator()(const CopyCall&) const { return "copy"; }
    std::string_view operator()(const FillRandomCall&) const { return "fill_random"; }
    std::string_view operator()(const QuantizeFp8Call&) const { return "quantize_fp8"; }
    std::string_view operator()(const DequantizeFp8Call&) const { return "dequantize_fp8"; }
    std::string_view operator()(const GemmFp8Call&) const { return "gemm_fp8"; }
    std::string_view operator()(const GemmFp8GroupedCall&) const { return "gemm_fp8_grouped"; }
    // training (hal/op_training.h)
    std::string_view operator()(const SoftmaxBackwardCall& c) const {
      return c.log ? "log_softmax_backward" : "softmax_backward";
    }
    std::string_view operator()(const NormBackwardCall& c) const {
      return c.rms ? "rmsnorm_backward" : "layernorm_backward";
    }
    std::string_view operator()(const UnaryBackwardCall& c) const { return unary_backward_name(c.kind); }
    std::string_view operator()(const SwigluBackwardCall&) const { return "swiglu_backward"; }
    std::string_view operator()(const CrossEntropyCall&) const { return "cross_entropy"; }
    std::string_view operator()(const EmbeddingBackwardCall&) const { return "embedding_backward"; }
    std::string_view operator()(const AdamwCall&) const { return "adamw_step"; }
    std::string_view operator()(const GlobalNormCall&) const { return "global_norm"; }
    std::string_view operator()(const RopeBackwardCall&) const { return "rope_backward"; }
    std::string_view operator()(const AttentionBackwardCall&) const { return "attention_backward"; }
  };
  return std::visit(Namer{}, call);
}

}  // namespace hal
