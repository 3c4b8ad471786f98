#pragma once
// The decode GEMM's host logic that both GPU backends share (as
// embedding_launcher.h): the plan (gemm_decode_plan.h), the stream's cached
// workspace for the per-split partials, and the two launches in stream order
// (pass 1, one variant per M tile count; pass 2, the fixed-order reduction
// over splits). Whether a call may take this path (HAL_GPU_UNVERIFIED, the
// device's generation / wave size) is each vendor's (cuda_gemm_decode.cpp,
// hip_gemm_decode.cpp).
//
// `Backend` names what differs between vendors: Stream, LaunchShape,
// units(stream) (SMs / CUs of the stream's partition), kTileM (rows of M per
// matrix instruction), kMaxMTiles (the largest variant compiled), kLanes
// (threads per warp / wavefront), pass1_name(f16, m_tiles) and kReduceName.
// launch(stream, name, shape, params) is the backend's, found through Stream.
#include <cstddef>

#include "backends/gpu/gemm_decode_plan.h"
#include "hal/op.h"
#include "kernel_params/gemm.h"
#include "kernel_params/gemm_decode.h"

namespace hal::gpu {

// Returns false (nothing queued) when the plan declines the call.
template <class Backend>
bool run_gemm_decode(typename Backend::Stream& s, const GemmCall& call, const kernel_params::GemmParams& g) {
  const DecodeGemmPlan plan = plan_decode_gemm(g, Backend::units(s), Backend::kTileM, Backend::kMaxMTiles);
  if (!plan.ok) return false;

  kernel_params::GemmDecodeParams p = decode_gemm_params(g, plan);
  p.partial = static_cast<float*>(s.workspace(static_cast<std::size_t>(plan.workspace_floats) * sizeof(float)));
  typename Backend::LaunchShape pass1;
  pass1.grid[0] = static_cast<unsigned>(plan.ctas);
  pass1.block[0] = Backend::kLanes * kernel_params::kDecodeWarpsPerCta;
  launch(s, Backend::pass1_name(call.a.dtype == DType::f16, plan.m_tiles), pass1, p);

  kernel_params::GemmDecodeReduceParams r{};
  r.g = g;
  r.partial = p.partial;
  r.splits = plan.splits;
  typename Backend::LaunchShape pass2;
  pass2.grid[0] = static_cast<unsigned>(plan.reduce_blocks);
  pass2.block[0] = kernel_params::kDecodeReduceThreads;
  launch(s, Backend::kReduceName, pass2, r);
  return true;
}

}  // namespace hal::gpu
