// Launchers of the training ops (ptx/kernels/training_*.cu, for
// embedding_backward embedding_backward.cu and for rope_backward rows_rope.cu): the shared GPU launchers
// (backends/gpu/training_launcher.h) on Cuda's streams and grids.
#include "backends/cuda/cuda_attention_sm90a_backward.h"
#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_kernel_args.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_stream.h"
#include "backends/gpu/attention_backward_launcher.h"
#include "backends/gpu/training_launcher.h"
#include "backends/cuda/cuda_paths.h"
#include "ptx/kernels/attention_backward_geometry.h"

namespace hal::cuda {

namespace {

struct CudaTraining {
  using Stream = CudaStream;
  using LaunchShape = cuda::LaunchShape;
  static constexpr const char* name = "cuda";
  static LaunchShape grid(std::int64_t work, CudaStream& s) { return grid_stride_shape(work, stream_caps(s).sm_count); }
  // The CUDA rope kernel takes one thread per element (run_rope in cuda_rows.cpp).
  static std::int64_t rope_work(const Tensor& x, int /*rotary_dim*/) { return x.numel(); }
};

}  // namespace

void run_unary_backward(CudaStream& s, const UnaryBackwardCall& c) { gpu::run_unary_backward<CudaTraining>(s, c); }
void run_swiglu_backward(CudaStream& s, const SwigluBackwardCall& c) { gpu::run_swiglu_backward<CudaTraining>(s, c); }
void run_softmax_backward(CudaStream& s, const SoftmaxBackwardCall& c) { gpu::run_softmax_backward<CudaTraining>(s, c); }
void run_norm_backward(CudaStream& s, const NormBackwardCall& c) { gpu::run_norm_backward<CudaTraining>(s, c); }
void run_rope_backward(CudaStream& s, const RopeBackwardCall& c) { gpu::run_rope_backward<CudaTraining>(s, c); }
void run_adamw(CudaStream& s, const AdamwCall& c) { gpu::run_adamw<CudaTraining>(s, c); }
void run_global_norm(CudaStream& s, const GlobalNormCall& c) { gpu::run_global_norm<CudaTraining>(s, c); }
void run_cross_entropy(CudaStream& s, const CrossEntropyCall& c) { gpu::run_cross_entropy<CudaTraining>(s, c); }
void run_embedding_backward(CudaStream& s, const EmbeddingBackwardCall& c) {
  gpu::run_embedding_backward<CudaTraining>(s, c);
}

// The mma.sync kernels (attention_backward_mma.cu, sm_80+: every target of the
// build) unless HAL_CUDA_DISABLE=attention_bwd_mma; the device's opt-in
// shared memory bounds them. On sm_90a, with HAL_GPU_UNVERIFIED=1 and neither
// wgmma_attention nor wgmma_attention_bwd disabled, the sm_90a gradient
// kernels (cuda_attention_sm90a_backward.h) replace the pair after the delta
// kernel where the call fits them.
void run_attention_backward(CudaStream& s, const AttentionBackwardCall& c) {
  gpu::AttentionBackwardTarget target;
  target.warp_size = 32;
  target.tensor_cores = path_enabled("attention_bwd_mma");
  target.max_shared_per_block = stream_caps(s).max_shared_per_block_optin;
  gpu::run_attention_backward<CudaTraining>(
      s, c, target,
      [](CudaStream& st, const AttentionBackwardCall& call, const kernel_params::AttentionBackwardParams& p) {
        return try_attention_backward_sm90a(st, call, p);
      });
}

}  // namespace hal::cuda
