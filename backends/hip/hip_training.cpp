// Launchers of the training ops (hip/kernels/training_*.hip, for
// embedding_backward embedding_backward.hip and for rope_backward rows_rope.hip): the shared GPU launchers
// (backends/gpu/training_launcher.h) on Hip's streams and grids.
#include "backends/hip/hip_device.h"
#include "backends/hip/hip_kernel_args.h"
#include "backends/hip/hip_ops.h"
#include "backends/hip/hip_stream.h"
#include "backends/gpu/attention_backward_launcher.h"
#include "backends/gpu/training_launcher.h"

namespace hal::hip {

namespace {

struct HipTraining {
  using Stream = HipStream;
  using LaunchShape = hip::LaunchShape;
  static constexpr const char* name = "hip";
  static LaunchShape grid(std::int64_t work, HipStream& s) { return grid_stride_shape(work, stream_caps(s).compute_units); }
  // The HIP rope kernel takes one work item per rotated pair or passed-through
  // channel of a head (run_rope in hip_rows.cpp).
  static std::int64_t rope_work(const Tensor& x, int rotary_dim) {
    return x.shape[0] * x.shape[1] * x.shape[2] * (x.shape[3] - rotary_dim / 2);
  }
};

}  // namespace

void run_unary_backward(HipStream& s, const UnaryBackwardCall& c) { gpu::run_unary_backward<HipTraining>(s, c); }
void run_swiglu_backward(HipStream& s, const SwigluBackwardCall& c) { gpu::run_swiglu_backward<HipTraining>(s, c); }
void run_softmax_backward(HipStream& s, const SoftmaxBackwardCall& c) { gpu::run_softmax_backward<HipTraining>(s, c); }
void run_norm_backward(HipStream& s, const NormBackwardCall& c) { gpu::run_norm_backward<HipTraining>(s, c); }
void run_rope_backward(HipStream& s, const RopeBackwardCall& c) { gpu::run_rope_backward<HipTraining>(s, c); }
void run_adamw(HipStream& s, const AdamwCall& c) { gpu::run_adamw<HipTraining>(s, c); }
void run_global_norm(HipStream& s, const GlobalNormCall& c) { gpu::run_global_norm<HipTraining>(s, c); }
void run_cross_entropy(HipStream& s, const CrossEntropyCall& c) { gpu::run_cross_entropy<HipTraining>(s, c); }
void run_embedding_backward(HipStream& s, const EmbeddingBackwardCall& c) { gpu::run_embedding_backward<HipTraining>(s, c); }

// The MFMA kernels (hip/kernels/attention_backward_mfma.hip) unless
// HAL_HIP_DISABLE=attention_bwd_mfma (or =all), the wave64 kernels
// (attention_backward_general.hip) for every other shape.
void run_attention_backward(HipStream& s, const AttentionBackwardCall& c) {
  gpu::AttentionBackwardTarget target;
  target.warp_size = 64;
  target.tensor_cores = hip_path_enabled("attention_bwd_mfma");
  target.mfma = true;
  gpu::run_attention_backward<HipTraining>(s, c, target);
}

}  // namespace hal::hip
