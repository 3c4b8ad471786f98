// Launchers of the row kernels (ptx/kernels/rows_*.cu): softmax, layernorm /
// rmsnorm, reduce over any axis, rope.
//
// Every call is served: the kernels take arbitrary strides, and read 8
// elements at a time only when a row is contiguous and 16-byte aligned. The
// launch shape (threads per row) depends only on the tensor shape, so results
// are deterministic run to run.
#include <algorithm>

#include "backends/cuda/cuda_kernel_args.h"
#include "backends/cuda/cuda_launch.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_paths.h"
#include "backends/cuda/cuda_stream.h"
#include "hal/error.h"
#include "ptx/kernels/rows_params.h"

namespace hal::cuda {

namespace {

constexpr int kBlockThreads = ptx::kRowsBlockThreads;
// Rows up to this length get one warp each; longer ones a whole block.
constexpr std::int64_t kWarpRowMax = 1024;

bool vec8_type(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

// True when every row of `t` (rows over `outer_dims`, unit stride along the
// row) starts on a 16-byte boundary.
bool rows_aligned16(const Tensor& t, const ptx::RowsLayout& L, const std::int64_t* outer_strides,
                    std::int64_t col_stride) {
  if (!vec8_type(t.dtype) || col_stride != 1 || !aligned16(t.first())) return false;
  const auto esize = static_cast<std::int64_t>(dtype_size(t.dtype));
  for (int i = 0; i < L.outer_rank; ++i)
    if (L.outer_shape[i] > 1 && (outer_strides[i] * esize) % 16 != 0) return false;
  return true;
}

// Rows are the last axis of x and y (same shape); outer dims are the others.
ptx::RowsLayout last_axis_layout(const Tensor& x, const Tensor& y) {
  ptx::RowsLayout L{};
  const int rank = x.rank();
  L.cols = rank == 0 ? 1 : x.shape[rank - 1];
  L.x_col_stride = rank == 0 ? 1 : x.strides[rank - 1];
  L.y_col_stride = rank == 0 ? 1 : y.strides[rank - 1];
  L.rows = 1;
  for (int d = 0; d + 1 < rank; ++d) {
    L.outer_shape[L.outer_rank] = x.shape[d];
    L.x_outer_stride[L.outer_rank] = x.strides[d];
    L.y_outer_stride[L.outer_rank] = y.strides[d];
    ++L.outer_rank;
    L.rows *= x.shape[d];
  }
  if (L.outer_rank == 0) {  // a single row: one outer dim of extent 1
    L.outer_rank = 1;
    L.outer_shape[0] = 1;
  }
  L.x_vec8 = rows_aligned16(x, L, L.x_outer_stride, L.x_col_stride);
  L.y_vec8 = rows_aligned16(y, L, L.y_outer_stride, L.y_col_stride);
  L.threads_per_row = L.cols <= kWarpRowMax ? 32 : kBlockThreads;
  return L;
}

LaunchShape rows_launch(const ptx::RowsLayout& L) {
  LaunchShape shape;
  shape.block[0] = kBlockThreads;
  const std::int64_t rows_per_block = kBlockThreads / L.threads_per_row;
  const std::int64_t blocks = (L.rows + rows_per_block - 1) / rows_per_block;
  if (blocks > 0x7fffffffLL) throw_unsupported("cuda", "row kernel", "at most 2^31 blocks of rows");
  shape.grid[0] = static_cast<unsigned>(blocks);
  return shape;
}

std::uint8_t code(DType t) { return static_cast<std::uint8_t>(t); }

// The "rows_reg" kernels hold a whole row in registers, a group of threads
// per row: rows of x and y contiguous and 16-byte aligned (f32/f16/bf16), a
// multiple of 8 columns, longer than a warp's rows and at most 8192 (8 x 256
// threads x 4 chunks, ptx::kRegMaxCols / ptx::kRegChunks).
using ptx::kRegChunks;
using ptx::kRegMaxCols;
bool use_register_rows(const ptx::RowsLayout& L) {
  return L.x_vec8 && L.y_vec8 && L.cols > kWarpRowMax && L.cols <= kRegMaxCols && L.cols % 8 == 0 &&
         L.rows <= 0x7fffffffLL && path_enabled("rows_reg");
}
// The group (softmax and the norms). 16-bit rows: the fewest threads (a power
// of two, 64..256: rows are longer than kWarpRowMax) that leave each at most
// kRegChunks 8-element chunks, so every thread keeps kRegChunks loads in
// flight. f32 rows: a whole block. Measured on the H200
// (bench/results/h200-2026-11-30-aef8be6 and, for small groups for f32 too,
// h200-2026-11-30-trials): bf16 rmsnorm and layernorm on 1 GiB rose from
// 56% / 50% to 65% / 61% of copy bandwidth; f32's fell from 97% / 93% to
// 94% / 92% (89% / 82% to 78% / 74% on 64 MiB) with the smaller groups.
ptx::RowsLayout with_register_row_group(ptx::RowsLayout L, DType x) {
  int t = 64;
  if (dtype_size(x) == 4) t = kBlockThreads;
  while (t < kBlockThreads && t * kRegChunks * 8 < L.cols) t *= 2;
  L.threads_per_row = t;
  return L;
}

// The kernel of a row group, from an op's three (64, 128, 256 threads): the
// group size is a compile-time constant of each kernel.
using RegRowKernels = const char* const[3];
constexpr RegRowKernels kSoftmaxRegKernels = {"hal_softmax_rows_reg_t64", "hal_softmax_rows_reg_t128",
                                              "hal_softmax_rows_reg"};
constexpr RegRowKernels kNormRegKernels = {"hal_norm_rows_reg_t64", "hal_norm_rows_reg_t128", "hal_norm_rows_reg"};
const char* register_rows_kernel(RegRowKernels& kernels, int threads_per_row) {
  return kernels[threads_per_row == 64 ? 0 : threads_per_row == 128 ? 1 : 2];
}

}  // namespace

void run_softmax(CudaStream& s, const SoftmaxCall& call) {
  if (call.y.numel() == 0) return;
  ptx::SoftmaxParams p{};
  p.layout = last_axis_layout(call.x, call.y);
  p.x = call.x.first();
  p.y = call.y.first();
  p.x_type = code(call.x.dtype);
  p.y_type = code(call.y.dtype);
  p.scale = call.scale;
  p.causal = call.causal;
  p.log = call.log;
  if (use_register_rows(p.layout)) {
    p.layout = with_register_row_group(p.layout, call.x.dtype);
    launch(s, register_rows_kernel(kSoftmaxRegKernels, p.layout.threads_per_row), rows_launch(p.layout), p);
    return;
  }
  launch(s, "hal_softmax_rows", rows_launch(p.layout), p);
}

void run_norm(CudaStream& s, const NormCall& call) {
  if (call.y.numel() == 0) return;
  ptx::NormParams p{};
  p.layout = last_axis_layout(call.x, call.y);
  p.x = call.x.first();
  p.y = call.y.first();
  p.weight = call.weight.first();
  p.weight_stride = call.weight.strides[call.weight.rank() - 1];
  p.weight_type = code(call.weight.dtype);
  if (call.bias && !call.rms) {
    p.bias = call.bias->first();
    p.bias_stride = call.bias->strides[call.bias->rank() - 1];
    p.bias_type = code(call.bias->dtype);
  }
  p.x_type = code(call.x.dtype);
  p.y_type = code(call.y.dtype);
  p.eps = call.eps;
  p.rms = call.rms;
  if (use_register_rows(p.layout)) {
    p.layout = with_register_row_group(p.layout, call.x.dtype);
    launch(s, register_rows_kernel(kNormRegKernels, p.layout.threads_per_row), rows_launch(p.layout), p);
    return;
  }
  launch(s, "hal_norm_rows", rows_launch(p.layout), p);
}

void run_reduce(CudaStream& s, const ReduceCall& call) {
  const Tensor& x = call.x;
  const Tensor& y = call.y;
  if (y.numel() == 0) return;
  const int axis = call.axis;
  ptx::ReduceParams p{};
  ptx::RowsLayout& L = p.layout;
  L.cols = x.shape[axis];
  L.x_col_stride = x.strides[axis];
  L.rows = 1;
  int ydim = 0;
  for (int d = 0; d < x.rank(); ++d) {
    if (d == axis) {
      if (call.keepdim) ++ydim;  // y's size-1 axis
      continue;
    }
    L.outer_shape[L.outer_rank] = x.shape[d];
    L.x_outer_stride[L.outer_rank] = x.strides[d];
    L.y_outer_stride[L.outer_rank] = y.strides[ydim++];
    ++L.outer_rank;
    L.rows *= x.shape[d];
  }
  if (L.outer_rank == 0) {
    L.outer_rank = 1;
    L.outer_shape[0] = 1;
  }
  L.x_vec8 = rows_aligned16(x, L, L.x_outer_stride, L.x_col_stride);
  if (L.x_col_stride != 1 && L.rows >= 4096) {
    // Many strided lines (a reduce over an outer axis): one thread per output,
    // so neighbouring threads read neighbouring addresses.
    L.threads_per_row = 1;
  } else {
    L.threads_per_row = L.cols <= kWarpRowMax ? 32 : kBlockThreads;
  }
  p.x = x.first();
  p.y = y.first();
  p.x_type = code(x.dtype);
  p.y_type = code(y.dtype);
  p.kind = static_cast<std::int32_t>(call.kind);
  launch(s, "hal_reduce_rows", rows_launch(L), p);
}

void run_rope(CudaStream& s, const RopeCall& call) {
  const Tensor& x = call.x;
  const Tensor& y = call.y;
  const std::int64_t n = y.numel();
  if (n == 0) return;
  ptx::RopeParams p{};
  p.x = x.first();
  p.y = y.first();
  p.positions = static_cast<const std::int32_t*>(call.positions.first());
  for (int d = 0; d < 4; ++d) {
    p.shape[d] = x.shape[d];
    p.x_stride[d] = x.strides[d];
    p.y_stride[d] = y.strides[d];
  }
  const Tensor& pos = call.positions;
  p.pos_seq_stride = pos.strides[pos.rank() - 1];
  p.pos_batch_stride = pos.rank() == 2 ? pos.strides[0] : 0;
  p.x_type = code(x.dtype);
  p.y_type = code(y.dtype);
  p.rotary_dim = call.rotary_dim;
  p.gptj = call.style == RopeStyle::gptj;
  p.theta = call.theta;
  if (call.inv_freq) {
    p.inv_freq = static_cast<const float*>(call.inv_freq->first());
    p.inv_freq_stride = call.inv_freq->strides[0];
  }
  launch(s, "hal_rope", grid_stride_shape(n, stream_caps(s).sm_count), p);
}

}  // namespace hal::cuda
