// Binary elementwise ops with NumPy broadcasting: y = a (op) b.
//
// a and b are read through broadcast strides (zero along broadcast dimensions),
// so no operand is ever expanded in memory. maximum/minimum propagate NaN (if
// either side is NaN the result is NaN, unlike std::max) and order -0 below +0,
// as IEEE 754-2019 maximum/minimum do.
#include <cmath>
#include <type_traits>

#include "cpu_ref/elementwise.h"
#include "cpu_ref/kernels.h"

namespace hal::cpu_ref {

namespace {

template <class T> T nan_maximum(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return std::signbit(a) ? b : a;  // only differs for -0 vs +0
  return a > b ? a : b;
}

template <class T> T nan_minimum(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

// One loop per kind, with the switch outside, so each loop vectorises.
template <class T>
void binary_run(BinaryKind kind, const T* a, const T* b, T* y, std::int64_t n) {
  switch (kind) {
    case BinaryKind::add: for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i]; return;
    case BinaryKind::sub: for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] - b[i]; return;
    case BinaryKind::mul: for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i]; return;
    case BinaryKind::div: for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] / b[i]; return;
    case BinaryKind::maximum: for (std::int64_t i = 0; i < n; ++i) y[i] = nan_maximum(a[i], b[i]); return;
    case BinaryKind::minimum: for (std::int64_t i = 0; i < n; ++i) y[i] = nan_minimum(a[i], b[i]); return;
  }
}

FusedOp fused_op(BinaryKind kind) {
  switch (kind) {
    case BinaryKind::add: return FusedOp::add;
    case BinaryKind::sub: return FusedOp::sub;
    case BinaryKind::mul: return FusedOp::mul;
    case BinaryKind::div: return FusedOp::div;
    case BinaryKind::maximum: return FusedOp::maximum;
    case BinaryKind::minimum: return FusedOp::minimum;
  }
  return FusedOp::add;  // unreachable
}

template <class T>
void binary_in(const BinaryCall& call) {
  const Tensor a = broadcast_view(call.a, call.y.shape);
  const Tensor b = broadcast_view(call.b, call.y.shape);
  if constexpr (std::is_same_v<T, float>)
    if (map_elements_fused<2>({&a, &b}, call.y, fused_op(call.kind))) return;
  map_elements<T, 2>({&a, &b}, call.y, [&](const std::array<const T*, 2>& in, T* out, std::int64_t n) {
    binary_run(call.kind, in[0], in[1], out, n);
  });
}

}  // namespace

void binary(const BinaryCall& call) {
  if (computes_in_f64(call.y, call.a, call.b)) binary_in<double>(call);
  else binary_in<float>(call);
}

}  // namespace hal::cpu_ref
