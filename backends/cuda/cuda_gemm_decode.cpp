// Host side of the CUDA decode GEMM: the gate (HAL_GPU_UNVERIFIED, the
// "decode" path, mma.sync), then the shared launcher
// (backends/gpu/gemm_decode_launcher.h) on CUDA's streams and kernel names.
#include "backends/cuda/cuda_gemm_decode.h"

#include <atomic>

#include "backends/cuda/cuda_launch.h"
#include "backends/cuda/cuda_paths.h"
#include "backends/cuda/cuda_stream.h"
#include "backends/gpu/gemm_decode_launcher.h"
#include "backends/gpu/unverified.h"
#include "kernel_params/gemm_decode.h"

namespace hal::cuda {

namespace {

std::atomic<std::uint64_t> g_launches{0};

struct CudaDecode {
  using Stream = CudaStream;
  using LaunchShape = cuda::LaunchShape;
  static constexpr int kTileM = kernel_params::kDecodeCudaTileM;
  static constexpr int kMaxMTiles = 8;  // hal_gemm_decode_*_m64: 8 tiles of 8 rows
  static constexpr unsigned kLanes = 32;
  static constexpr const char* kReduceName = "hal_gemm_decode_reduce";
  static int units(CudaStream& s) { return stream_caps(s).sm_count; }
  static const char* pass1_name(bool f16, int m_tiles) {
    switch (m_tiles) {
      case 1: return f16 ? "hal_gemm_decode_f16_m8" : "hal_gemm_decode_bf16_m8";
      case 2: return f16 ? "hal_gemm_decode_f16_m16" : "hal_gemm_decode_bf16_m16";
      case 4: return f16 ? "hal_gemm_decode_f16_m32" : "hal_gemm_decode_bf16_m32";
      default: return f16 ? "hal_gemm_decode_f16_m64" : "hal_gemm_decode_bf16_m64";
    }
  }
};

}  // namespace

std::uint64_t gemm_decode_launch_count() { return g_launches.load(); }

bool try_gemm_decode(CudaStream& s, const GemmCall& call, const kernel_params::GemmParams& g) {
  if (!gpu::unverified_kernels_enabled() || !path_enabled("decode")) return false;
  if (stream_caps(s).cc_major < 8) return false;  // mma.sync
  if (!gpu::run_gemm_decode<CudaDecode>(s, call, g)) return false;
  g_launches.fetch_add(1);
  return true;
}

}  // namespace hal::cuda
