// Launcher of fill_random (hip/kernels/random.hip).
#include "backends/hip/hip_device.h"
#include "backends/hip/hip_kernel_args.h"
#include "backends/hip/hip_ops.h"
#include "backends/hip/hip_stream.h"
#include "hip/kernels/random_params.h"

namespace hal::hip {

void run_fill_random(HipStream& s, const FillRandomCall& c) {
  kernels::RandomParams p{};
  p.y = c.y.first();
  p.n = c.y.numel();
  p.seed = c.seed;
  p.y_type = elem_type(c.y.dtype);
  p.normal = c.distribution == RandomDistribution::normal;
  p.a = c.a;
  p.b = c.b;
  p.contiguous = c.y.is_contiguous();
  p.shape = kernel_shape(c.y.shape);
  p.y_strides = kernel_strides(c.y.strides);
  if (p.n == 0) return;
  launch(s, "hal_fill_random", grid_stride_shape(p.n, stream_caps(s).compute_units), p);
}

}  // namespace hal::hip
