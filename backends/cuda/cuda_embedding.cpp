// Launcher of embedding (ptx/kernels/embedding.cu): the shared GPU launcher
// (backends/gpu/embedding_launcher.h) on Cuda's streams and grids.
#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_kernel_args.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_stream.h"
#include "backends/gpu/embedding_launcher.h"

namespace hal::cuda {

namespace {

struct CudaEmbedding {
  using Stream = CudaStream;
  using LaunchShape = cuda::LaunchShape;
  static LaunchShape grid(std::int64_t work, CudaStream& s) { return grid_stride_shape(work, stream_caps(s).sm_count); }
};

}  // namespace

void run_embedding(CudaStream& s, const EmbeddingCall& call) { gpu::run_embedding<CudaEmbedding>(s, call); }

}  // namespace hal::cuda
