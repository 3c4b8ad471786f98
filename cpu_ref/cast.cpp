// Cast between floating dtypes: y = convert(x * scale).
//
// The product is formed in the compute precision (fp32, or fp64 when either
// side is f64) and rounded once to y's dtype by the store; fp8 outputs
// saturate there (hal/dtype.h), which is what a quantising cast wants.
#include "cpu_ref/elementwise.h"
#include "cpu_ref/kernels.h"

namespace hal::cpu_ref {

namespace {

template <class T>
void cast_in(const CastCall& call) {
  const T scale = static_cast<T>(call.scale);
  map_elements<T, 1>({&call.x}, call.y, [&](const std::array<const T*, 1>& in, T* out, std::int64_t n) {
    const T* x = in[0];
    if (scale == T(1)) {
      // Skipping the multiply keeps NaN payloads and is the common case.
      for (std::int64_t i = 0; i < n; ++i) out[i] = x[i];
    } else {
      for (std::int64_t i = 0; i < n; ++i) out[i] = x[i] * scale;
    }
  });
}

}  // namespace

void cast(const CastCall& call) {
  if (computes_in_f64(call.y, call.x)) cast_in<double>(call);
  else cast_in<float>(call);
}

}  // namespace hal::cpu_ref
