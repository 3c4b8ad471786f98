// Cast between floating dtypes: y = convert(x * scale).
//
// The product is formed in the compute precision (fp32, or fp64 when either
// side is f64) and rounded once to y's dtype by the store; fp8 outputs
// saturate there (hal/dtype.h), which is what a quantising cast wants.
#include <algorithm>

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

// Contiguous x and y, both f32, bf16 or f16, not overlapping: each chunk is
// widened once into L1 (read in place when x is f32) and rounded once into y
// on the vector kernels, streaming when y is large. The general path gathers,
// copies into a second buffer and scatters; this is the same conversions (bit
// for bit hal's converters, NaN payloads kept when scale is 1) in fewer passes.
// Returns false, doing nothing, when the case does not apply.
bool cast_contiguous(const CastCall& call) {
  const Tensor& x = call.x;
  const Tensor& y = call.y;
  if (!vector_dtype(x.dtype) || !vector_dtype(y.dtype)) return false;
  const StridedLayout<2> layout(y.shape, {&x, &y});
  if (!layout.contiguous[0] || !layout.contiguous[1]) return false;
  const std::int64_t numel = y.numel();
  const auto x_size = static_cast<std::int64_t>(dtype_size(x.dtype));
  const auto y_size = static_cast<std::int64_t>(dtype_size(y.dtype));
  const char* const src = static_cast<const char*>(x.data) + layout.offsets[0] * x_size;
  char* const dst = static_cast<char*>(y.data) + layout.offsets[1] * y_size;
  if (byte_ranges_overlap(src, numel * x_size, dst, numel * y_size)) return false;  // overlap: read a block first
  const bool streaming = streams_output(y);
  const VectorKernels& vk = vector_kernels();
  constexpr std::int64_t kChunk = 2048;
  parallel_blocks(
      numel,
      [&](std::int64_t start, std::int64_t n) {
        float buf[kChunk];
        for (std::int64_t i = start; i < start + n; i += kChunk) {
          const std::int64_t m = std::min(kChunk, start + n - i);
          const float* wide = reinterpret_cast<const float*>(src + i * x_size);
          if (x.dtype != DType::f32) {
            vk.widen(src + i * x_size, x.dtype, m, buf);
            wide = buf;
          }
          if (call.scale != 1.0f) vk.scale_narrow(wide, call.scale, dst + i * y_size, y.dtype, m, streaming);
          else if (streaming) vk.narrow_streaming(dst + i * y_size, y.dtype, m, wide);
          else vk.narrow(dst + i * y_size, y.dtype, m, wide);
        }
      },
      kFusedBlockElements);
  return true;
}

}  // namespace

void cast(const CastCall& call) {
  if (computes_in_f64(call.y, call.x)) cast_in<double>(call);
  else if (!cast_contiguous(call)) cast_in<float>(call);
}

}  // namespace hal::cpu_ref
