// Host side of the HIP fp8 decode GEMM: the gate (HAL_GPU_UNVERIFIED, wave64,
// the "decode" path), the plan, the stream's workspace, then pass 1
// (gemm_fp8_decode_*) and pass 2 (gemm_decode.hip's gemm_decode_reduce, which
// applies gemm_fp8's epilogue from GemmFp8Params::g) in stream order.
#include "backends/hip/hip_gemm_fp8_decode.h"

#include <cstddef>

#include "backends/gpu/gemm_fp8_decode_plan.h"
#include "backends/gpu/unverified.h"
#include "backends/hip/hip_launch.h"
#include "backends/hip/hip_ops.h"
#include "backends/hip/hip_stream.h"
#include "kernel_params/gemm_decode.h"
#include "kernel_params/gemm_fp8_decode.h"

namespace hal::hip {

bool try_gemm_fp8_decode(HipStream& s, const kernel_params::GemmFp8Params& p) {
  if (!gpu::unverified_kernels_enabled() || !hip_path_enabled("decode")) return false;
  const HipDeviceCaps& caps = stream_caps(s);
  if (caps.wave_size != 64) return false;  // the lane maps are for wave64
  const gpu::Fp8DecodePlan plan =
      gpu::plan_fp8_decode_gemm(p, caps.compute_units, gpu::kFp8DecodeTuning, kernel_params::kDecodeHipTileM,
                                /*accept_fnuz=*/true);
  if (!plan.ok) return false;

  kernel_params::GemmFp8DecodeParams d = gpu::fp8_decode_params(p, plan);
  d.partial = static_cast<float*>(s.workspace(static_cast<std::size_t>(plan.workspace_floats) * sizeof(float)));
  LaunchShape pass1;
  pass1.grid[0] = static_cast<unsigned>(plan.ctas);
  pass1.block[0] = 64 * kernel_params::kDecodeWarpsPerCta;
  launch(s, gpu::fp8_decode_kernel_name(p, plan, /*hip=*/true), pass1, d);

  kernel_params::GemmDecodeReduceParams r{};
  r.g = p.g;
  r.partial = d.partial;
  r.splits = plan.splits;
  LaunchShape pass2;
  pass2.grid[0] = static_cast<unsigned>(plan.reduce_blocks);
  pass2.block[0] = kernel_params::kDecodeReduceThreads;
  launch(s, "gemm_decode_reduce", pass2, r);
  return true;
}

}  // namespace hal::hip
