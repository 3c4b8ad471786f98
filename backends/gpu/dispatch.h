#pragma once
// Device::execute of both GPU backends: the stream must be the device's own,
// the call one its kernels implement; then each op call goes to the
// backend's launcher of its family (cuda_ops.h, hip_ops.h). The launchers
// are found by argument-dependent lookup on the backend's stream type
// (run_gemm(CudaStream&, ...) lives in hal::cuda), so this one table serves
// both and a new op is added in one place.
#include <fmt/format.h>

#include <type_traits>
#include <variant>

#include "hal/device.h"
#include "hal/error.h"
#include "hal/op.h"
#include "backends/gpu/support.h"

namespace hal::gpu {

template <class Stream> void run_op(Stream& s, const OpCall& call) {
  std::visit(
      [&](const auto& c) {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, GemmCall>) run_gemm(s, c);
        else if constexpr (std::is_same_v<T, AttentionCall>) run_attention(s, c);
        else if constexpr (std::is_same_v<T, ReduceCall>) run_reduce(s, c);
        else if constexpr (std::is_same_v<T, SoftmaxCall>) run_softmax(s, c);
        else if constexpr (std::is_same_v<T, NormCall>) run_norm(s, c);
        else if constexpr (std::is_same_v<T, RopeCall>) run_rope(s, c);
        else if constexpr (std::is_same_v<T, BinaryCall>) run_binary(s, c);
        else if constexpr (std::is_same_v<T, UnaryCall>) run_unary(s, c);
        else if constexpr (std::is_same_v<T, SwigluCall>) run_swiglu(s, c);
        else if constexpr (std::is_same_v<T, CastCall>) run_cast(s, c);
        else if constexpr (std::is_same_v<T, CopyCall>) run_copy(s, c);
        else if constexpr (std::is_same_v<T, EmbeddingCall>) run_embedding(s, c);
        else if constexpr (std::is_same_v<T, FillRandomCall>) run_fill_random(s, c);
        else if constexpr (std::is_same_v<T, UnaryBackwardCall>) run_unary_backward(s, c);
        else if constexpr (std::is_same_v<T, SwigluBackwardCall>) run_swiglu_backward(s, c);
        else if constexpr (std::is_same_v<T, SoftmaxBackwardCall>) run_softmax_backward(s, c);
        else if constexpr (std::is_same_v<T, NormBackwardCall>) run_norm_backward(s, c);
        else if constexpr (std::is_same_v<T, RopeBackwardCall>) run_rope_backward(s, c);
        else if constexpr (std::is_same_v<T, AdamwCall>) run_adamw(s, c);
        else if constexpr (std::is_same_v<T, GlobalNormCall>) run_global_norm(s, c);
        else if constexpr (std::is_same_v<T, CrossEntropyCall>) run_cross_entropy(s, c);
        else if constexpr (std::is_same_v<T, EmbeddingBackwardCall>) run_embedding_backward(s, c);
        else if constexpr (std::is_same_v<T, AttentionBackwardCall>) run_attention_backward(s, c);
        else if constexpr (std::is_same_v<T, QuantizeFp8Call>) run_quantize_fp8(s, c);
        else if constexpr (std::is_same_v<T, DequantizeFp8Call>) run_dequantize_fp8(s, c);
        else if constexpr (std::is_same_v<T, GemmFp8Call>) run_gemm_fp8(s, c);
        else if constexpr (std::is_same_v<T, GemmFp8GroupedCall>) run_gemm_fp8_grouped(s, c);
        else if constexpr (gpu_lacks_kernel_v<T>)
          throw Error(ErrorCode::unsupported, fmt::format("{} has no GPU kernel yet", op_name(call)));
        else static_assert(!sizeof(T), "an op call without a GPU launcher");
      },
      call);
}

// The whole of Device::execute for a GPU device `dev` whose streams are Stream.
template <class Stream, class GpuDevice> void execute(GpuDevice& dev, StreamImpl& stream, const OpCall& call) {
  auto* s = dynamic_cast<Stream*>(&stream);
  if (s == nullptr || &s->device() != &dev)
    throw_invalid_argument(op_name(call), "stream", fmt::format("a stream of {}", dev.info().name),
                           "another device's stream");
  const Support sup = dev.supports(call);
  if (!sup.ok) throw Error(ErrorCode::unsupported, sup.reason);
  dev.make_current();
  run_op(*s, call);
}

}  // namespace hal::gpu
