// Host side of the CUDA fp8 decode GEMM: the gate (HAL_GPU_UNVERIFIED, the
// "decode" path, mma.sync), the plan, the stream's workspace, then pass 1
// (hal_gemm_fp8_decode_*) and pass 2 (the 16-bit decode GEMM's
// hal_gemm_decode_reduce, which applies gemm_fp8's epilogue from
// GemmFp8Params::g) in stream order.
#include "backends/cuda/cuda_gemm_fp8_decode.h"

#include <atomic>
#include <cstddef>

#include "backends/cuda/cuda_launch.h"
#include "backends/cuda/cuda_paths.h"
#include "backends/cuda/cuda_stream.h"
#include "backends/gpu/gemm_fp8_decode_plan.h"
#include "backends/gpu/unverified.h"
#include "kernel_params/gemm_decode.h"
#include "kernel_params/gemm_fp8_decode.h"

namespace hal::cuda {

namespace {
std::atomic<std::uint64_t> g_launches{0};
}  // namespace

std::uint64_t gemm_fp8_decode_launch_count() { return g_launches.load(); }

bool try_gemm_fp8_decode(CudaStream& s, const kernel_params::GemmFp8Params& p) {
  if (!gpu::unverified_kernels_enabled() || !path_enabled("decode")) return false;
  const CudaDeviceCaps& caps = stream_caps(s);
  if (caps.cc_major < 8) return false;  // mma.sync
  const gpu::Fp8DecodePlan plan = gpu::plan_fp8_decode_gemm(p, caps.sm_count);
  if (!plan.ok) return false;

  kernel_params::GemmFp8DecodeParams d = gpu::fp8_decode_params(p, plan);
  d.partial = static_cast<float*>(s.workspace(static_cast<std::size_t>(plan.workspace_floats) * sizeof(float)));
  LaunchShape pass1;
  pass1.grid[0] = static_cast<unsigned>(plan.ctas);
  pass1.block[0] = 32 * kernel_params::kDecodeWarpsPerCta;
  launch(s, gpu::fp8_decode_kernel_name(p, plan), pass1, d);

  kernel_params::GemmDecodeReduceParams r{};
  r.g = p.g;
  r.partial = d.partial;
  r.splits = plan.splits;
  LaunchShape pass2;
  pass2.grid[0] = static_cast<unsigned>(plan.reduce_blocks);
  pass2.block[0] = kernel_params::kDecodeReduceThreads;
  launch(s, "hal_gemm_decode_reduce", pass2, r);
  g_launches.fetch_add(1);
  return true;
}

}  // namespace hal::cuda
