// Launcher of fill_random (ptx/kernels/random.cu).
#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_kernel_args.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_stream.h"

namespace hal::cuda {

void run_fill_random(CudaStream& s, const FillRandomCall& call) {
  const kernel_params::FillRandomParams p = gpu::fill_random_params(call);
  if (p.n == 0) return;
  launch(s, "fill_random", grid_stride_shape(p.n, stream_caps(s).sm_count), p);
}

}  // namespace hal::cuda
