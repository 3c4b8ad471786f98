// Backward kernels over rows (the last axis), the HIP twin of
// ptx/kernels/training_rows.cu: softmax_backward / log_softmax_backward and
// layernorm_backward / rmsnorm_backward, any strides, f32/f16/bf16, fp32 math,
// one rounding per output.
//
//   hal_softmax_backward       one workgroup of kRowThreads (4 wave64s) per
//                              row, grid-stride over rows: S = sum dy y (log:
//                              T = sum dy) over the visible keys, then dx;
//                              masked entries 0.
//   hal_norm_backward_rows     one workgroup per row: the forward's statistics
//                              (two passes for layernorm) to stats[2r],
//                              stats[2r+1]; mean(g), mean(g xhat); then dx.
//   hal_norm_backward_partials grid (column tiles of 256, row blocks): column
//                              j of row block b sums dy xhat and dy over the
//                              block's rows in row order.
//   hal_norm_backward_finish   column j adds the partials in block order.
//
// Determinism: lane-strided sums in column order, the wave64 butterfly, then
// the waves in order (hip/wave.h block_reduce); the row blocks are the CPU's
// fixed split (kernel_params::norm_backward_block_rows); no atomics.
//
// Compiled, never run on a GPU: declined unless HAL_GPU_UNVERIFIED=1.
#include "kernel_params/training.h"
#include "rows_common.h"

using namespace hal::hip;
using namespace hal::hip::kernels;
using namespace hal::kernel_params;

namespace {

__device__ __forceinline__ float block_sum(float v, float* scratch) {
  return block_reduce<kRowWaves, ReduceOp::sum>(v, scratch);
}

}  // namespace

extern "C" __global__ __launch_bounds__(kRowThreads) void hal_softmax_backward(SoftmaxBackwardParams p) {
  __shared__ float scratch[kRowWaves];
  const RowTensors& L = p.layout;
  for (int64_t r = blockIdx.x; r < L.rows; r += gridDim.x) {
    int64_t off[kRowTensors], query;
    row_tensor_offsets(L, r, off, &query);
    const int64_t valid = softmax_visible_keys(L, query, p.causal);
    float acc = 0.0f;
    for (int64_t j = threadIdx.x; j < valid; j += kRowThreads) {
      const float dy = load_f32(p.dy, p.dtype, off[1] + j * L.col_stride[1]);
      acc += p.log ? dy : dy * load_f32(p.y, p.dtype, off[0] + j * L.col_stride[0]);
    }
    const float s = block_sum(acc, scratch);
    for (int64_t j = threadIdx.x; j < L.cols; j += kRowThreads) {
      float out = 0.0f;
      if (j < valid) {
        const float y = load_f32(p.y, p.dtype, off[0] + j * L.col_stride[0]);
        const float dy = load_f32(p.dy, p.dtype, off[1] + j * L.col_stride[1]);
        out = p.log ? p.scale * (dy - expf(y) * s) : p.scale * (y * (dy - s));
      }
      store_f32(p.dx, p.dtype, off[2] + j * L.col_stride[2], out);
    }
  }
}

extern "C" __global__ __launch_bounds__(kRowThreads) void hal_norm_backward_rows(NormBackwardParams p) {
  __shared__ float scratch[kRowWaves];
  const RowTensors& L = p.layout;
  const float n = static_cast<float>(L.cols);
  for (int64_t r = blockIdx.x; r < L.rows; r += gridDim.x) {
    int64_t off[kRowTensors], unused;
    row_tensor_offsets(L, r, off, &unused);
    // The row's offsets as scalars: a lambda capturing the offset array by
    // reference put it in local memory (a stack frame and spills on sm_90a).
    const int64_t x0 = off[0], xs = L.col_stride[0];
    const auto x_at = [=](int64_t j) { return load_f32(p.x, p.dtype, x0 + j * xs); };
    float mean = 0.0f, acc = 0.0f;
    if (!p.rms) {
      for (int64_t j = threadIdx.x; j < L.cols; j += kRowThreads) acc += x_at(j);
      mean = block_sum(acc, scratch) / n;
      acc = 0.0f;
    }
    for (int64_t j = threadIdx.x; j < L.cols; j += kRowThreads) {
      const float d = x_at(j) - mean;
      acc += d * d;
    }
    const float rstd = 1.0f / sqrtf(block_sum(acc, scratch) / n + p.eps);
    if (threadIdx.x == 0) {
      p.stats[2 * r] = mean;
      p.stats[2 * r + 1] = rstd;
    }
    float sg = 0.0f, sgx = 0.0f;
    for (int64_t j = threadIdx.x; j < L.cols; j += kRowThreads) {
      const float g = load_f32(p.dy, p.dtype, off[1] + j * L.col_stride[1]) * load_f32(p.weight, p.dtype, j * p.weight_stride);
      sg += g;
      sgx += g * ((x_at(j) - mean) * rstd);
    }
    const float mean_gx = block_sum(sgx, scratch) / n;
    const float mean_g = p.rms ? 0.0f : block_sum(sg, scratch) / n;
    for (int64_t j = threadIdx.x; j < L.cols; j += kRowThreads) {
      const float g = load_f32(p.dy, p.dtype, off[1] + j * L.col_stride[1]) * load_f32(p.weight, p.dtype, j * p.weight_stride);
      const float xhat = (x_at(j) - mean) * rstd;
      const float out = p.rms ? rstd * (g - xhat * mean_gx) : rstd * ((g - mean_g) - xhat * mean_gx);
      store_f32(p.dx, p.dtype, off[2] + j * L.col_stride[2], out);
    }
  }
}

extern "C" __global__ __launch_bounds__(kRowThreads) void hal_norm_backward_partials(NormBackwardParams p) {
  const RowTensors& L = p.layout;
  const int64_t j = static_cast<int64_t>(blockIdx.x) * kRowThreads + threadIdx.x;
  const int64_t b = blockIdx.y;
  if (j >= L.cols) return;
  const int64_t first = b * p.block_rows;
  const int64_t last = first + p.block_rows < L.rows ? first + p.block_rows : L.rows;
  float aw = 0.0f, ab = 0.0f;
  for (int64_t r = first; r < last; ++r) {
    int64_t off[kRowTensors], unused;
    row_tensor_offsets(L, r, off, &unused);
    const float dy = load_f32(p.dy, p.dtype, off[1] + j * L.col_stride[1]);
    const float xhat = (load_f32(p.x, p.dtype, off[0] + j * L.col_stride[0]) - p.stats[2 * r]) * p.stats[2 * r + 1];
    aw += dy * xhat;
    ab += dy;
  }
  p.partial_w[b * L.cols + j] = aw;
  if (p.partial_b != nullptr) p.partial_b[b * L.cols + j] = ab;
}

extern "C" __global__ __launch_bounds__(kRowThreads) void hal_norm_backward_finish(NormBackwardParams p) {
  const int64_t cols = p.layout.cols;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * kRowThreads + threadIdx.x; j < cols;
       j += static_cast<int64_t>(gridDim.x) * kRowThreads) {
    float w = 0.0f, bsum = 0.0f;
    for (int64_t b = 0; b < p.blocks; ++b) {
      w += p.partial_w[b * cols + j];
      if (p.partial_b != nullptr) bsum += p.partial_b[b * cols + j];
    }
    store_f32(p.dweight, p.dtype, j * p.dweight_stride, w);
    if (p.dbias != nullptr) store_f32(p.dbias, p.dtype, j * p.dbias_stride, bsum);
  }
}
