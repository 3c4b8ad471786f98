// Launcher of fill_random (hip/kernels/random.hip).
#include "backends/hip/hip_device.h"
#include "backends/hip/hip_kernel_args.h"
#include "backends/hip/hip_ops.h"
#include "backends/hip/hip_stream.h"

namespace hal::hip {

void run_fill_random(HipStream& s, const FillRandomCall& c) {
  const kernel_params::FillRandomParams p = gpu::fill_random_params(c);
  if (p.n == 0) return;
  launch(s, "hal_fill_random", grid_stride_shape(p.n, stream_caps(s).compute_units), p);
}

}  // namespace hal::hip
