// Unary elementwise ops: y = f(x).
//
// IEEE special values follow from the C library: neg/abs flip/clear the sign
// bit (neg(-0) = +0, abs(-0) = +0), exp(-inf) = 0, log(0) = -inf, log(x < 0) =
// NaN, sqrt(-0) = -0, rsqrt(+0) = +inf. relu maps every non-positive number,
// -0 included, to +0 and keeps NaN (cpu_ref/activation.h); the gelus are the
// shared definitions of activation.h too, and so are sigmoid and silu for the
// fp64 oracle. In fp32, exp, sigmoid and silu run on the vector kernels'
// exp (vector_kernels.h, <= 2 ulp; the contract allows 4), which is what
// makes them memory-bound rather than libm-bound.
#include <cmath>
#include <type_traits>

#include "cpu_ref/activation.h"
#include "cpu_ref/elementwise.h"
#include "cpu_ref/kernels.h"
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

// fp32: exp and the exp-based activations take the vector kernels' exp (<= 2
// ulp, vector_kernels.h) instead of the C library's, one call per element.
void unary_run(UnaryKind kind, const float* x, float* y, std::int64_t n) {
  switch (kind) {
    case UnaryKind::exp: return vector_kernels().exp(x, y, n);
    case UnaryKind::sigmoid: return vector_kernels().sigmoid(x, y, n);
    case UnaryKind::silu: return vector_kernels().silu(x, y, n);
    default: return unary_run<float>(kind, x, y, n);
  }
}

template <class T>
void unary_in(const UnaryCall& call) {
  if constexpr (std::is_same_v<T, float>) {
    // The vector-exp ops have a fused contiguous form (map1_fused).
    const bool fusable = call.kind == UnaryKind::exp || call.kind == UnaryKind::sigmoid || call.kind == UnaryKind::silu;
    const FusedOp op = call.kind == UnaryKind::exp ? FusedOp::exp
                       : call.kind == UnaryKind::sigmoid ? FusedOp::sigmoid
                                                         : FusedOp::silu;
    if (fusable && map_elements_fused<1>({&call.x}, call.y, op)) return;
  }
  map_elements<T, 1>({&call.x}, call.y, [&](const std::array<const T*, 1>& in, T* out, std::int64_t n) {
    unary_run(call.kind, in[0], out, n);
  });
}

}  // namespace

void unary(const UnaryCall& call) {
  if (computes_in_f64(call.y, call.x)) unary_in<double>(call);
  else unary_in<float>(call);
}

}  // namespace hal::cpu_ref
