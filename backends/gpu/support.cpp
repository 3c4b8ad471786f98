// The dtype matrix of the GPU kernels (see support.h).
#include "backends/gpu/support.h"

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

Support when(std::string_view backend, bool ok, const OpCall& call, DType t) { return ok ? Support{} : no(backend, call, t); }

}  // namespace

Support gpu_supports_call(std::string_view backend, const OpCall& call) {
  return std::visit(
      [&](const auto& c) -> Support {
        using T = std::decay_t<decltype(c)>;
        if constexpr (gpu_lacks_kernel_v<T>)
          return Support{false, fmt::format("{}: {} has no GPU kernel yet (it runs on the cpu device)", backend,
                                            op_name(call))};
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
          // The GPU attention kernels do not write the row log-sum-exp yet.
          if (c.lse)
            return Support{false, fmt::format("{}: attention with the lse output has no GPU kernel yet (it runs on "
                                              "the cpu device)", backend)};
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
        } else if constexpr (std::is_same_v<T, QuantizeFp8Call>) {
          return no(backend, call, c.y.dtype);  // no GPU kernel yet (issue 22): the CPU runs it
        } else if constexpr (std::is_same_v<T, DequantizeFp8Call>) {
          return no(backend, call, c.y.dtype);
        } else if constexpr (std::is_same_v<T, GemmFp8Call> || std::is_same_v<T, GemmFp8GroupedCall>) {
          return no(backend, call, c.a.dtype);
} else {
          return no(backend, call, DType::f64);
        }
      },
      call);
}

}  // namespace hal
