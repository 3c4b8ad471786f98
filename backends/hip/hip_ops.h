#pragma once
// Host launchers of the HIP kernels, one file per op family
// (backends/hip/hip_<family>.cpp). Each receives a call validated by ops/
// and picks the kernel (fast path or general fallback) and launch geometry.
#include <string_view>

#include "hal/device.h"
#include "hal/op.h"
#include "backends/hip/hip_launch.h"
#include "kernel_params/attention.h"

namespace hal::hip {

class HipStream;

void run_gemm(HipStream& s, const GemmCall& call);
void run_attention(HipStream& s, const AttentionCall& call);
void run_reduce(HipStream& s, const ReduceCall& call);
void run_softmax(HipStream& s, const SoftmaxCall& call);
void run_norm(HipStream& s, const NormCall& call);
void run_rope(HipStream& s, const RopeCall& call);

void run_binary(HipStream& s, const BinaryCall& call);
void run_unary(HipStream& s, const UnaryCall& call);
void run_swiglu(HipStream& s, const SwigluCall& call);
void run_cast(HipStream& s, const CastCall& call);
void run_copy(HipStream& s, const CopyCall& call);
void run_embedding(HipStream& s, const EmbeddingCall& call);
void run_fill_random(HipStream& s, const FillRandomCall& call);

// Training ops (backends/<vendor>/<vendor>_training.cpp over backends/gpu/training_launcher.h).
void run_unary_backward(HipStream& s, const UnaryBackwardCall& call);
void run_swiglu_backward(HipStream& s, const SwigluBackwardCall& call);
void run_softmax_backward(HipStream& s, const SoftmaxBackwardCall& call);
void run_norm_backward(HipStream& s, const NormBackwardCall& call);
void run_rope_backward(HipStream& s, const RopeBackwardCall& call);
void run_adamw(HipStream& s, const AdamwCall& call);
void run_global_norm(HipStream& s, const GlobalNormCall& call);
void run_cross_entropy(HipStream& s, const CrossEntropyCall& call);
void run_embedding_backward(HipStream& s, const EmbeddingBackwardCall& call);
void run_attention_backward(HipStream& s, const AttentionBackwardCall& call);

// False when `path` is listed in $HAL_HIP_DISABLE (comma-separated; "all"
// disables every fast path): flash, attention_bwd_mfma (hip_attention.cpp).
bool hip_path_enabled(std::string_view path);
// Scaled FP8 (hip_fp8.cpp).
void run_quantize_fp8(HipStream& s, const QuantizeFp8Call& call);
void run_dequantize_fp8(HipStream& s, const DequantizeFp8Call& call);
void run_gemm_fp8(HipStream& s, const GemmFp8Call& call);
void run_gemm_fp8_grouped(HipStream& s, const GemmFp8GroupedCall& call);

// The attention kernel a call runs on (kernel == nullptr: nothing to do),
// its geometry and arguments: attention_flash_* when the call qualifies
// (hip_attention.cpp) and `flash_enabled`, attention_general otherwise.
// Exposed for the host-side tests.
struct AttentionLaunch {
  const char* kernel = nullptr;
  LaunchShape shape;
  kernel_params::AttentionParams params{};
};
AttentionLaunch attention_launch(const AttentionCall& call, const HipDeviceCaps& caps, bool flash_enabled);

// Which calls the HIP kernels implement (dtype combinations); the reason
// names backend, op and dtype when they do not.
Support supports_call(const OpCall& call);

}  // namespace hal::hip
