// Entry point of op validation: dispatches each op call to its family's
// checks (ops/validate_<family>.cpp), which return it with defaults resolved.
#include "hal/error.h"
#include "ops/ops.h"
#include "ops/validate_training.h"
#include "ops/validate_util.h"

namespace hal::ops {

OpCall validate(const OpCall& call) {
  using namespace detail;
  struct Validator {
    OpCall operator()(const GemmCall& c) const { return validate_gemm(c); }
    OpCall operator()(const BinaryCall& c) const { return validate_binary(c); }
    OpCall operator()(const UnaryCall& c) const { return validate_unary(c); }
    OpCall operator()(const SwigluCall& c) const { return validate_swiglu(c); }
    OpCall operator()(const ReduceCall& c) const { return validate_reduce(c); }
    OpCall operator()(const SoftmaxCall& c) const { return validate_softmax(c); }
    OpCall operator()(const NormCall& c) const { return validate_norm(c); }
    OpCall operator()(const RopeCall& c) const { return validate_rope(c); }
    OpCall operator()(const CastCall& c) const { return validate_cast(c); }
    OpCall operator()(const EmbeddingCall& c) const { return validate_embedding(c); }
    OpCall operator()(const AttentionCall& c) const { return validate_attention(c); }
    OpCall operator()(const CopyCall& c) const { return validate_copy(c); }
    OpCall operator()(const FillRandomCall& c) const { return validate_fill_random(c); }
    OpCall operator()(const QuantizeFp8Call& c) const { return validate_quantize_fp8(c); }
    OpCall operator()(const DequantizeFp8Call& c) const { return validate_dequantize_fp8(c); }
    OpCall operator()(const GemmFp8Call& c) const { return validate_gemm_fp8(c); }
    OpCall operator()(const GemmFp8GroupedCall& c) const { return validate_gemm_fp8_grouped(c); }
    // training (ops/validate_training.cpp)
    OpCall operator()(const SoftmaxBackwardCall& c) const { return validate_softmax_backward(c); }
    OpCall operator()(const NormBackwardCall& c) const { return validate_norm_backward(c); }
    OpCall operator()(const UnaryBackwardCall& c) const { return validate_unary_backward(c); }
    OpCall operator()(const SwigluBackwardCall& c) const { return validate_swiglu_backward(c); }
    OpCall operator()(const CrossEntropyCall& c) const { return validate_cross_entropy(c); }
    OpCall operator()(const EmbeddingBackwardCall& c) const { return validate_embedding_backward(c); }
    OpCall operator()(const AdamwCall& c) const { return validate_adamw(c); }
    OpCall operator()(const GlobalNormCall& c) const { return validate_global_norm(c); }
    OpCall operator()(const RopeBackwardCall& c) const { return validate_rope_backward(c); }
    OpCall operator()(const AttentionBackwardCall& c) const { return validate_attention_backward(c); }
  };
  return std::visit(Validator{}, call);
}

}  // namespace hal::ops
