#pragma once
// Validation of the training ops (hal/op_training.h), private to ops/; the
// same checks and messages as the forward ops' (validate_util.h).
#include "hal/op.h"

namespace hal::ops::detail {

SoftmaxBackwardCall validate_softmax_backward(const SoftmaxBackwardCall& c);
NormBackwardCall validate_norm_backward(const NormBackwardCall& c);
UnaryBackwardCall validate_unary_backward(const UnaryBackwardCall& c);
SwigluBackwardCall validate_swiglu_backward(const SwigluBackwardCall& c);
CrossEntropyCall validate_cross_entropy(const CrossEntropyCall& c);
EmbeddingBackwardCall validate_embedding_backward(const EmbeddingBackwardCall& c);
AdamwCall validate_adamw(const AdamwCall& c);
GlobalNormCall validate_global_norm(const GlobalNormCall& c);
RopeBackwardCall validate_rope_backward(const RopeBackwardCall& c);
AttentionBackwardCall validate_attention_backward(const AttentionBackwardCall& c);

}  // namespace hal::ops::detail
