// rope: rotates pairs of the first rotary_dim channels of each head by
// pos * theta^(-2i/rotary_dim) (or pos * inv_freq[i] when given); channels
// from rotary_dim on are copied
// (converted to y's dtype). One thread per (batch, seq, head, pair or
// pass-through channel), grid-stride.
#include "rows_common.h"

using namespace hal::hip;
using namespace hal::hip::kernels;
using namespace hal::kernel_params;

extern "C" __global__ __launch_bounds__(256) void hal_rope(RopeParams p) {
  const int64_t half = p.rotary_dim / 2;
  const int64_t pass = p.shape[3] - p.rotary_dim;
  const int64_t per_head = half + pass;
  const int64_t total = p.shape[0] * p.shape[1] * p.shape[2] * per_head;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += stride) {
    int64_t rest = t / per_head;
    const int64_t c = t - rest * per_head;
    const int64_t h = rest % p.shape[2];
    rest /= p.shape[2];
    const int64_t s = rest % p.shape[1];
    const int64_t b = rest / p.shape[1];
    const int64_t xb = b * p.x_stride[0] + s * p.x_stride[1] + h * p.x_stride[2];
    const int64_t yb = b * p.y_stride[0] + s * p.y_stride[1] + h * p.y_stride[2];
    if (c >= half) {  // pass-through channel
      const int64_t ch = p.rotary_dim + (c - half);
      store_f32(p.y, p.y_type, yb + ch * p.y_stride[3], load_f32(p.x, p.x_type, xb + ch * p.x_stride[3]));
      continue;
    }
    const int64_t ia = p.gptj ? 2 * c : c;
    const int64_t ib = p.gptj ? 2 * c + 1 : c + half;
    const float pos = static_cast<float>(p.positions[b * p.pos_batch_stride + s * p.pos_seq_stride]);
    const float inv_freq = p.inv_freq != nullptr ? p.inv_freq[c * p.inv_freq_stride]
                                                 : powf(p.theta, static_cast<float>(-2 * c) / static_cast<float>(p.rotary_dim));
    const float angle = pos * inv_freq;
    // inverse (rope_backward): the rotation by -angle, sin negated exactly.
    const float cs = cosf(angle), sn = p.inverse ? -sinf(angle) : sinf(angle);
    const float xa = load_f32(p.x, p.x_type, xb + ia * p.x_stride[3]);
    const float xbv = load_f32(p.x, p.x_type, xb + ib * p.x_stride[3]);
    store_f32(p.y, p.y_type, yb + ia * p.y_stride[3], xa * cs - xbv * sn);
    store_f32(p.y, p.y_type, yb + ib * p.y_stride[3], xbv * cs + xa * sn);
  }
}
