// Unary elementwise ops: y = f(x).
//
// IEEE special values follow from the C library: neg/abs flip/clear the sign
// bit (neg(-0) = +0, abs(-0) = +0), exp(-inf) = 0, log(0) = -inf, log(x < 0) =
// NaN, sqrt(-0) = -0, rsqrt(+0) = +inf (log_approx.h's log returns the same).
// relu maps every non-positive number, -0 included, to +0 and keeps NaN
// (cpu_ref/activation.h, which also holds the gelus, sigmoid and silu that
// the fp64 oracle computes). In fp32, exp, sigmoid, silu, the gelus and tanh
// run on the vector kernels' exp (vector_kernels.h, <= 2 ulp; the contract
// allows 4; gelu_approx.h, tanh_approx.h) and log on their log
// (log_approx.h), which is what makes them memory-bound rather than
// libm-bound.
#include <cmath>
#include <optional>
#include <type_traits>

#include "cpu_ref/activation.h"
#include "cpu_ref/elementwise.h"
#include "cpu_ref/kernels.h"
#include "cpu_ref/unary_table16.h"
#include "cpu_ref/vector_kernels.h"

namespace hal::cpu_ref {

namespace {

template <class T, class F>
void map_run(const T* x, T* y, std::int64_t n, F f) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

template <class T>
void unary_run(UnaryKind kind, const T* x, T* y, std::int64_t n) {
  switch (kind) {
    case UnaryKind::neg: return map_run(x, y, n, [](T v) { return -v; });
    case UnaryKind::abs: return map_run(x, y, n, [](T v) { return std::fabs(v); });
    case UnaryKind::exp: return map_run(x, y, n, [](T v) { return std::exp(v); });
    case UnaryKind::log: return map_run(x, y, n, [](T v) { return std::log(v); });
    case UnaryKind::sqrt: return map_run(x, y, n, [](T v) { return std::sqrt(v); });
    case UnaryKind::rsqrt: return map_run(x, y, n, [](T v) { return T(1) / std::sqrt(v); });
    case UnaryKind::tanh: return map_run(x, y, n, [](T v) { return std::tanh(v); });
    case UnaryKind::sigmoid: return map_run(x, y, n, [](T v) { return sigmoid(v); });
    case UnaryKind::relu: return map_run(x, y, n, [](T v) { return relu(v); });
    case UnaryKind::gelu: return map_run(x, y, n, [](T v) { return gelu_erf(v); });
    case UnaryKind::gelu_tanh: return map_run(x, y, n, [](T v) { return gelu_tanh(v); });
    case UnaryKind::silu: return map_run(x, y, n, [](T v) { return silu(v); });
  }
}

// fp32: exp and the exp-based maps (sigmoid, silu, the gelus, tanh) take the
// vector kernels' exp (<= 2 ulp, vector_kernels.h; gelu_approx.h), and log
// their log (log_approx.h), instead of the C library, one call per element.
void unary_run(UnaryKind kind, const float* x, float* y, std::int64_t n) {
  switch (kind) {
    case UnaryKind::exp: return vector_kernels().exp(x, y, n);
    case UnaryKind::sigmoid: return vector_kernels().sigmoid(x, y, n);
    case UnaryKind::silu: return vector_kernels().silu(x, y, n);
    case UnaryKind::gelu: return vector_kernels().gelu(x, y, n);
    case UnaryKind::gelu_tanh: return vector_kernels().gelu_tanh(x, y, n);
    case UnaryKind::tanh: return vector_kernels().tanh(x, y, n);
    case UnaryKind::log: return vector_kernels().log(x, y, n);
    default: return unary_run<float>(kind, x, y, n);
  }
}

// The fused contiguous form (map1_fused) of each op: for the vector-kernel
// ones (exp and its maps, log) the fp32 entry the general path calls too, for
// the others the exact scalar form. nullopt for an op added without one.
std::optional<FusedOp> fused_form(UnaryKind kind) {
  switch (kind) {
    case UnaryKind::exp: return FusedOp::exp;
    case UnaryKind::sigmoid: return FusedOp::sigmoid;
    case UnaryKind::silu: return FusedOp::silu;
    case UnaryKind::gelu: return FusedOp::gelu;
    case UnaryKind::gelu_tanh: return FusedOp::gelu_tanh;
    case UnaryKind::tanh: return FusedOp::tanh;
    case UnaryKind::log: return FusedOp::log;
    case UnaryKind::relu: return FusedOp::relu;
    case UnaryKind::neg: return FusedOp::neg;
    case UnaryKind::abs: return FusedOp::abs;
    case UnaryKind::sqrt: return FusedOp::sqrt;
    case UnaryKind::rsqrt: return FusedOp::rsqrt;
    default: return std::nullopt;
  }
}

// The general path: gather, the function in T, round once into y.
template <class T>
void unary_general(UnaryKind kind, const Tensor& x, const Tensor& y) {
  map_elements<T, 1>({&x}, y, [&](const std::array<const T*, 1>& in, T* out, std::int64_t n) {
    unary_run(kind, in[0], out, n);
  });
}

// x and y of one 16-bit dtype, both contiguous: a lookup in the table that
// the general path fills (unary_table16.h), hence its bits. Returns false,
// doing nothing, for any other case.
bool unary_by_table(const UnaryCall& call) {
  const DType t = call.y.dtype;
  if (t != DType::bf16 && t != DType::f16) return false;
  const auto runs = same_dtype_runs<1>({&call.x}, call.y);
  if (!runs) return false;
  static UnaryTables16 tables;
  const std::uint16_t* table = tables.get(call.kind, t, [&](const std::uint16_t* all, std::uint16_t* out) {
    // const_cast: the general path only reads its input.
    const Tensor from = Tensor::contiguous(const_cast<std::uint16_t*>(all), call.x.device, t, {kUnaryTable16Entries});
    const Tensor to = Tensor::contiguous(out, call.y.device, t, {kUnaryTable16Entries});
    unary_general<float>(call.kind, from, to);
  });
  const auto* x = reinterpret_cast<const std::uint16_t*>(runs->in[0]);
  auto* y = reinterpret_cast<std::uint16_t*>(runs->out);
  const bool streaming = streams_output(call.y);
  parallel_blocks(
      call.y.numel(), [&](std::int64_t start, std::int64_t n) { lookup16(table, x + start, y + start, n, streaming); },
      kFusedBlockElements);
  return true;
}

template <class T>
void unary_in(const UnaryCall& call) {
  if constexpr (std::is_same_v<T, float>) {
    if (unary_by_table(call)) return;
    if (const std::optional<FusedOp> op = fused_form(call.kind); op && map_elements_fused<1>({&call.x}, call.y, *op))
      return;
  }
  unary_general<T>(call.kind, call.x, call.y);
}

}  // namespace

void unary(const UnaryCall& call) {
  if (computes_in_f64(call.y, call.x)) unary_in<double>(call);
  else unary_in<float>(call);
}

}  // namespace hal::cpu_ref
