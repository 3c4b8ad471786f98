// Launchers of the row kernels (ptx/kernels/rows_*.cu): softmax, layernorm /
// rmsnorm, reduce over any axis, rope.
//
// Every call is served: the kernels take arbitrary strides, and read 8
// elements at a time only when a row is contiguous and 16-byte aligned (the
// arguments' x_vec16 / y_vec16, backends/gpu/kernel_args.h). The launch
// shape (threads per row) depends only on the tensor shape, so results are
// deterministic run to run.
#include <algorithm>

#include "backends/cuda/cuda_kernel_args.h"
#include "backends/cuda/cuda_launch.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_paths.h"
#include "backends/cuda/cuda_stream.h"
#include "backends/gpu/rows_variants.h"
#include "backends/gpu/unverified.h"
#include "hal/error.h"
#include "ptx/kernels/rows_geometry.h"

namespace hal::cuda {

namespace {

constexpr int kBlockThreads = ptx::kRowsBlockThreads;
// Rows up to this length get one warp each; longer ones a whole block.
constexpr std::int64_t kWarpRowMax = 1024;

// A warp per row up to kWarpRowMax columns, the whole block beyond.
int threads_per_row(const kernel_params::RowsLayout& L) { return L.cols <= kWarpRowMax ? 32 : kBlockThreads; }

LaunchShape rows_launch(const kernel_params::RowsLayout& L) {
  LaunchShape shape;
  shape.block[0] = kBlockThreads;
  const std::int64_t rows_per_block = kBlockThreads / L.cuda_threads_per_row;
  const std::int64_t blocks = (L.rows + rows_per_block - 1) / rows_per_block;
  if (blocks > 0x7fffffffLL) throw_unsupported("cuda", "row kernel", "at most 2^31 blocks of rows");
  shape.grid[0] = static_cast<unsigned>(blocks);
  return shape;
}

// The "rows_reg" kernels hold a whole row in registers, a group of threads
// per row: rows of x and y contiguous and 16-byte aligned (f32/f16/bf16), a
// multiple of 8 columns, longer than a warp's rows and at most 8192 (8 x 256
// threads x 4 chunks, ptx::kRegMaxCols / ptx::kRegChunks).
using ptx::kRegChunks;
using ptx::kRegMaxCols;
bool use_register_rows(const kernel_params::RowsLayout& L) {
  return L.x_vec16 && L.y_vec16 && L.cols > kWarpRowMax && L.cols <= kRegMaxCols && L.cols % 8 == 0 &&
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
kernel_params::RowsLayout with_register_row_group(kernel_params::RowsLayout L, DType x) {
  int t = 64;
  if (dtype_size(x) == 4) t = kBlockThreads;
  while (t < kBlockThreads && t * kRegChunks * 8 < L.cols) t *= 2;
  L.cuda_threads_per_row = t;
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

// The 16-bit packed rows_reg variants (issue 24) have never run: only with
// HAL_GPU_UNVERIFIED=1; HAL_CUDA_DISABLE=rows_reg16 turns them off again (A/B runs).
bool packed_rows_enabled() { return gpu::unverified_kernels_enabled() && path_enabled("rows_reg16"); }

}  // namespace

void run_softmax(CudaStream& s, const SoftmaxCall& call) {
  if (call.y.numel() == 0) return;
  kernel_params::SoftmaxParams p = gpu::softmax_params(call);
  p.layout.cuda_threads_per_row = threads_per_row(p.layout);
  if (use_register_rows(p.layout)) {
    p.layout = with_register_row_group(p.layout, call.x.dtype);
    // The 16-bit packed variant (issue 24), never run: only when asked for.
    if (const char* packed = packed_rows_enabled() ? gpu::cuda_softmax_reg16_kernel(p) : nullptr) {
      p.layout = gpu::merge_outer_dims(p.layout, p.causal != 0);
      launch(s, packed, rows_launch(p.layout), p);
      return;
    }
    launch(s, register_rows_kernel(kSoftmaxRegKernels, p.layout.cuda_threads_per_row), rows_launch(p.layout), p);
    return;
  }
  launch(s, "hal_softmax_rows", rows_launch(p.layout), p);
}

void run_norm(CudaStream& s, const NormCall& call) {
  if (call.y.numel() == 0) return;
  kernel_params::NormParams p = gpu::norm_params(call);
  p.layout.cuda_threads_per_row = threads_per_row(p.layout);
  if (use_register_rows(p.layout)) {
    p.layout = with_register_row_group(p.layout, call.x.dtype);
    if (const char* packed = packed_rows_enabled() ? gpu::cuda_norm_reg16_kernel(p) : nullptr) {
      p.layout = gpu::merge_outer_dims(p.layout, false);
      launch(s, packed, rows_launch(p.layout), p);
      return;
    }
    launch(s, register_rows_kernel(kNormRegKernels, p.layout.cuda_threads_per_row), rows_launch(p.layout), p);
    return;
  }
  launch(s, "hal_norm_rows", rows_launch(p.layout), p);
}

void run_reduce(CudaStream& s, const ReduceCall& call) {
  if (call.y.numel() == 0) return;
  kernel_params::ReduceParams p = gpu::reduce_params(call);
  kernel_params::RowsLayout& L = p.layout;
  if (L.x_col_stride != 1 && L.rows >= 4096) {
    // Many strided lines (a reduce over an outer axis): one thread per output,
    // so neighbouring threads read neighbouring addresses.
    L.cuda_threads_per_row = 1;
  } else {
    L.cuda_threads_per_row = threads_per_row(L);
  }
  launch(s, "hal_reduce_rows", rows_launch(L), p);
}

void run_rope(CudaStream& s, const RopeCall& call) {
  if (call.y.numel() == 0) return;
  launch(s, "hal_rope", grid_stride_shape(call.y.numel(), stream_caps(s).sm_count), gpu::rope_params(call));
}

}  // namespace hal::cuda
