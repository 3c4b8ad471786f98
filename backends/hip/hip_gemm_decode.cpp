// Host side of the HIP decode GEMM: the shared plan, the stream's cached
// workspace, two launches (pass 1 per M variant, pass 2 the reduction).
#include "backends/hip/hip_gemm_decode.h"

#include "backends/gpu/gemm_decode_plan.h"
#include "backends/gpu/unverified.h"
#include "backends/hip/hip_launch.h"
#include "backends/hip/hip_stream.h"
#include "kernel_params/gemm_decode.h"

namespace hal::hip {

namespace {

constexpr int kMaxMTiles = 4;  // gemm_decode_*_m64: 4 tiles of 16 rows

const char* pass1_name(bool f16, int m_tiles) {
  switch (m_tiles) {
    case 1: return f16 ? "gemm_decode_f16_m16" : "gemm_decode_bf16_m16";
    case 2: return f16 ? "gemm_decode_f16_m32" : "gemm_decode_bf16_m32";
    default: return f16 ? "gemm_decode_f16_m64" : "gemm_decode_bf16_m64";
  }
}

}  // namespace

bool try_gemm_decode(HipStream& s, const GemmCall& call, const kernel_params::GemmParams& g) {
  if (!gpu::unverified_kernels_enabled()) return false;
  const HipDeviceCaps& caps = stream_caps(s);
  if (caps.wave_size != 64) return false;  // the lane maps are for wave64
  const gpu::DecodeGemmPlan plan =
      gpu::plan_decode_gemm(g, caps.compute_units, kernel_params::kDecodeHipTileM, kMaxMTiles);
  if (!plan.ok) return false;

  kernel_params::GemmDecodeParams p = gpu::decode_gemm_params(g, plan);
  p.partial = static_cast<float*>(s.workspace(static_cast<std::size_t>(plan.workspace_floats) * sizeof(float)));
  LaunchShape pass1;
  pass1.grid[0] = static_cast<unsigned>(plan.ctas);
  pass1.block[0] = 64 * kernel_params::kDecodeWarpsPerCta;
  launch(s, pass1_name(call.a.dtype == DType::f16, plan.m_tiles), pass1, p);

  kernel_params::GemmDecodeReduceParams r{};
  r.g = g;
  r.partial = p.partial;
  r.splits = plan.splits;
  LaunchShape pass2;
  pass2.grid[0] = static_cast<unsigned>(plan.reduce_blocks);
  pass2.block[0] = kernel_params::kDecodeReduceThreads;
  launch(s, "gemm_decode_reduce", pass2, r);
  return true;
}

}  // namespace hal::hip
