#include "backends/cpu/cpu_device.h"

#include <fmt/format.h>

#include <cstdlib>
#include <new>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernel_call.h"
#include "cpu_ref/cpu_features.h"
#include "cpu_ref/gemm_fp8_kernel.h"
#include "cpu_ref/gemm_microkernel.h"
#include "backends/cpu/cpu_stream.h"
#include "cpu_ref/kernels.h"
#include "hal/error.h"

namespace hal::cpu {

CpuDevice::CpuDevice() {
  info_.name = "cpu";
  info_.backend = "cpu";
  info_.index = 0;
  const cpu_ref::CpuFeatures& f = cpu_ref::cpu_features();
  info_.model = f.brand;
  info_.arch = f.arch_string();
  info_.compute_units = f.hardware_threads;
  info_.memory_bytes = f.memory_bytes;
  info_.warp_size = 1;
  info_.l2_bytes = f.l2_bytes;
  info_.clock_mhz = f.clock_mhz;
  info_.peak_fp32_tflops = cpu_ref::nominal_fp32_tflops(f);
  info_.peak_bf16_tflops = cpu_ref::nominal_bf16_tflops(f);
  // peak_bandwidth_gbps stays 0 (unknown): no portable source gives the
  // memory's nominal rate; hal bench measures a copy ceiling instead.
  info_.features = f.feature_list();
  info_.kernels = {{"gemm f32", cpu_ref::gemm_microkernel_for(DType::f32, DType::f32).name},
                   {"gemm bf16", cpu_ref::gemm_microkernel_for(DType::bf16, DType::bf16).name}};
  const cpu_ref::Fp8GemmPath fp8 = cpu_ref::selected_fp8_gemm_path();
  info_.kernels.emplace_back("gemm_fp8", fp8.kernel ? fp8.kernel->name : "block dots");
}

void* CpuDevice::allocate(std::size_t bytes) {
  constexpr std::size_t kAlign = 256;
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
  void* p = std::aligned_alloc(kAlign, rounded);
  if (!p) throw Error(ErrorCode::out_of_memory, fmt::format("cpu: allocation of {} bytes failed", bytes));
  return p;
}

void CpuDevice::deallocate(void* ptr) noexcept { std::free(ptr); }

std::unique_ptr<StreamImpl> CpuDevice::create_stream() { return std::make_unique<CpuStream>(); }
std::unique_ptr<EventImpl> CpuDevice::create_event() { return std::make_unique<CpuEvent>(); }

Support CpuDevice::supports(const OpCall&) const { return {}; }

void CpuDevice::execute(StreamImpl& stream, const OpCall& call) {
  struct Run {
    void operator()(const GemmCall& c) const { cpu_ref::gemm(c); }
    void operator()(const BinaryCall& c) const { cpu_ref::binary(c); }
    void operator()(const UnaryCall& c) const { cpu_ref::unary(c); }
    void operator()(const SwigluCall& c) const { cpu_ref::swiglu(c); }
    void operator()(const ReduceCall& c) const { cpu_ref::reduce(c); }
    void operator()(const SoftmaxCall& c) const { cpu_ref::softmax(c); }
    void operator()(const NormCall& c) const { cpu_ref::norm(c); }
    void operator()(const RopeCall& c) const { cpu_ref::rope(c); }
    void operator()(const CastCall& c) const { cpu_ref::cast(c); }
    void operator()(const EmbeddingCall& c) const { cpu_ref::embedding(c); }
    void operator()(const AttentionCall& c) const { cpu_ref::attention(c); }
    void operator()(const CopyCall& c) const { cpu_ref::copy(c); }
    void operator()(const FillRandomCall& c) const { cpu_ref::fill_random(c); }
    void operator()(const QuantizeFp8Call& c) const { cpu_ref::quantize_fp8(c); }
    void operator()(const DequantizeFp8Call& c) const { cpu_ref::dequantize_fp8(c); }
    void operator()(const GemmFp8Call& c) const { cpu_ref::gemm_fp8(c); }
    void operator()(const GemmFp8GroupedCall& c) const { cpu_ref::gemm_fp8_grouped(c); }
    // training (hal/op_training.h)
    void operator()(const SoftmaxBackwardCall& c) const { cpu_ref::softmax_backward(c); }
    void operator()(const NormBackwardCall& c) const { cpu_ref::norm_backward(c); }
    void operator()(const UnaryBackwardCall& c) const { cpu_ref::unary_backward(c); }
    void operator()(const SwigluBackwardCall& c) const { cpu_ref::swiglu_backward(c); }
    void operator()(const CrossEntropyCall& c) const { cpu_ref::cross_entropy(c); }
    void operator()(const EmbeddingBackwardCall& c) const { cpu_ref::embedding_backward(c); }
    void operator()(const AdamwCall& c) const { cpu_ref::adamw(c); }
    void operator()(const GlobalNormCall& c) const { cpu_ref::global_norm(c); }
    void operator()(const RopeBackwardCall& c) const { cpu_ref::rope_backward(c); }
    void operator()(const AttentionBackwardCall& c) const { cpu_ref::attention_backward(c); }
  };
  const std::optional<OpCall> kernel_call = prepare_kernel_call(call);
  if (!kernel_call) return;
  // A partition's stream: the op's parallel loops get that arena's threads.
  if (auto* cpu_stream = dynamic_cast<CpuStream*>(&stream); cpu_stream && cpu_stream->arena())
    cpu_stream->arena()->execute([&] { std::visit(Run{}, *kernel_call); });
  else
    std::visit(Run{}, *kernel_call);
}

BackendProbe probe() {
  BackendProbe p;
  p.status.name = "cpu";
  p.status.available = true;
  p.devices.push_back(std::make_unique<CpuDevice>());
  return p;
}

}  // namespace hal::cpu
