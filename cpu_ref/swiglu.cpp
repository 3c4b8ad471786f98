// SwiGLU gate of a gated MLP: y = silu(gate) * up, elementwise (silu from
// cpu_ref/activation.h, shared with unary silu and the gemm epilogue).
#include "cpu_ref/activation.h"
#include "cpu_ref/elementwise.h"
#include "cpu_ref/kernels.h"

namespace hal::cpu_ref {

namespace {

template <class T>
void swiglu_in(const SwigluCall& call) {
  map_elements<T, 2>({&call.gate, &call.up}, call.y, [](const std::array<const T*, 2>& in, T* out, std::int64_t n) {
    const T* gate = in[0];
    const T* up = in[1];
    for (std::int64_t i = 0; i < n; ++i) out[i] = silu(gate[i]) * up[i];
  });
}

}  // namespace

void swiglu(const SwigluCall& call) {
  if (computes_in_f64(call.y, call.gate, call.up)) swiglu_in<double>(call);
  else swiglu_in<float>(call);
}

}  // namespace hal::cpu_ref
