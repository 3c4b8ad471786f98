// Launcher of embedding (hip/kernels/embedding.hip): the shared GPU launcher
// (backends/gpu/embedding_launcher.h) on Hip's streams and grids.
#include "backends/hip/hip_device.h"
#include "backends/hip/hip_kernel_args.h"
#include "backends/hip/hip_ops.h"
#include "backends/hip/hip_stream.h"
#include "backends/gpu/embedding_launcher.h"

namespace hal::hip {

namespace {

struct HipEmbedding {
  using Stream = HipStream;
  using LaunchShape = hip::LaunchShape;
  static LaunchShape grid(std::int64_t work, HipStream& s) { return grid_stride_shape(work, stream_caps(s).compute_units); }
};

}  // namespace

void run_embedding(HipStream& s, const EmbeddingCall& call) { gpu::run_embedding<HipEmbedding>(s, call); }

}  // namespace hal::hip
