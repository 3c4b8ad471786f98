// Launchers of the scaled-FP8 ops on HIP: quantize_fp8 / dequantize_fp8
// (hip/kernels/fp8_quantize.hip, through the shared backends/gpu/fp8_launcher.h)
// and gemm_fp8 / gemm_fp8_grouped (hip/kernels/gemm_fp8_mfma.hip):
//   - gemm_fp8 with M <= 64 and OCP operands, or FNUZ ones: first the fp8
//     decode GEMM (hip_gemm_fp8_decode.h, split K, weights streamed once);
//   - FNUZ operands (MI300X's fp8): gemm_fp8_mfma_fnuz_<a>_<b>, the fp8 MFMA
//     on gfx94x (the same kernel name holds the f16 path in the gfx90a code
//     object, which has no fp8 MFMA);
//   - OCP operands: gemm_fp8_mfma_f16 (exact conversion to f16, f16 MFMA):
//     CDNA3's fp8 MFMA would misread OCP bytes.
// All of it is behind HAL_GPU_UNVERIFIED=1 (backends/gpu/support.cpp) until
// a GPU run has verified it.
#include <algorithm>

#include "backends/gpu/fp8_launcher.h"
#include "backends/hip/hip_gemm_fp8_decode.h"
#include "backends/hip/hip_kernel_args.h"
#include "backends/hip/hip_ops.h"
#include "backends/hip/hip_stream.h"

namespace hal::hip {

namespace {

struct HipFp8 {
  using Stream = HipStream;
  using LaunchShape = hip::LaunchShape;
  static LaunchShape grid(std::int64_t work, HipStream& s) { return grid_stride_shape(work, stream_caps(s).compute_units); }
  static int units(HipStream& s) { return stream_caps(s).compute_units; }
};

constexpr int kTile = 64;  // gemm_fp8_mfma.hip kTile
constexpr std::int64_t kMaxGridY = 65535;

const char* gemm_fp8_kernel(const kernel_params::GemmFp8Params& p) {
  const bool a_fnuz = p.a_type == elem_type(DType::f8e4m3fnuz) || p.a_type == elem_type(DType::f8e5m2fnuz);
  const bool b_fnuz = p.b_type == elem_type(DType::f8e4m3fnuz) || p.b_type == elem_type(DType::f8e5m2fnuz);
  if (!a_fnuz || !b_fnuz) return "gemm_fp8_mfma_f16";
  // [a is e5m2][b is e5m2]
  static constexpr const char* kNames[2][2] = {{"gemm_fp8_mfma_fnuz_e4m3_e4m3", "gemm_fp8_mfma_fnuz_e4m3_e5m2"},
                                               {"gemm_fp8_mfma_fnuz_e5m2_e4m3", "gemm_fp8_mfma_fnuz_e5m2_e5m2"}};
  return kNames[p.a_type == elem_type(DType::f8e5m2fnuz)][p.b_type == elem_type(DType::f8e5m2fnuz)];
}

void launch_gemm_fp8(HipStream& s, const kernel_params::GemmFp8Params& p) {
  if (p.m_tiles == 0) return;
  LaunchShape shape;
  shape.block[0] = 256;
  shape.grid[0] = static_cast<unsigned>((p.g.n + kTile - 1) / kTile);
  shape.grid[1] = static_cast<unsigned>(std::min<std::int64_t>(p.m_tiles, kMaxGridY));
  launch(s, gemm_fp8_kernel(p), shape, p);
}

}  // namespace

void run_quantize_fp8(HipStream& s, const QuantizeFp8Call& call) { gpu::run_quantize_fp8<HipFp8>(s, call); }
void run_dequantize_fp8(HipStream& s, const DequantizeFp8Call& call) { gpu::run_dequantize_fp8<HipFp8>(s, call); }

void run_gemm_fp8(HipStream& s, const GemmFp8Call& call) {
  kernel_params::GemmFp8Params p = gpu::gemm_fp8_params(call);
  if (p.g.m == 0 || p.g.n == 0) return;
  if (try_gemm_fp8_decode(s, p)) return;
  gpu::set_fp8_m_tiles(p, kTile, nullptr, "hip");
  launch_gemm_fp8(s, p);
}

void run_gemm_fp8_grouped(HipStream& s, const GemmFp8GroupedCall& call) {
  gpu::GroupedFp8Launch l = gpu::grouped_fp8_params(s, call);  // checks the offsets, whatever the sizes
  if (l.params.g.m == 0 || l.params.g.n == 0) return;
  gpu::set_fp8_m_tiles(l.params, kTile, l.offsets.data(), "hip");
  launch_gemm_fp8(s, l.params);
}

}  // namespace hal::hip
