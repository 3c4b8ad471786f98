// Host side of the HIP decode GEMM: the gate (HAL_GPU_UNVERIFIED, wave64),
// then the shared launcher (backends/gpu/gemm_decode_launcher.h) on HIP's
// streams and kernel names.
#include "backends/hip/hip_gemm_decode.h"

#include "backends/gpu/gemm_decode_launcher.h"
#include "backends/gpu/unverified.h"
#include "backends/hip/hip_launch.h"
#include "backends/hip/hip_stream.h"
#include "kernel_params/gemm_decode.h"

namespace hal::hip {

namespace {

struct HipDecode {
  using Stream = HipStream;
  using LaunchShape = hip::LaunchShape;
  static constexpr int kTileM = kernel_params::kDecodeHipTileM;
  static constexpr int kMaxMTiles = 4;  // gemm_decode_*_m64: 4 tiles of 16 rows
  static constexpr unsigned kLanes = 64;  // wave64 (checked by the gate)
  static constexpr const char* kReduceName = "gemm_decode_reduce";
  static int units(HipStream& s) { return stream_caps(s).compute_units; }
  static const char* pass1_name(bool f16, int m_tiles) {
    switch (m_tiles) {
      case 1: return f16 ? "gemm_decode_f16_m16" : "gemm_decode_bf16_m16";
      case 2: return f16 ? "gemm_decode_f16_m32" : "gemm_decode_bf16_m32";
      default: return f16 ? "gemm_decode_f16_m64" : "gemm_decode_bf16_m64";
    }
  }
};

}  // namespace

bool try_gemm_decode(HipStream& s, const GemmCall& call, const kernel_params::GemmParams& g) {
  if (!gpu::unverified_kernels_enabled()) return false;
  if (stream_caps(s).wave_size != 64) return false;  // the lane maps are for wave64
  return gpu::run_gemm_decode<HipDecode>(s, call, g);
}

}  // namespace hal::hip
