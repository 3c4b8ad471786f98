// SwiGLU gate of a gated MLP: y = silu(gate) * up, elementwise. fp32 uses the
// vector kernels' silu (the same one as unary silu); the fp64 oracle uses
// cpu_ref/activation.h.
#include <type_traits>

#include "cpu_ref/activation.h"
#include "cpu_ref/elementwise.h"
#include "cpu_ref/kernels.h"
#include "cpu_ref/vector_kernels.h"

namespace hal::cpu_ref {

namespace {

template <class T>
void swiglu_in(const SwigluCall& call) {
  if constexpr (std::is_same_v<T, float>)
    if (map_elements_fused<2>({&call.gate, &call.up}, call.y, FusedOp::swiglu)) return;
  map_elements<T, 2>({&call.gate, &call.up}, call.y, [](const std::array<const T*, 2>& in, T* out, std::int64_t n) {
    const T* gate = in[0];
    const T* up = in[1];
    if constexpr (std::is_same_v<T, float>) {
      vector_kernels().swiglu(gate, up, out, n);  // the vector exp, as unary silu
    } else {
      for (std::int64_t i = 0; i < n; ++i) out[i] = silu(gate[i]) * up[i];
    }
  });
}

}  // namespace

void swiglu(const SwigluCall& call) {
  if (computes_in_f64(call.y, call.gate, call.up)) swiglu_in<double>(call);
  else swiglu_in<float>(call);
}

}  // namespace hal::cpu_ref
