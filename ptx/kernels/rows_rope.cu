// Rotary position embedding, one thread per output element (a grid-stride
// loop), for any strides. Channels >= rotary_dim are copied. The angle
// pos * theta^(-2i/r) (or pos * inv_freq[i] when given) and its sine/cosine
// are computed in fp64: in fp32 the angle of a position in the thousands is
// already off by ~1e-4 rad. With RopeParams::inverse (rope_backward) the sine
// is negated, an exact operation: the rotation by -angle, the transpose.
#include <math.h>

#include "ptx/element.cuh"
#include "ptx/kernels/rows_common.cuh"

using namespace hal::ptx;
using namespace hal::kernel_params;
using namespace hal::ptx::rows;

extern "C" __global__ void __launch_bounds__(256) hal_rope(RopeParams p) {
  const ElemType xt = static_cast<ElemType>(p.x_type), yt = static_cast<ElemType>(p.y_type);
  const int64_t B = p.shape[0], S = p.shape[1], H = p.shape[2], D = p.shape[3];
  const int64_t total = B * S * H * D;
  const int r = p.rotary_dim, half = r / 2;
  for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t t = idx;
    const int64_t c = t % D; t /= D;
    const int64_t h = t % H; t /= H;
    const int64_t s = t % S; t /= S;
    const int64_t b = t;
    const int64_t xbase = b * p.x_stride[0] + s * p.x_stride[1] + h * p.x_stride[2];
    const int64_t yoff = b * p.y_stride[0] + s * p.y_stride[1] + h * p.y_stride[2] + c * p.y_stride[3];
    const float x = load_as_float(p.x, xt, xbase + c * p.x_stride[3]);
    if (c >= r) {
      store_from_float(p.y, yt, yoff, x);
      continue;
    }
    int64_t i, partner;
    bool first;  // first element of its pair: y = x cos - x_partner sin
    if (p.gptj) {
      i = c / 2;
      first = (c % 2) == 0;
      partner = first ? c + 1 : c - 1;
    } else {
      first = c < half;
      i = first ? c : c - half;
      partner = first ? c + half : c - half;
    }
    const float xp = load_as_float(p.x, xt, xbase + partner * p.x_stride[3]);
    const int32_t pos = p.positions[b * p.pos_batch_stride + s * p.pos_seq_stride];
    const double inv_freq =
        p.inv_freq != nullptr ? static_cast<double>(p.inv_freq[i * p.inv_freq_stride])
                              : pow(static_cast<double>(p.theta), -2.0 * static_cast<double>(i) / static_cast<double>(r));
    double sn, cs;
    sincos(static_cast<double>(pos) * inv_freq, &sn, &cs);
    const float cf = static_cast<float>(cs), sf = p.inverse ? -static_cast<float>(sn) : static_cast<float>(sn);
    const float y = first ? x * cf - xp * sf : x * cf + xp * sf;
    store_from_float(p.y, yt, yoff, y);
  }
}
