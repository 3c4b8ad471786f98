// Host side of the sm_90a GEMM (ptx/kernels/gemm_sm90a.cu): layout checks,
// TMA descriptor encoding, persistent launch over the device's SMs.
#include "backends/cuda/cuda_gemm_sm90a.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/cuda_launch.h"
#include "backends/cuda/cuda_paths.h"
#include "backends/cuda/cuda_stream.h"
#include "backends/cuda/cuda_tma.h"
#include "hal/shape.h"
#include "ptx/kernels/gemm_sm90a_params.h"

namespace hal::cuda {

namespace {

using Narrow = ptx::GemmSm90aNarrow;
using Wide = ptx::GemmSm90aWide;
static_assert(Narrow::kBlockM == Wide::kBlockM && Narrow::kBlockK == Wide::kBlockK, "one A map for both tiles");

std::atomic<std::uint64_t> g_launches{0}, g_wide_launches{0};

// Row stride usable by TMA: 16-byte multiple, rows not overlapping.
bool tma_row_stride_ok(std::int64_t row_stride, std::int64_t k) {
  return row_stride >= k && (row_stride * 2) % 16 == 0 && row_stride * 2 < (std::int64_t{1} << 40);
}

// 2-D map of a matrix [rows, cols] with contiguous cols: box {64, box_rows}
// (64 16-bit elements = the 128B swizzle span), out-of-range elements read as zero.
bool encode_map(ptx::TmaDescriptorBytes& out, const void* base, DType t, std::int64_t rows, std::int64_t k,
                std::int64_t row_stride, int box_rows) {
  const std::uint64_t dims[2] = {static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(rows)};
  const std::uint64_t strides[1] = {static_cast<std::uint64_t>(row_stride * 2)};
  const std::uint32_t box[2] = {static_cast<std::uint32_t>(Narrow::kBlockK), static_cast<std::uint32_t>(box_rows)};
  return encode_tma_16bit(out, base, t, 2, dims, strides, box);
}

}  // namespace

std::uint64_t gemm_sm90a_launch_count() { return g_launches.load(); }
std::uint64_t gemm_sm90a_wide_launch_count() { return g_wide_launches.load(); }

bool encode_gemm_sm90a_tile_map(ptx::TmaDescriptorBytes& out, const void* base, DType t, std::int64_t rows,
                                std::int64_t cols, std::int64_t row_stride, int box_rows) {
  return encode_map(out, base, t, rows, cols, row_stride, box_rows);
}

// On by default (validated on an H200 against the CPU device: bf16/f16, B
// [N,K] and [K,N], edges, bias/activation/beta, batched, bitwise stable);
// HAL_CUDA_DISABLE=wgmma turns the whole path off, =wgmma_bn only B [K,N].
bool gemm_sm90a_switched_on() { return path_enabled("wgmma"); }

bool try_gemm_sm90a(CudaStream& s, const GemmCall& call, const kernel_params::GemmParams& g) {
  const Tensor& a = call.a;
  const Tensor& b = call.b;
  const Tensor& c = call.c;
  if (a.dtype != DType::f16 && a.dtype != DType::bf16) return false;
  const CudaDeviceCaps& caps = stream_caps(s);
  if (caps.cc_major != 9 || !caps.has_sm90a_kernels || caps.sm_count <= 0 ||
      caps.max_shared_per_block_optin < Narrow::kSharedBytes || !gemm_sm90a_switched_on())
    return false;

  const int ra = a.rank(), rb = b.rank(), rc = c.rank();
  const std::int64_t batch = rc == 3 ? c.shape[0] : 1;
  const std::int64_t m = c.shape[rc - 2], n = c.shape[rc - 1];
  const std::int64_t k = call.trans_a ? a.shape[ra - 2] : a.shape[ra - 1];
  // Strides of op(A) [m, k] and op(B)^T [n, k]; both must be contiguous along K.
  const std::int64_t a_row = call.trans_a ? a.strides[ra - 1] : a.strides[ra - 2];
  const std::int64_t a_k = call.trans_a ? a.strides[ra - 2] : a.strides[ra - 1];
  const std::int64_t b_n = call.trans_b ? b.strides[rb - 2] : b.strides[rb - 1];
  const std::int64_t b_k = call.trans_b ? b.strides[rb - 1] : b.strides[rb - 2];
  const std::int64_t a_batch = (ra == 3 && a.shape[0] != 1) ? a.strides[0] : 0;
  const std::int64_t b_batch = (rb == 3 && b.shape[0] != 1) ? b.strides[0] : 0;
  const std::int64_t c_batch = rc == 3 ? c.strides[0] : 0;
  if (m <= 0 || n <= 0 || k < 8 || k % 8 != 0 || a_k != 1 || !tma_row_stride_ok(a_row, k)) return false;
  // B K-major ([N, K], K contiguous) or N-major ([K, N], N contiguous; separately switchable).
  const bool b_k_major = b_k == 1 && tma_row_stride_ok(b_n, k);
  const bool b_n_major = !b_k_major && b_n == 1 && n % 8 == 0 && tma_row_stride_ok(b_k, n) && path_enabled("wgmma_bn");
  if (!b_k_major && !b_n_major) return false;
  if ((a_batch * 2) % 16 != 0 || (b_batch * 2) % 16 != 0) return false;
  if (!tma_aligned(a.first()) || !tma_aligned(b.first())) return false;
  // The wide tile when its tiles still give every SM one (fewer, as in decode
  // shapes, would leave SMs idle that narrow tiles keep busy).
  const std::int64_t m_tiles = ceil_div(m, std::int64_t{Narrow::kBlockM});
  const bool wide = caps.max_shared_per_block_optin >= Wide::kSharedBytes && path_enabled("wgmma_wide") &&
                    m_tiles * ceil_div(n, std::int64_t{Wide::kBlockN}) >= caps.sm_count;
  const int block_n = wide ? Wide::kBlockN : Narrow::kBlockN;
  const std::int64_t n_tiles = ceil_div(n, std::int64_t{block_n});
  const std::int64_t k_blocks = ceil_div(k, std::int64_t{Narrow::kBlockK});
  if (m_tiles * n_tiles > 0x7fffffffLL || k_blocks > 0x7fffffffLL || m > 0xffffffffLL || n > 0xffffffffLL) return false;

  const std::size_t ab_size = dtype_size(a.dtype), c_size = dtype_size(c.dtype);
  // Encode every batch's maps first, so a refusal launches nothing.
  std::vector<ptx::GemmSm90aParams> launches(static_cast<std::size_t>(batch));
  for (std::int64_t z = 0; z < batch; ++z) {
    ptx::GemmSm90aParams& p = launches[static_cast<std::size_t>(z)];
    const auto* a_z = static_cast<const char*>(a.first()) + z * a_batch * static_cast<std::int64_t>(ab_size);
    const auto* b_z = static_cast<const char*>(b.first()) + z * b_batch * static_cast<std::int64_t>(ab_size);
    const bool b_ok = b_k_major ? encode_map(p.b_map, b_z, a.dtype, n, k, b_n, block_n)
                                : encode_map(p.b_map, b_z, a.dtype, k, n, b_k, Narrow::kBlockK);
    if (!encode_map(p.a_map, a_z, a.dtype, m, k, a_row, Narrow::kBlockM) || !b_ok) return false;
    p.g = g;
    p.g.a = a_z;
    p.g.b = b_z;
    p.g.c = static_cast<char*>(c.first()) + z * c_batch * static_cast<std::int64_t>(c_size);
    p.g.batch = 1;
    p.g.a_batch_stride = p.g.b_batch_stride = p.g.c_batch_stride = 0;
    p.m_tiles = static_cast<std::int32_t>(m_tiles);
    p.n_tiles = static_cast<std::int32_t>(n_tiles);
    p.k_blocks = static_cast<std::int32_t>(k_blocks);
  }
  LaunchShape shape;
  shape.grid[0] = static_cast<unsigned>(std::min<std::int64_t>(caps.sm_count, m_tiles * n_tiles));
  shape.block[0] = Narrow::kThreads;
  shape.shared_bytes = wide ? Wide::kSharedBytes : Narrow::kSharedBytes;
  // [wide][f16][b K-major]
  static constexpr const char* kNames[2][2][2] = {
      {{"hal_gemm_sm90a_bf16_bn", "hal_gemm_sm90a_bf16"}, {"hal_gemm_sm90a_f16_bn", "hal_gemm_sm90a_f16"}},
      {{"hal_gemm_sm90a_wide_bf16_bn", "hal_gemm_sm90a_wide_bf16"},
       {"hal_gemm_sm90a_wide_f16_bn", "hal_gemm_sm90a_wide_f16"}}};
  const char* name = kNames[wide][a.dtype == DType::f16][b_k_major];
  for (const ptx::GemmSm90aParams& p : launches) {
    launch(s, name, shape, p);
    g_launches.fetch_add(1);
    if (wide) g_wide_launches.fetch_add(1);
  }
  return true;
}

}  // namespace hal::cuda
