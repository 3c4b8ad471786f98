// Launcher of the GEMM kernels: f16 / bf16 operands go to the MFMA kernel
// (hip/kernels/gemm_mfma.hip, any strides), f32 to the general kernel
// (hip/kernels/gemm_general.hip). Arguments: backends/gpu/kernel_args.h.
// With HAL_GPU_UNVERIFIED=1, M <= 64 calls with K-contiguous f16/bf16
// operands go to the decode GEMM first (hip_gemm_decode.cpp; never run yet).
#include "backends/hip/hip_device.h"
#include "backends/hip/hip_gemm_decode.h"
#include "backends/hip/hip_kernel_args.h"
#include "backends/hip/hip_ops.h"
#include "backends/hip/hip_stream.h"
#include "hip/kernels/gemm_geometry.h"

namespace hal::hip {

namespace {

unsigned blocks(std::int64_t n, int tile) { return static_cast<unsigned>((n + tile - 1) / tile); }

}  // namespace

void run_gemm(HipStream& s, const GemmCall& c) {
  const kernel_params::GemmParams p = gpu::gemm_params(c);
  if (p.m == 0 || p.n == 0 || p.batch == 0) return;
  if (try_gemm_decode(s, c, p)) return;
  LaunchShape shape;
  shape.grid[2] = static_cast<unsigned>(p.batch);
  if (c.a.dtype == DType::f16 || c.a.dtype == DType::bf16) {
    using Tile = kernels::GemmMfmaTile;
    shape.block[0] = Tile::kThreads;
    shape.grid[0] = blocks(p.n, Tile::kBlockN);
    shape.grid[1] = blocks(p.m, Tile::kBlockM);
    launch(s, c.a.dtype == DType::f16 ? "gemm_mfma_f16" : "gemm_mfma_bf16", shape, p);
  } else {
    constexpr int T = kernels::GemmGeneralTile::kTile;
    shape.block[0] = T * T;
    shape.grid[0] = blocks(p.n, T);
    shape.grid[1] = blocks(p.m, T);
    launch(s, "gemm_general", shape, p);
  }
}

}  // namespace hal::hip
