// Host side of the CUDA decode GEMM: the shared plan, the stream's cached
// workspace, two launches (pass 1 per M variant, pass 2 the reduction).
#include "backends/cuda/cuda_gemm_decode.h"

#include <atomic>

#include "backends/cuda/cuda_launch.h"
#include "backends/cuda/cuda_paths.h"
#include "backends/cuda/cuda_stream.h"
#include "backends/gpu/gemm_decode_plan.h"
#include "backends/gpu/unverified.h"
#include "kernel_params/gemm_decode.h"

namespace hal::cuda {

namespace {

std::atomic<std::uint64_t> g_launches{0};

constexpr int kMaxMTiles = 8;  // hal_gemm_decode_*_m64: 8 tiles of 8 rows

const char* pass1_name(bool f16, int m_tiles) {
  switch (m_tiles) {
    case 1: return f16 ? "hal_gemm_decode_f16_m8" : "hal_gemm_decode_bf16_m8";
    case 2: return f16 ? "hal_gemm_decode_f16_m16" : "hal_gemm_decode_bf16_m16";
    case 4: return f16 ? "hal_gemm_decode_f16_m32" : "hal_gemm_decode_bf16_m32";
    default: return f16 ? "hal_gemm_decode_f16_m64" : "hal_gemm_decode_bf16_m64";
  }
}

}  // namespace

std::uint64_t gemm_decode_launch_count() { return g_launches.load(); }

bool try_gemm_decode(CudaStream& s, const GemmCall& call, const kernel_params::GemmParams& g) {
  if (!gpu::unverified_kernels_enabled() || !path_enabled("decode")) return false;
  const CudaDeviceCaps& caps = stream_caps(s);
  if (caps.cc_major < 8) return false;  // mma.sync
  const gpu::DecodeGemmPlan plan =
      gpu::plan_decode_gemm(g, caps.sm_count, kernel_params::kDecodeCudaTileM, kMaxMTiles);
  if (!plan.ok) return false;

  kernel_params::GemmDecodeParams p = gpu::decode_gemm_params(g, plan);
  p.partial = static_cast<float*>(s.workspace(static_cast<std::size_t>(plan.workspace_floats) * sizeof(float)));
  LaunchShape pass1;
  pass1.grid[0] = static_cast<unsigned>(plan.ctas);
  pass1.block[0] = 32 * kernel_params::kDecodeWarpsPerCta;
  launch(s, pass1_name(call.a.dtype == DType::f16, plan.m_tiles), pass1, p);

  kernel_params::GemmDecodeReduceParams r{};
  r.g = g;
  r.partial = p.partial;
  r.splits = plan.splits;
  LaunchShape pass2;
  pass2.grid[0] = static_cast<unsigned>(plan.reduce_blocks);
  pass2.block[0] = kernel_params::kDecodeReduceThreads;
  launch(s, "hal_gemm_decode_reduce", pass2, r);
  g_launches.fetch_add(1);
  return true;
}

}  // namespace hal::cuda
