#pragma once
// Host launchers of the CUDA kernels, one file per op family
// (backends/cuda/cuda_<family>.cpp). Each receives a call validated by ops/
// and picks the kernel (fast path or general fallback) and launch geometry.
#include "hal/device.h"
#include "hal/op.h"

namespace hal::cuda {

class CudaStream;

void run_gemm(CudaStream& s, const GemmCall& call);
void run_attention(CudaStream& s, const AttentionCall& call);
void run_reduce(CudaStream& s, const ReduceCall& call);
void run_softmax(CudaStream& s, const SoftmaxCall& call);
void run_norm(CudaStream& s, const NormCall& call);
void run_rope(CudaStream& s, const RopeCall& call);

void run_binary(CudaStream& s, const BinaryCall& call);
void run_unary(CudaStream& s, const UnaryCall& call);
void run_swiglu(CudaStream& s, const SwigluCall& call);
void run_cast(CudaStream& s, const CastCall& call);
void run_copy(CudaStream& s, const CopyCall& call);
void run_embedding(CudaStream& s, const EmbeddingCall& call);
void run_fill_random(CudaStream& s, const FillRandomCall& call);

// Training ops (backends/<vendor>/<vendor>_training.cpp over backends/gpu/training_launcher.h).
void run_unary_backward(CudaStream& s, const UnaryBackwardCall& call);
void run_swiglu_backward(CudaStream& s, const SwigluBackwardCall& call);
void run_softmax_backward(CudaStream& s, const SoftmaxBackwardCall& call);
void run_norm_backward(CudaStream& s, const NormBackwardCall& call);
void run_rope_backward(CudaStream& s, const RopeBackwardCall& call);
void run_adamw(CudaStream& s, const AdamwCall& call);
void run_global_norm(CudaStream& s, const GlobalNormCall& call);
void run_cross_entropy(CudaStream& s, const CrossEntropyCall& call);
void run_embedding_backward(CudaStream& s, const EmbeddingBackwardCall& call);
void run_attention_backward(CudaStream& s, const AttentionBackwardCall& call);
// Scaled FP8 (cuda_fp8.cpp).
void run_quantize_fp8(CudaStream& s, const QuantizeFp8Call& call);
void run_dequantize_fp8(CudaStream& s, const DequantizeFp8Call& call);
void run_gemm_fp8(CudaStream& s, const GemmFp8Call& call);
void run_gemm_fp8_grouped(CudaStream& s, const GemmFp8GroupedCall& call);

// Which calls the CUDA backend implements (dtype combinations); the reason
// names backend, op and dtype when it does not.
Support supports_call(const OpCall& call);

}  // namespace hal::cuda
