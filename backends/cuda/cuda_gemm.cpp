// Launcher of the GEMM kernels. Picks, per call:
//   -. hal_gemm_decode_* (cuda_gemm_decode.cpp): M <= 64, f16/bf16 contiguous
//      along K, split K; only with HAL_GPU_UNVERIFIED=1 (never run yet);
//   0. hal_gemm_sm90a_<f16|bf16> (cuda_gemm_sm90a.cpp): TMA + wgmma on sm_90
//      with sm_90a code, A and B contiguous along K (path "wgmma");
//   1. hal_gemm_sm80_<f16|bf16>: tensor cores (mma.sync), when A and B are
//      f16/bf16, each contiguous along K or along M/N with 16-byte-aligned
//      rows and batch strides, and the device is sm_80 or newer;
//   2. hal_gemm_general: every other valid call (f32, odd strides, broadcast
//      views, misaligned data).
// Both apply the same fused epilogue (alpha, beta*C, bias, activation, one
// rounding to C's dtype).
#include <algorithm>

#include "backends/cuda/cuda_gemm_decode.h"
#include "backends/cuda/cuda_gemm_sm90a.h"
#include "backends/cuda/cuda_kernel_args.h"
#include "backends/cuda/cuda_launch.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_stream.h"
#include "hal/shape.h"

namespace hal::cuda {

namespace {

constexpr unsigned kMaxGridYZ = 65535;
constexpr int kSm80Tile = 128;                          // gemm_sm80.cu Config::kBlockM/N
constexpr unsigned kSm80SharedBytes = 4 * 2 * 128 * 32 * 2;  // Config::kSharedBytes (64 KiB)
constexpr int kGeneralTile = 64;                        // gemm_general.cu kTile

bool stride_aligned16(std::int64_t elements) { return (elements * 2) % 16 == 0; }

// Operand with logical extents (rows, k) and strides (row_stride, k_stride):
// usable by the tensor-core kernel as K-major (returns 1), MN-major (0) or not
// at all (-1).
int sm80_layout(std::int64_t rows, std::int64_t k, std::int64_t row_stride, std::int64_t k_stride,
                std::int64_t batch_stride) {
  if (!stride_aligned16(batch_stride)) return -1;
  if ((k_stride == 1 || k == 1) && (stride_aligned16(row_stride) || rows == 1)) return 1;
  if ((row_stride == 1 || rows == 1) && (stride_aligned16(k_stride) || k == 1)) return 0;
  return -1;
}

}  // namespace

void run_gemm(CudaStream& s, const GemmCall& call) {
  const Tensor& a = call.a;
  kernel_params::GemmParams p = gpu::gemm_params(call);
  if (p.m == 0 || p.n == 0 || p.batch == 0) return;
  if (try_gemm_decode(s, call, p)) return;
  if (try_gemm_sm90a(s, call, p)) return;

  const CudaDeviceCaps& caps = stream_caps(s);
  const bool half_inputs = a.dtype == DType::f16 || a.dtype == DType::bf16;
  if (half_inputs && caps.cc_major >= 8 && aligned16(p.a) && aligned16(p.b) &&
      static_cast<unsigned>(caps.max_shared_per_block_optin) >= kSm80SharedBytes) {
    const int a_layout = sm80_layout(p.m, p.k, p.a_m_stride, p.a_k_stride, p.a_batch_stride);
    const int b_layout = sm80_layout(p.n, p.k, p.b_n_stride, p.b_k_stride, p.b_batch_stride);
    const std::int64_t m_tiles = ceil_div(p.m, kSm80Tile), n_tiles = ceil_div(p.n, kSm80Tile);
    if (a_layout >= 0 && b_layout >= 0 && m_tiles <= kMaxGridYZ && p.batch <= kMaxGridYZ &&
        n_tiles <= 0x7fffffffLL) {
      // The layouts the tensor-core kernel loads (K-contiguity alone leaves
      // out operands with one row or one K column).
      p.a_k_major = a_layout;
      p.b_k_major = b_layout;
      LaunchShape shape;
      shape.grid[0] = static_cast<unsigned>(n_tiles);
      shape.grid[1] = static_cast<unsigned>(m_tiles);
      shape.grid[2] = static_cast<unsigned>(p.batch);
      shape.block[0] = 256;
      shape.shared_bytes = kSm80SharedBytes;
      launch(s, a.dtype == DType::f16 ? "hal_gemm_sm80_f16" : "hal_gemm_sm80_bf16", shape, p);
      return;
    }
  }

  LaunchShape shape;
  shape.grid[0] = static_cast<unsigned>(ceil_div(p.n, kGeneralTile));
  shape.grid[1] = static_cast<unsigned>(std::min<std::int64_t>(ceil_div(p.m, kGeneralTile), kMaxGridYZ));
  shape.grid[2] = static_cast<unsigned>(std::min<std::int64_t>(p.batch, kMaxGridYZ));
  shape.block[0] = 256;
  launch(s, "hal_gemm_general", shape, p);
}

}  // namespace hal::cuda
