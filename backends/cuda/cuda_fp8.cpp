// Launchers of the scaled-FP8 ops on CUDA: quantize_fp8 / dequantize_fp8
// (ptx/kernels/fp8_quantize.cu, through the shared backends/gpu/fp8_launcher.h)
// and gemm_fp8 / gemm_fp8_grouped, which pick per call
//   -. gemm_fp8 only, M <= 64: the fp8 decode GEMM (cuda_gemm_fp8_decode.h,
//      split K, weights streamed once; path "decode" turns it off);
//   0. hal_gemm_fp8_sm90a_<a>_<b> (ptx/kernels/gemm_fp8_sm90a.cu): TMA +
//      wgmma on sm_90 with sm_90a code (A scales by TMA too when M-major,
//      path "wgmma_fp8_tma_scales"), OCP e4m3/e5m2 operands contiguous
//      along K with 16-byte-aligned bases and rows (path "wgmma_fp8" in
//      HAL_CUDA_DISABLE turns it off);
//   1. hal_gemm_fp8_sm80 (gemm_fp8_sm80.cu): sm_80+ tensor cores through an
//      exact fp8 -> bf16 conversion in shared memory (mma.sync bf16), any
//      format and strides (path "fp8_mma");
//   2. hal_gemm_fp8_general (gemm_fp8_general.cu): CUDA cores, the rest.
// All of it is behind HAL_GPU_UNVERIFIED=1 (backends/gpu/support.cpp) until
// a GPU run has verified it.
#include <algorithm>
#include <cstring>

#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/cuda_gemm_fp8_decode.h"
#include "backends/cuda/cuda_kernel_args.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_paths.h"
#include "backends/cuda/cuda_stream.h"
#include "backends/gpu/fp8_launcher.h"
#include "hal/shape.h"
#include "ptx/kernels/gemm_fp8_sm90a_params.h"

namespace hal::cuda {

namespace {

struct CudaFp8 {
  using Stream = CudaStream;
  using LaunchShape = cuda::LaunchShape;
  static LaunchShape grid(std::int64_t work, CudaStream& s) { return grid_stride_shape(work, stream_caps(s).sm_count); }
  static int units(CudaStream& s) { return stream_caps(s).sm_count; }
};

using Tile = ptx::GemmFp8Sm90aTile;
constexpr int kGeneralTile = 64;  // gemm_fp8_general.cu and gemm_fp8_sm80.cu kTile
constexpr std::int64_t kMaxGridY = 65535;

// A [rows, k] byte matrix, k contiguous, `row_stride` bytes apart: box
// {128, 128} (128 bytes = the 128B swizzle span), zero fill out of bounds.
bool encode_fp8_map(ptx::TmaDescriptorBytes& out, const void* base, std::int64_t rows, std::int64_t k,
                    std::int64_t row_stride) {
  const Driver* d = driver();
  if (d == nullptr || d->cuTensorMapEncodeTiled == nullptr) return false;
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(row_stride)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(Tile::kBlockK), static_cast<cuuint32_t>(Tile::kBlockM)};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = d->cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void*>(base), dims,
                                               strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return false;
  static_assert(sizeof(CUtensorMap) == sizeof(ptx::TmaDescriptorBytes), "opaque TMA descriptor must match CUtensorMap");
  std::memcpy(out.bytes, &map, sizeof(map));
  return true;
}

// a_scales seen as [k_blocks][M] f32 (M-major): box {128 rows, 1 k-block}, no
// swizzle, zero fill past M. False (no TMA of the scales) unless the layout allows it.
bool encode_scale_map(ptx::TmaDescriptorBytes& out, const kernel_params::GemmFp8Params& p) {
  const Driver* d = driver();
  if (d == nullptr || d->cuTensorMapEncodeTiled == nullptr || !path_enabled("wgmma_fp8_tma_scales")) return false;
  const std::int64_t m = p.g.m, kb = p.k_blocks, stride = p.sa_k_stride;
  if (p.sa_m_stride != 1 || (kb > 1 && (stride < m || (stride * 4) % 16 != 0)) || !aligned16(p.a_scales) ||
      m > 0xffffffffLL)
    return false;
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(m), static_cast<cuuint64_t>(kb)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(kb > 1 ? stride * 4 : ((m * 4 + 15) / 16) * 16)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(Tile::kBlockM), 1};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = d->cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2,
                                               const_cast<float*>(p.a_scales), dims, strides, box, elem_strides,
                                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                               CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return false;
  std::memcpy(out.bytes, &map, sizeof(map));
  return true;
}

bool is_ocp(std::int32_t t) { return t == elem_type(DType::f8e4m3) || t == elem_type(DType::f8e5m2); }
bool tma_rows_ok(std::int64_t row_stride, std::int64_t k) {
  return row_stride >= k && row_stride % 16 == 0 && row_stride < (std::int64_t{1} << 40);
}

// The sm_90a kernel for `p` (m_tiles for its 128-row tiles already set),
// or false with nothing launched.
bool try_gemm_fp8_sm90a(CudaStream& s, const kernel_params::GemmFp8Params& p, std::int64_t b_rows) {
  const CudaDeviceCaps& caps = stream_caps(s);
  if (caps.cc_major != 9 || !caps.has_sm90a_kernels || caps.sm_count <= 0 ||
      caps.max_shared_per_block_optin < Tile::kSharedBytes || !path_enabled("wgmma_fp8"))
    return false;
  const kernel_params::GemmParams& g = p.g;
  if (!is_ocp(p.a_type) || !is_ocp(p.b_type) || g.k == 0 || g.a_k_stride != 1 || g.b_k_stride != 1 ||
      !tma_rows_ok(g.a_m_stride, g.k) || !tma_rows_ok(g.b_n_stride, g.k) || !aligned16(g.a) || !aligned16(g.b))
    return false;
  if (p.groups > 0 && p.b_group_stride != g.n * g.b_n_stride) return false;  // one map over [G * N, K]
  const std::int64_t n_tiles = ceil_div(g.n, std::int64_t{Tile::kBlockN});
  if (p.m_tiles == 0) return true;  // every group empty: nothing to write
  if (static_cast<std::int64_t>(p.m_tiles) * n_tiles > 0x7fffffffLL || b_rows > 0xffffffffLL || g.m > 0xffffffffLL)
    return false;
  ptx::GemmFp8Sm90aParams k{};
  if (!encode_fp8_map(k.a_map, g.a, g.m, g.k, g.a_m_stride) || !encode_fp8_map(k.b_map, g.b, b_rows, g.k, g.b_n_stride))
    return false;
  k.scales_tma = encode_scale_map(k.sa_map, p) ? 1 : 0;
  k.f = p;
  k.n_tiles = static_cast<std::int32_t>(n_tiles);
  LaunchShape shape;
  shape.grid[0] = static_cast<unsigned>(std::min<std::int64_t>(caps.sm_count, p.m_tiles * n_tiles));
  shape.block[0] = Tile::kThreads;
  shape.shared_bytes = Tile::kSharedBytes;
  // [a is e5m2][b is e5m2]
  static constexpr const char* kNames[2][2] = {{"hal_gemm_fp8_sm90a_e4m3_e4m3", "hal_gemm_fp8_sm90a_e4m3_e5m2"},
                                               {"hal_gemm_fp8_sm90a_e5m2_e4m3", "hal_gemm_fp8_sm90a_e5m2_e5m2"}};
  const int a5 = p.a_type == elem_type(DType::f8e5m2), b5 = p.b_type == elem_type(DType::f8e5m2);
  launch(s, kNames[a5][b5], shape, k);
  return true;
}

// The 64 x 64-tile kernels: mma.sync through bf16 on sm_80+, else CUDA cores.
void launch_gemm_fp8_tiled(CudaStream& s, const kernel_params::GemmFp8Params& p) {
  const bool mma = stream_caps(s).cc_major >= 8 && path_enabled("fp8_mma");
  LaunchShape shape;
  shape.grid[0] = static_cast<unsigned>(ceil_div(p.g.n, std::int64_t{kGeneralTile}));
  shape.grid[1] = static_cast<unsigned>(std::min<std::int64_t>(p.m_tiles, kMaxGridY));
  shape.block[0] = mma ? 128 : 256;
  launch(s, mma ? "hal_gemm_fp8_sm80" : "hal_gemm_fp8_general", shape, p);
}

}  // namespace

void run_quantize_fp8(CudaStream& s, const QuantizeFp8Call& call) { gpu::run_quantize_fp8<CudaFp8>(s, call); }
void run_dequantize_fp8(CudaStream& s, const DequantizeFp8Call& call) { gpu::run_dequantize_fp8<CudaFp8>(s, call); }

void run_gemm_fp8(CudaStream& s, const GemmFp8Call& call) {
  kernel_params::GemmFp8Params p = gpu::gemm_fp8_params(call);
  if (p.g.m == 0 || p.g.n == 0) return;
  if (try_gemm_fp8_decode(s, p)) return;
  gpu::set_fp8_m_tiles(p, Tile::kBlockM, nullptr, "cuda");
  if (try_gemm_fp8_sm90a(s, p, p.g.n)) return;
  gpu::set_fp8_m_tiles(p, kGeneralTile, nullptr, "cuda");
  launch_gemm_fp8_tiled(s, p);
}

void run_gemm_fp8_grouped(CudaStream& s, const GemmFp8GroupedCall& call) {
  gpu::GroupedFp8Launch l = gpu::grouped_fp8_params(s, call);  // checks the offsets, whatever the sizes
  kernel_params::GemmFp8Params& p = l.params;
  if (p.g.m == 0 || p.g.n == 0) return;
  gpu::set_fp8_m_tiles(p, Tile::kBlockM, l.offsets.data(), "cuda");
  if (try_gemm_fp8_sm90a(s, p, call.b.shape[0] * p.g.n)) return;
  gpu::set_fp8_m_tiles(p, kGeneralTile, l.offsets.data(), "cuda");
  if (p.m_tiles > 0) launch_gemm_fp8_tiled(s, p);
}

}  // namespace hal::cuda
