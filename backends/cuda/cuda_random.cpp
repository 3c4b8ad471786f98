// Launcher of fill_random (ptx/kernels/random.cu).
#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_kernel_args.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_stream.h"
#include "ptx/kernels/random_params.h"

namespace hal::cuda {

void run_fill_random(CudaStream& s, const FillRandomCall& call) {
  ptx::FillRandomParams p{};
  p.y = call.y.first();
  p.seed = call.seed;
  p.n = call.y.numel();
  p.a = call.a;
  p.b = call.b;
  p.normal = call.distribution == RandomDistribution::normal ? 1 : 0;
  p.dtype = elem_type(call.y.dtype);
  p.shape = kernel_shape(call.y.shape);
  p.y_strides = kernel_strides(call.y.strides);
  if (p.n == 0) return;
  launch(s, "fill_random", grid_stride_shape(p.n, stream_caps(s).sm_count), p);
}

}  // namespace hal::cuda
