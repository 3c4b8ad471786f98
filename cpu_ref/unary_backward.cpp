// unary_backward (dx = dy * f'(x)) and swiglu_backward, element-wise over any
// strides. The derivatives are written in forms that do not cancel:
//   sigmoid' = s(x) s(-x);  tanh' = 4 s(2x) s(-2x) (= sech^2, not 1 - tanh^2,
//   which loses every digit for |x| > 9);  silu' = s(x) (1 + x s(-x));
//   gelu' = Phi(x) + x phi(x) with Phi = erfc(-x/sqrt2)/2;
//   gelu_tanh' = s(a) + x s(a) s(-a) a',  a = 2 sqrt(2/pi) (x + 0.044715 x^3).
// Element i depends on element i alone, so the split over threads is free.
#include <cmath>
#include <cstdint>

#include "cpu_ref/activation.h"
#include "cpu_ref/kernels.h"
#include "cpu_ref/rows_access.h"
#include "cpu_ref/rows_math.h"
#include "cpu_ref/strided_index.h"

namespace hal::cpu_ref {

namespace {

template <class T> T derivative(UnaryKind kind, T x) {
  switch (kind) {
    case UnaryKind::exp: return std::exp(x);
    case UnaryKind::sigmoid: return sigmoid(x) * sigmoid(-x);
    case UnaryKind::tanh: return T(4) * (sigmoid(T(2) * x) * sigmoid(T(-2) * x));
    case UnaryKind::silu: return sigmoid(x) * (T(1) + x * sigmoid(-x));
    case UnaryKind::gelu: {
      const T cdf = T(0.5) * std::erfc(-x * T(0.70710678118654752440));
      const T pdf = T(0.39894228040143267794) * std::exp(T(-0.5) * x * x);
      return cdf + x * pdf;
    }
    case UnaryKind::gelu_tanh: {
      const T k = T(1.59576912160573071176), c = T(0.044715);
      const T a = k * (c * (x * x) * x + x);
      const T da = k * (T(1) + T(3) * c * (x * x));
      const T s = sigmoid(a), ssm = s * sigmoid(-a);
      // Past |x| ~ 1e12 a' overflows in fp32 while s s(-a) is already 0:
      // the term is 0, not 0 * inf.
      return ssm == T(0) ? s : s + x * ssm * da;
    }
    default: return x;  // relu is handled by the caller; ops/ rejects the rest
  }
}

// Runs body(offsets) for every element of `shape`, walking the N views in
// step, in parallel chunks.
template <int N, class Body> void for_each_element(const Shape& shape, const std::array<const Tensor*, N>& views, Body&& body) {
  const std::int64_t n = checked_numel(shape);
  const StridedLayout<N> layout(shape, views);
  rows::parallel_rows(n, 16, [&](std::int64_t begin, std::int64_t end) {
    StridedCursor<N> cursor(layout, begin);
    for (std::int64_t i = begin; i < end; ++i, cursor.advance()) body(cursor);
  });
}

template <class T> void unary_backward_typed(const UnaryBackwardCall& c) {
  for_each_element<3>(c.x.shape, {&c.x, &c.dy, &c.dx}, [&](const StridedCursor<3>& at) {
    const T x = rows::load<T>(c.x.data, c.x.dtype, at.offset(0));
    const T g = rows::load<T>(c.dy.data, c.dy.dtype, at.offset(1));
    // relu: PyTorch's threshold_backward (dy where x > 0, else 0; NaN x gives 0).
    const T out = c.kind == UnaryKind::relu ? (x > T(0) ? g : T(0)) : g * derivative(c.kind, x);
    rows::store<T>(c.dx.data, c.dx.dtype, at.offset(2), out);
  });
}

template <class T> void swiglu_backward_typed(const SwigluBackwardCall& c) {
  for_each_element<5>(c.gate.shape, {&c.gate, &c.up, &c.dy, &c.dgate, &c.dup}, [&](const StridedCursor<5>& at) {
    const T g = rows::load<T>(c.gate.data, c.gate.dtype, at.offset(0));
    const T u = rows::load<T>(c.up.data, c.up.dtype, at.offset(1));
    const T d = rows::load<T>(c.dy.data, c.dy.dtype, at.offset(2));
    rows::store<T>(c.dgate.data, c.dgate.dtype, at.offset(3), (d * u) * derivative(UnaryKind::silu, g));
    rows::store<T>(c.dup.data, c.dup.dtype, at.offset(4), d * silu(g));
  });
}

}  // namespace

void unary_backward(const UnaryBackwardCall& call) {
  if (call.dx.dtype == DType::f64)
    unary_backward_typed<double>(call);
  else
    unary_backward_typed<float>(call);
}

void swiglu_backward(const SwigluBackwardCall& call) {
  if (call.dup.dtype == DType::f64)
    swiglu_backward_typed<double>(call);
  else
    swiglu_backward_typed<float>(call);
}

}  // namespace hal::cpu_ref
