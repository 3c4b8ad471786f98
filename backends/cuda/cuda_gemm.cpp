// Launcher of the GEMM kernels. Picks, per call:
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

#include "backends/cuda/cuda_gemm_sm90a.h"
#include "backends/cuda/cuda_kernel_args.h"
#include "backends/cuda/cuda_launch.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_stream.h"
#include "hal/shape.h"
#include "ptx/kernels/gemm_params.h"

namespace hal::cuda {

namespace {

constexpr unsigned kMaxGridYZ = 65535;
constexpr int kSm80Tile = 128;                          // gemm_sm80.cu Config::kBlockM/N
constexpr unsigned kSm80SharedBytes = 4 * 2 * 128 * 32 * 2;  // Config::kSharedBytes (64 KiB)
constexpr int kGeneralTile = 64;                        // gemm_general.cu kTile

bool stride_aligned16(std::int64_t elements) { return (elements * 2) % 16 == 0; }

// The tensor-core kernels' epilogue form (ptx/kernels/gemm_params.h): plain
// when C is stored as alpha * acc, rounded, with column pairs aligned.
std::uint8_t epilogue_form(const ptx::GemmParams& p) {
  const auto c_type = static_cast<DType>(p.c_type);
  const bool plain_dtype = c_type == DType::f32 || c_type == DType::f16 || c_type == DType::bf16;
  if (!plain_dtype || p.beta != 0.0f || p.bias != nullptr || p.activation != 0 || p.c_n_stride != 1 ||
      p.c_m_stride % 2 != 0 || p.c_batch_stride % 2 != 0 ||
      reinterpret_cast<std::uintptr_t>(p.c) % (2 * dtype_size(c_type)) != 0)
    return ptx::kGemmEpilogueGeneral;
  return ptx::kGemmEpiloguePlain;
}

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
  const Tensor& b = call.b;
  const Tensor& c = call.c;
  const int ra = a.rank(), rb = b.rank(), rc = c.rank();

  ptx::GemmParams p{};
  p.a = a.first();
  p.b = b.first();
  p.c = c.first();
  p.bias = call.bias ? call.bias->first() : nullptr;
  p.bias_stride = call.bias ? call.bias->strides[0] : 1;
  p.batch = rc == 3 ? c.shape[0] : 1;
  p.m = c.shape[rc - 2];
  p.n = c.shape[rc - 1];
  p.k = call.trans_a ? a.shape[ra - 2] : a.shape[ra - 1];
  p.a_m_stride = call.trans_a ? a.strides[ra - 1] : a.strides[ra - 2];
  p.a_k_stride = call.trans_a ? a.strides[ra - 2] : a.strides[ra - 1];
  p.b_k_stride = call.trans_b ? b.strides[rb - 1] : b.strides[rb - 2];
  p.b_n_stride = call.trans_b ? b.strides[rb - 2] : b.strides[rb - 1];
  p.a_batch_stride = (ra == 3 && a.shape[0] != 1) ? a.strides[0] : 0;  // batch 1 broadcasts
  p.b_batch_stride = (rb == 3 && b.shape[0] != 1) ? b.strides[0] : 0;
  p.c_batch_stride = rc == 3 ? c.strides[0] : 0;
  p.c_m_stride = c.strides[rc - 2];
  p.c_n_stride = c.strides[rc - 1];
  p.ab_type = static_cast<std::uint8_t>(a.dtype);
  p.c_type = static_cast<std::uint8_t>(c.dtype);
  p.activation = static_cast<std::int32_t>(call.activation);
  p.alpha = call.alpha;
  p.beta = call.beta;
  p.epilogue = epilogue_form(p);
  if (p.m == 0 || p.n == 0 || p.batch == 0) return;
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
      p.a_k_major = static_cast<std::uint8_t>(a_layout);
      p.b_k_major = static_cast<std::uint8_t>(b_layout);
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
