// Entry point of op validation: dispatches each op call to its family's
// checks (ops/validate_<family>.cpp), which return it with defaults resolved.
#include "hal/error.h"
#include "ops/ops.h"
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
  };
  return std::visit(Validator{}, call);
}

}  // namespace hal::ops
