// adamw_step: one fused AdamW update, element-wise (hal/op_training.h).
//
// The per-call scalars (bias corrections, step size, decay) are computed in
// fp64 here once and rounded to the compute type, so every element sees the
// same constants and the kernel's only per-element error is its own fp32
// arithmetic. Element i depends on element i alone.
#include <cmath>
#include <cstdint>

#include "cpu_ref/kernels.h"
#include "cpu_ref/rows_access.h"
#include "cpu_ref/rows_math.h"
#include "cpu_ref/strided_index.h"

namespace hal::cpu_ref {

namespace {

template <class T> void adamw_typed(const AdamwCall& c) {
  const double b1 = c.beta1, b2 = c.beta2, t = static_cast<double>(c.step);
  const T beta1 = static_cast<T>(b1), beta2 = static_cast<T>(b2);
  const T one_minus_b1 = static_cast<T>(1.0 - b1), one_minus_b2 = static_cast<T>(1.0 - b2);
  const T step_size = static_cast<T>(static_cast<double>(c.lr) / (1.0 - std::pow(b1, t)));
  const T inv_sqrt_bc2 = static_cast<T>(1.0 / std::sqrt(1.0 - std::pow(b2, t)));
  const T decay = static_cast<T>(1.0 - static_cast<double>(c.lr) * static_cast<double>(c.weight_decay));
  const T eps = static_cast<T>(c.eps);
  const bool has_master = c.master.has_value();
  const Tensor& master = has_master ? *c.master : c.param;  // the tensor the step reads p from

  const std::int64_t n = c.param.numel();
  const StridedLayout<5> layout(c.param.shape, {&c.param, &c.grad, &c.m, &c.v, &master});
  rows::parallel_rows(n, 32, [&](std::int64_t begin, std::int64_t end) {
    StridedCursor<5> at(layout, begin);
    for (std::int64_t i = begin; i < end; ++i, at.advance()) {
      const T g = rows::load<T>(c.grad.data, c.grad.dtype, at.offset(1));
      const T m = beta1 * rows::load<T>(c.m.data, c.m.dtype, at.offset(2)) + one_minus_b1 * g;
      const T v = beta2 * rows::load<T>(c.v.data, c.v.dtype, at.offset(3)) + one_minus_b2 * (g * g);
      const T p = rows::load<T>(master.data, master.dtype, at.offset(4));
      const T denom = std::sqrt(v) * inv_sqrt_bc2 + eps;
      const T next = p * decay - step_size * (m / denom);
      rows::store<T>(c.m.data, c.m.dtype, at.offset(2), m);
      rows::store<T>(c.v.data, c.v.dtype, at.offset(3), v);
      if (has_master) rows::store<T>(master.data, master.dtype, at.offset(4), next);
      rows::store<T>(c.param.data, c.param.dtype, at.offset(0), next);
    }
  });
}

}  // namespace

void adamw(const AdamwCall& call) {
  if (call.m.dtype == DType::f64)
    adamw_typed<double>(call);
  else
    adamw_typed<float>(call);
}

}  // namespace hal::cpu_ref
