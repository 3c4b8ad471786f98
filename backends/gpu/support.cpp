// The dtype matrix of the GPU kernels (see support.h).
#include "backends/gpu/support.h"

#include "backends/gpu/unverified.h"

#include <fmt/format.h>

#include <variant>

namespace hal {

namespace {

bool is_compute_float(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }
// The FNUZ fp8 dtypes (f8e4m3fnuz, f8e5m2fnuz) are not in the kernels'
// element types, so every computing op declines them; copy and embedding
// move bytes and take them.
bool is_gpu_float(DType t) { return is_compute_float(t) || t == DType::f8e4m3 || t == DType::f8e5m2; }

Support no(std::string_view backend, const OpCall& call, DType t) {
  return Support{false, fmt::format("{}: {} is not supported for {}", backend, op_name(call), dtype_name(t))};
}

// The fp8 operand that names an fp8 call's format (f64 in the oracle form).
DType fp8_dtype_of(const QuantizeFp8Call& c) { return c.y.dtype; }
DType fp8_dtype_of(const DequantizeFp8Call& c) { return c.y.dtype; }
DType fp8_dtype_of(const GemmFp8Call& c) { return c.a.dtype; }
DType fp8_dtype_of(const GemmFp8GroupedCall& c) { return c.a.dtype; }
// Its wide operand (x, or c): f32/f16/bf16, f64 in the oracle form.
DType wide_dtype_of(const QuantizeFp8Call& c) { return c.x.dtype; }
DType wide_dtype_of(const DequantizeFp8Call& c) { return c.x.dtype; }
DType wide_dtype_of(const GemmFp8Call& c) { return c.c.dtype; }
DType wide_dtype_of(const GemmFp8GroupedCall& c) { return c.c.dtype; }

Support when(std::string_view backend, bool ok, const OpCall& call, DType t) { return ok ? Support{} : no(backend, call, t); }

// A dtype the kernel takes, and a kernel that has never run on a GPU: only
// with HAL_GPU_UNVERIFIED=1 (backends/gpu/unverified.h).
Support unverified(std::string_view backend, bool ok, const OpCall& call, DType t) {
  if (!ok) return no(backend, call, t);
  if (!gpu::unverified_kernels_enabled()) return gpu::unverified_kernel_declined(backend, call);
  return Support{};
}

// The training kernels read every float tensor through the f32/f16/bf16 paths.
Support training_support(std::string_view backend, const OpCall& call) {
  return std::visit(
      [&](const auto& c) -> Support {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, UnaryBackwardCall>) {
          return unverified(backend, is_compute_float(c.dx.dtype), call, c.dx.dtype);
        } else if constexpr (std::is_same_v<T, SwigluBackwardCall>) {
          return unverified(backend, is_compute_float(c.dup.dtype), call, c.dup.dtype);
        } else if constexpr (std::is_same_v<T, SoftmaxBackwardCall>) {
          return unverified(backend, is_compute_float(c.dx.dtype), call, c.dx.dtype);
        } else if constexpr (std::is_same_v<T, NormBackwardCall>) {
          return unverified(backend, is_compute_float(c.x.dtype), call, c.x.dtype);
        } else if constexpr (std::is_same_v<T, RopeBackwardCall>) {
          if (c.inv_freq && c.inv_freq->dtype != DType::f32) return no(backend, call, c.inv_freq->dtype);
          return unverified(backend, is_compute_float(c.dx.dtype), call, c.dx.dtype);
        } else if constexpr (std::is_same_v<T, AdamwCall>) {
          if (c.m.dtype != DType::f32) return no(backend, call, c.m.dtype);  // f64 moments: the oracle's
          return unverified(backend, is_compute_float(c.param.dtype), call, c.param.dtype);
        } else if constexpr (std::is_same_v<T, CrossEntropyCall>) {
          if (c.loss.dtype != DType::f32) return no(backend, call, c.loss.dtype);
          return unverified(backend, is_compute_float(c.logits.dtype), call, c.logits.dtype);
        } else if constexpr (std::is_same_v<T, AttentionBackwardCall>) {
          return unverified(backend, is_compute_float(c.q.dtype), call, c.q.dtype);  // lse: f32 (ops/ checks it)
        } else if constexpr (std::is_same_v<T, GlobalNormCall>) {
          for (const Tensor& x : c.xs)
            if (!is_compute_float(x.dtype)) return no(backend, call, x.dtype);
          return unverified(backend, c.y.dtype == DType::f32, call, c.y.dtype);
        } else if constexpr (std::is_same_v<T, EmbeddingBackwardCall>) {
          // dy f32/f16/bf16, dtable dy's dtype or f32 (ops/ checked the pair); f64 is the oracle's.
          if (!is_compute_float(c.dtable.dtype)) return no(backend, call, c.dtable.dtype);
          return unverified(backend, is_compute_float(c.dy.dtype), call, c.dy.dtype);
        } else {
          return no(backend, call, DType::f64);
        }
      },
      call);
}

}  // namespace

Support gpu_supports_call(std::string_view backend, const OpCall& call) {
  return std::visit(
      [&](const auto& c) -> Support {
        using T = std::decay_t<decltype(c)>;
        if constexpr (gpu_lacks_kernel_v<T>)
          return Support{false, fmt::format("{}: {} has no GPU kernel yet (it runs on the cpu device)", backend,
                                            op_name(call))};
        else if constexpr (std::is_same_v<T, UnaryBackwardCall> || std::is_same_v<T, SwigluBackwardCall> ||
                           std::is_same_v<T, SoftmaxBackwardCall> || std::is_same_v<T, NormBackwardCall> ||
                           std::is_same_v<T, RopeBackwardCall> || std::is_same_v<T, AdamwCall> ||
                           std::is_same_v<T, GlobalNormCall> || std::is_same_v<T, CrossEntropyCall> ||
                           std::is_same_v<T, EmbeddingBackwardCall> || std::is_same_v<T, AttentionBackwardCall>)
          return training_support(backend, call);
        else if constexpr (std::is_same_v<T, BinaryCall>) return when(backend, is_gpu_float(c.y.dtype), call, c.y.dtype);
        else if constexpr (std::is_same_v<T, UnaryCall>) return when(backend, is_gpu_float(c.y.dtype), call, c.y.dtype);
        else if constexpr (std::is_same_v<T, SwigluCall>) return when(backend, is_gpu_float(c.y.dtype), call, c.y.dtype);
        else if constexpr (std::is_same_v<T, CastCall>) {
          if (!is_gpu_float(c.x.dtype)) return no(backend, call, c.x.dtype);
          return when(backend, is_gpu_float(c.y.dtype), call, c.y.dtype);
        } else if constexpr (std::is_same_v<T, CopyCall>) {
          return when(backend, c.y.dtype != DType::f64 && dtype_size(c.y.dtype) <= 8, call, c.y.dtype);
        } else if constexpr (std::is_same_v<T, EmbeddingCall>) {
          return when(backend, c.table.dtype != DType::f64, call, c.table.dtype);
        } else if constexpr (std::is_same_v<T, FillRandomCall>) {
          return when(backend, is_gpu_float(c.y.dtype), call, c.y.dtype);
        } else if constexpr (std::is_same_v<T, GemmCall>) {
          return when(backend, is_compute_float(c.a.dtype) && c.a.dtype == c.b.dtype, call, c.a.dtype);
        } else if constexpr (std::is_same_v<T, AttentionCall>) {
          // The kernels' lse variants (f32 lse) never ran on a GPU.
          if (c.lse) {
            if (c.lse->dtype != DType::f32) return no(backend, call, c.lse->dtype);
            if (!is_compute_float(c.q.dtype)) return no(backend, call, c.q.dtype);
            if (!gpu::unverified_kernels_enabled())
              return Support{false, fmt::format("{}: the attention kernels' lse variants were compiled but have never "
                                                "run on a GPU; set {}=1 to use them (docs/performance.md, "
                                                "'Unverified GPU kernels')", backend, gpu::kUnverifiedKernelsEnv)};
            return Support{};
          }
          return when(backend, is_compute_float(c.q.dtype), call, c.q.dtype);
        } else if constexpr (std::is_same_v<T, ReduceCall>) {
          return when(backend, is_compute_float(c.x.dtype), call, c.x.dtype);
        } else if constexpr (std::is_same_v<T, SoftmaxCall>) {
          return when(backend, is_compute_float(c.x.dtype), call, c.x.dtype);
        } else if constexpr (std::is_same_v<T, NormCall>) {
          return when(backend, is_compute_float(c.x.dtype), call, c.x.dtype);
        } else if constexpr (std::is_same_v<T, RopeCall>) {
          if (c.inv_freq && c.inv_freq->dtype != DType::f32) return no(backend, call, c.inv_freq->dtype);
          return when(backend, is_compute_float(c.x.dtype), call, c.x.dtype);
        } else if constexpr (std::is_same_v<T, QuantizeFp8Call> || std::is_same_v<T, DequantizeFp8Call> ||
                             std::is_same_v<T, GemmFp8Call> || std::is_same_v<T, GemmFp8GroupedCall>) {
          // Every fp8 format (both families) and wide dtype that ops/ accepts
          // has a kernel; the f64 oracle form does not. The kernels never ran
          // on a GPU: behind the unverified switch (backends/gpu/unverified.h).
          const DType t = fp8_dtype_of(c);
          if (!is_fp8(t)) return no(backend, call, t);
          if (!is_compute_float(wide_dtype_of(c))) return no(backend, call, wide_dtype_of(c));
          if (!gpu::unverified_kernels_enabled()) return gpu::unverified_kernel_declined(backend, call);
          return Support{};
        } else {
          return no(backend, call, DType::f64);
        }
      },
      call);
}

}  // namespace hal
