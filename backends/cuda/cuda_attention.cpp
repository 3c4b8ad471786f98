// Launcher of the attention kernels. For now every call runs
// hal_attention_general (ptx/kernels/attention_general.cu): any head dims,
// strides and float dtype, one warp per (batch, query, head). The tensor-core
// flash-attention kernel for d in {64, 128} is not written yet.
#include "backends/cuda/cuda_launch.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_stream.h"
#include "hal/error.h"
#include "ptx/kernels/attention_params.h"

namespace hal::cuda {

namespace {
constexpr int kWarpsPerBlock = 8;  // attention_general.cu
}

void run_attention(CudaStream& s, const AttentionCall& call) {
  ptx::AttentionParams p{};
  p.q = call.q.first();
  p.k = call.k.first();
  p.v = call.v.first();
  p.y = call.y.first();
  for (int d = 0; d < 4; ++d) {
    p.q_stride[d] = call.q.strides[d];
    p.k_stride[d] = call.k.strides[d];
    p.v_stride[d] = call.v.strides[d];
    p.y_stride[d] = call.y.strides[d];
  }
  p.batch = call.q.shape[0];
  p.sq = call.q.shape[1];
  p.hq = static_cast<std::int32_t>(call.q.shape[2]);
  p.d = static_cast<std::int32_t>(call.q.shape[3]);
  p.sk = call.k.shape[1];
  p.hkv = static_cast<std::int32_t>(call.k.shape[2]);
  p.dv = static_cast<std::int32_t>(call.v.shape[3]);
  p.qkv_type = static_cast<std::uint8_t>(call.q.dtype);
  p.y_type = static_cast<std::uint8_t>(call.y.dtype);
  p.causal = call.causal;
  p.scale = call.scale;
  const std::int64_t rows = p.batch * p.sq * p.hq;
  if (rows == 0 || p.dv == 0) return;
  const std::int64_t blocks = (rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  if (blocks > 0x7fffffffLL) throw_unsupported("cuda", "attention", "at most 2^34 query rows");
  LaunchShape shape;
  shape.grid[0] = static_cast<unsigned>(blocks);
  shape.block[0] = 32 * kWarpsPerBlock;
  launch(s, "hal_attention_general", shape, p);
}

}  // namespace hal::cuda
