// fill_random: element i (row-major logical index, whatever y's strides) gets
// the Philox value for (seed, i) from hal/philox.h, the same float on every
// backend. That float is rounded once to y's dtype; an f64 y gets it widened
// exactly, so f64 and f32 fills hold the same values.
#include "cpu_ref/elementwise.h"
#include "cpu_ref/kernels.h"
#include "hal/philox.h"

namespace hal::cpu_ref {

namespace {

void philox_run(const FillRandomCall& call, std::int64_t start, std::int64_t n, float* out) {
  const auto first = static_cast<std::uint64_t>(start);
  if (call.distribution == RandomDistribution::uniform) {
    for (std::int64_t i = 0; i < n; ++i) out[i] = philox_uniform(call.seed, first + static_cast<std::uint64_t>(i), call.a, call.b);
  } else {
    for (std::int64_t i = 0; i < n; ++i) out[i] = philox_normal(call.seed, first + static_cast<std::uint64_t>(i), call.a, call.b);
  }
}

}  // namespace

void fill_random(const FillRandomCall& call) {
  const Tensor& y = call.y;
  const StridedLayout<1> layout(y.shape, {&y});
  parallel_blocks(y.numel(), [&](std::int64_t start, std::int64_t n) {
    float values[kBlockElements];
    philox_run(call, start, n, values);
    if (y.dtype == DType::f64) {
      double widened[kBlockElements];
      for (std::int64_t i = 0; i < n; ++i) widened[i] = values[i];
      scatter_block(layout, 0, y, start, n, widened);
    } else {
      scatter_block(layout, 0, y, start, n, values);
    }
  });
}

}  // namespace hal::cpu_ref
