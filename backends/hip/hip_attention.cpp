// Launcher of attention (hip/kernels/attention_general.hip): one wave64 per
// (batch, query, head) row; head dims up to kAttentionMaxHeadDim.
#include <fmt/format.h>

#include "backends/hip/hip_device.h"
#include "backends/hip/hip_kernel_args.h"
#include "backends/hip/hip_ops.h"
#include "backends/hip/hip_stream.h"
#include "hal/error.h"
#include "hip/kernels/attention_params.h"

namespace hal::hip {

void run_attention(HipStream& s, const AttentionCall& c) {
  kernels::AttentionParams p{};
  p.q = c.q.first();
  p.k = c.k.first();
  p.v = c.v.first();
  p.y = c.y.first();
  p.batch = c.q.shape[0];
  p.sq = c.q.shape[1];
  p.hq = c.q.shape[2];
  p.d = c.q.shape[3];
  p.sk = c.k.shape[1];
  p.hkv = c.k.shape[2];
  p.dv = c.v.shape[3];
  if (p.d > kernels::kAttentionMaxHeadDim || p.dv > kernels::kAttentionMaxHeadDim)
    throw Error(ErrorCode::unsupported, fmt::format("hip: attention is not supported for head dims {} / {} "
                                                    "(the kernel holds at most {} per row in registers)",
                                                    p.d, p.dv, kernels::kAttentionMaxHeadDim));
  for (int d = 0; d < 4; ++d) {
    p.q_stride[d] = c.q.strides[d];
    p.k_stride[d] = c.k.strides[d];
    p.v_stride[d] = c.v.strides[d];
    p.y_stride[d] = c.y.strides[d];
  }
  p.q_type = elem_type(c.q.dtype);
  p.k_type = elem_type(c.k.dtype);
  p.v_type = elem_type(c.v.dtype);
  p.y_type = elem_type(c.y.dtype);
  p.scale = c.scale;
  p.causal = c.causal;
  const std::int64_t rows = p.batch * p.sq * p.hq;
  if (rows == 0 || p.dv == 0) return;
  constexpr int kRowsPerBlock = kernels::kAttentionThreads / 64;
  LaunchShape shape;
  shape.block[0] = kernels::kAttentionThreads;
  shape.grid[0] = static_cast<unsigned>(std::min<std::int64_t>((rows + kRowsPerBlock - 1) / kRowsPerBlock, 1 << 20));
  launch(s, "attention_general", shape, p);
}

}  // namespace hal::hip
