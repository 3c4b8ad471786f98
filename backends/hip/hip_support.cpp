// Which op calls the HIP kernels implement. ops/ has already validated the
// call; this only answers "is there a kernel for these dtypes". f64 is never
// supported on the GPU backends. The same matrix as the CUDA backend, except
// that attention also takes f32 (its general kernel converts on load).
#include <fmt/format.h>

#include <variant>

#include "backends/hip/hip_ops.h"

namespace hal::hip {

namespace {

bool is_compute_float(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }
bool is_gpu_float(DType t) { return is_compute_float(t) || t == DType::f8e4m3 || t == DType::f8e5m2; }

Support no(const OpCall& call, DType t) {
  return Support{false, fmt::format("hip: {} is not supported for {}", op_name(call), dtype_name(t))};
}

Support when(bool ok, const OpCall& call, DType t) { return ok ? Support{} : no(call, t); }

}  // namespace

Support supports_call(const OpCall& call) {
  return std::visit(
      [&](const auto& c) -> Support {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, BinaryCall>) return when(is_gpu_float(c.y.dtype), call, c.y.dtype);
        else if constexpr (std::is_same_v<T, UnaryCall>) return when(is_gpu_float(c.y.dtype), call, c.y.dtype);
        else if constexpr (std::is_same_v<T, SwigluCall>) return when(is_gpu_float(c.y.dtype), call, c.y.dtype);
        else if constexpr (std::is_same_v<T, CastCall>) {
          if (!is_gpu_float(c.x.dtype)) return no(call, c.x.dtype);
          return when(is_gpu_float(c.y.dtype), call, c.y.dtype);
        } else if constexpr (std::is_same_v<T, CopyCall>) {
          return when(c.y.dtype != DType::f64 && dtype_size(c.y.dtype) <= 8, call, c.y.dtype);
        } else if constexpr (std::is_same_v<T, EmbeddingCall>) {
          return when(c.table.dtype != DType::f64, call, c.table.dtype);
        } else if constexpr (std::is_same_v<T, FillRandomCall>) {
          return when(is_gpu_float(c.y.dtype), call, c.y.dtype);
        } else if constexpr (std::is_same_v<T, GemmCall>) {
          return when(is_compute_float(c.a.dtype) && c.a.dtype == c.b.dtype, call, c.a.dtype);
        } else if constexpr (std::is_same_v<T, AttentionCall>) {
          return when(is_compute_float(c.q.dtype), call, c.q.dtype);
        } else if constexpr (std::is_same_v<T, ReduceCall>) {
          return when(is_compute_float(c.x.dtype), call, c.x.dtype);
        } else if constexpr (std::is_same_v<T, SoftmaxCall>) {
          return when(is_compute_float(c.x.dtype), call, c.x.dtype);
        } else if constexpr (std::is_same_v<T, NormCall>) {
          return when(is_compute_float(c.x.dtype), call, c.x.dtype);
        } else if constexpr (std::is_same_v<T, RopeCall>) {
          return when(is_compute_float(c.x.dtype), call, c.x.dtype);
        } else {
          return no(call, DType::f64);
        }
      },
      call);
}

}  // namespace hal::hip
