// Launcher of the GEMM kernels: f16 / bf16 operands go to the MFMA kernel
// (hip/kernels/gemm_mfma.hip, any strides), f32 to the general kernel
// (hip/kernels/gemm_general.hip).
#include "backends/hip/hip_device.h"
#include "backends/hip/hip_kernel_args.h"
#include "backends/hip/hip_ops.h"
#include "backends/hip/hip_stream.h"
#include "hip/kernels/gemm_params.h"

namespace hal::hip {

namespace {

unsigned blocks(std::int64_t n, int tile) { return static_cast<unsigned>((n + tile - 1) / tile); }

// Strides of op(T) for a [.., rows, cols] operand, transposed or not, and its
// batch stride (0 when it has no batch dim or a batch of 1: broadcast).
struct OperandStrides {
  std::int64_t batch, outer, inner;  // op(T)[z][i][j] at z*batch + i*outer + j*inner
};
OperandStrides operand(const Tensor& t, bool trans) {
  const int r = t.rank();
  OperandStrides s{};
  s.batch = (r == 3 && t.shape[0] != 1) ? t.strides[0] : 0;
  s.outer = trans ? t.strides[r - 1] : t.strides[r - 2];
  s.inner = trans ? t.strides[r - 2] : t.strides[r - 1];
  return s;
}

}  // namespace

kernels::GemmParams gemm_params(const GemmCall& c) {
  kernels::GemmParams p{};
  const int cr = c.c.rank();
  p.m = c.c.shape[cr - 2];
  p.n = c.c.shape[cr - 1];
  const int ar = c.a.rank();
  p.k = c.trans_a ? c.a.shape[ar - 2] : c.a.shape[ar - 1];
  p.batch = cr == 3 ? c.c.shape[0] : 1;
  const OperandStrides a = operand(c.a, c.trans_a);
  const OperandStrides b = operand(c.b, c.trans_b);  // op(B) is [K, N]: outer = k, inner = n
  p.a = c.a.first();
  p.b = c.b.first();
  p.c = c.c.first();
  p.bias = c.bias ? c.bias->first() : nullptr;
  p.bias_stride = c.bias ? c.bias->strides[0] : 0;
  p.a_batch_stride = a.batch;
  p.a_m_stride = a.outer;
  p.a_k_stride = a.inner;
  p.b_batch_stride = b.batch;
  p.b_k_stride = b.outer;
  p.b_n_stride = b.inner;
  p.c_batch_stride = cr == 3 ? c.c.strides[0] : 0;
  p.c_m_stride = c.c.strides[cr - 2];
  p.c_n_stride = c.c.strides[cr - 1];
  p.ab_type = elem_type(c.a.dtype);
  p.c_type = elem_type(c.c.dtype);
  p.activation = static_cast<int32_t>(c.activation);
  p.alpha = c.alpha;
  p.beta = c.beta;
  p.a_k_major = p.a_k_stride == 1;
  p.b_k_major = p.b_k_stride == 1;
  // 16-byte chunks of 8 K-values: K-contiguous rows whose starts (every row,
  // every batch) are 16-byte aligned, and K a multiple of 8 so no chunk
  // straddles the end of a row.
  auto vec8 = [&](const void* base, std::int64_t k_stride, std::int64_t row_stride, std::int64_t batch_stride) {
    return dtype_size(c.a.dtype) == 2 && k_stride == 1 && row_stride % 8 == 0 && batch_stride % 8 == 0 &&
           p.k % 8 == 0 && (reinterpret_cast<std::uintptr_t>(base) & 15u) == 0;
  };
  p.a_vec8 = vec8(p.a, p.a_k_stride, p.a_m_stride, p.a_batch_stride);
  p.b_vec8 = vec8(p.b, p.b_k_stride, p.b_n_stride, p.b_batch_stride);
  return p;
}

void run_gemm(HipStream& s, const GemmCall& c) {
  const kernels::GemmParams p = gemm_params(c);
  if (p.m == 0 || p.n == 0 || p.batch == 0) return;
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
