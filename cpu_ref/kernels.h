#pragma once
// CPU reference kernels, parallelised with oneTBB.
//
// Each takes a validated op call (tensor views in host memory) and computes it
// in place. Compute precision: fp64 when the output dtype is f64 (the oracle of
// the conformance suite), fp32 otherwise; each output is rounded once.
// Deterministic: the result is bitwise the same for any number of threads,
// because work is split over outputs and every reduction has a fixed order.
#include "hal/op.h"

namespace hal::cpu_ref {

void gemm(const GemmCall& call);
void binary(const BinaryCall& call);
void unary(const UnaryCall& call);
void swiglu(const SwigluCall& call);
void reduce(const ReduceCall& call);
void softmax(const SoftmaxCall& call);
void norm(const NormCall& call);
void rope(const RopeCall& call);
void cast(const CastCall& call);
void embedding(const EmbeddingCall& call);
void attention(const AttentionCall& call);
void copy(const CopyCall& call);
void fill_random(const FillRandomCall& call);
void quantize_fp8(const QuantizeFp8Call& call);
void dequantize_fp8(const DequantizeFp8Call& call);
void gemm_fp8(const GemmFp8Call& call);                 // also the f64 oracle form
void gemm_fp8_grouped(const GemmFp8GroupedCall& call);  // checks the offsets before writing

// training (hal/op_training.h)
void softmax_backward(const SoftmaxBackwardCall& call);
void norm_backward(const NormBackwardCall& call);
void unary_backward(const UnaryBackwardCall& call);
void swiglu_backward(const SwigluBackwardCall& call);
void cross_entropy(const CrossEntropyCall& call);
void embedding_backward(const EmbeddingBackwardCall& call);
void adamw(const AdamwCall& call);
void global_norm(const GlobalNormCall& call);
void rope_backward(const RopeBackwardCall& call);
void attention_backward(const AttentionBackwardCall& call);

}  // namespace hal::cpu_ref
