// Rotary position embedding on x [batch, seq, heads, head_dim].
//
// Pair i (i < rotary_dim / 2) is (i, i + rotary_dim/2) for neox and (2i, 2i+1)
// for gptj; it turns by angle pos * f_i, f_i = theta^(-2i/rotary_dim) or the
// given inv_freq[i]:
//   y_a = x_a cos - x_b sin,   y_b = x_b cos + x_a sin.
// Channels from rotary_dim on are copied. The inverse frequencies are computed
// once, the cos/sin table once per token (shared by its heads), all in the
// compute type (fp32, as the GPU kernels and PyTorch do; fp64 for the oracle).
// Tokens are independent tasks, so the split over threads does not matter.
#include <cmath>
#include <cstdint>
#include <vector>

#include "cpu_ref/kernels.h"
#include "cpu_ref/rows_access.h"
#include "cpu_ref/rows_math.h"

namespace hal::cpu_ref {

namespace {

// `inverse` turns by -angle: rope_backward (the rotation's transpose).
template <class T> void rope_typed(const RopeCall& call, bool inverse) {
  const Tensor& x = call.x;
  const Tensor& y = call.y;
  const Tensor& pos = call.positions;
  if (x.rank() != 4) return;  // ops/ guarantees rank 4
  const std::int64_t batch = x.shape[0], seq = x.shape[1], heads = x.shape[2], head_dim = x.shape[3];
  // ops/ normalises rotary_dim; 0 still means the whole head, defensively.
  const std::int64_t rotary_dim = call.rotary_dim > 0 ? call.rotary_dim : head_dim;
  const std::int64_t half = rotary_dim / 2;
  const bool neox = call.style == RopeStyle::neox;

  std::vector<T> inv_freq(static_cast<std::size_t>(half));
  for (std::int64_t i = 0; i < half; ++i) {
    if (call.inv_freq) {
      const Tensor& f = *call.inv_freq;
      inv_freq[i] = static_cast<T>(load_element(f.data, f.dtype, f.offset + i * f.strides[0]));
    } else {
      inv_freq[i] = std::pow(static_cast<T>(call.theta), static_cast<T>(-2 * i) / static_cast<T>(rotary_dim));
    }
  }

  const auto position_of = [&](std::int64_t b, std::int64_t s) {
    const std::int64_t index = pos.rank() == 2 ? pos.offset + b * pos.strides[0] + s * pos.strides[1]
                                               : pos.offset + s * pos.strides[0];
    return static_cast<T>(load_element(pos.data, pos.dtype, index));
  };

  rows::parallel_rows(batch * seq, heads * head_dim * 4 + 1, [&](std::int64_t begin, std::int64_t end) {
    std::vector<T> cos_t(static_cast<std::size_t>(half)), sin_t(static_cast<std::size_t>(half));
    std::vector<T> in(static_cast<std::size_t>(head_dim)), out(static_cast<std::size_t>(head_dim));
    for (std::int64_t token = begin; token < end; ++token) {
      const std::int64_t b = token / seq, s = token % seq;
      const T p = position_of(b, s);
      for (std::int64_t i = 0; i < half; ++i) {
        const T angle = p * inv_freq[i];
        cos_t[i] = std::cos(angle);
        sin_t[i] = inverse ? -std::sin(angle) : std::sin(angle);
      }
      for (std::int64_t h = 0; h < heads; ++h) {
        const std::int64_t x_start = x.offset + b * x.strides[0] + s * x.strides[1] + h * x.strides[2];
        const std::int64_t y_start = y.offset + b * y.strides[0] + s * y.strides[1] + h * y.strides[2];
        rows::gather(x, x_start, x.strides[3], head_dim, in.data());
        for (std::int64_t i = 0; i < half; ++i) {
          const std::int64_t ia = neox ? i : 2 * i;
          const std::int64_t ib = neox ? i + half : 2 * i + 1;
          out[ia] = in[ia] * cos_t[i] - in[ib] * sin_t[i];
          out[ib] = in[ib] * cos_t[i] + in[ia] * sin_t[i];
        }
        for (std::int64_t c = 2 * half; c < head_dim; ++c) out[c] = in[c];
        rows::scatter(y, y_start, y.strides[3], head_dim, out.data());
      }
    }
  });
}

}  // namespace

void rope(const RopeCall& call) {
  if (call.y.dtype == DType::f64) {
    rope_typed<double>(call, false);
  } else {
    rope_typed<float>(call, false);
  }
}

void rope_backward(const RopeBackwardCall& call) {
  const RopeCall as_rope{call.dy, call.positions, call.dx, call.theta, call.style, call.rotary_dim, call.inv_freq};
  if (call.dx.dtype == DType::f64)
    rope_typed<double>(as_rope, true);
  else
    rope_typed<float>(as_rope, true);
}

}  // namespace hal::cpu_ref
