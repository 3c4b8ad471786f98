// Backward kernels over rows (the last axis): softmax_backward /
// log_softmax_backward and layernorm_backward / rmsnorm_backward, for any
// strides and the f32/f16/bf16 dtypes; fp32 math, one rounding per output.
//
//   hal_softmax_backward       one 256-thread block per row (grid-stride over
//                              rows): S = sum dy y (log: T = sum dy) over the
//                              visible keys, then dx; masked entries 0.
//   hal_norm_backward_rows     one block per row: the forward's statistics
//                              (two passes for layernorm), stored to
//                              stats[2r], stats[2r+1]; mean(g), mean(g xhat);
//                              then dx.
//   hal_norm_backward_partials grid (column tiles of 256, row blocks): column
//                              j of row block b sums dy xhat and dy over the
//                              block's rows in row order.
//   hal_norm_backward_finish   column j adds the row blocks' partials in block
//                              order: dweight[j], dbias[j].
//
// Determinism: a row's sums are lane-strided in column order, then combined
// by rows::group_allreduce (a fixed butterfly, then warps in order); the row
// blocks of dweight / dbias are the CPU's fixed split
// (kernel_params::norm_backward_block_rows). No atomics: every order depends
// on the shape alone, so one device gives the same bits on every run.
//
// Compiled, never run on a GPU: declined unless HAL_GPU_UNVERIFIED=1.
#include <math.h>

#include "kernel_params/training.h"
#include "ptx/element.cuh"
#include "ptx/kernels/rows_common.cuh"

using namespace hal::ptx;
using namespace hal::kernel_params;
using namespace hal::ptx::rows;

namespace {

constexpr int kThreads = kBlockThreads;  // 256: one row per block

__device__ __forceinline__ float block_sum(float v, float* scratch) {
  return group_allreduce(v, kThreads, [](float a, float b) { return a + b; }, scratch);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads) hal_softmax_backward(const SoftmaxBackwardParams p) {
  __shared__ float scratch[kThreads / 32];
  const RowTensors& L = p.layout;
  const auto t = static_cast<ElemType>(p.dtype);
  for (int64_t r = blockIdx.x; r < L.rows; r += gridDim.x) {
    int64_t off[kRowTensors], query;
    row_tensor_offsets(L, r, off, &query);
    const int64_t valid = softmax_visible_keys(L, query, p.causal);
    float acc = 0.0f;
    for (int64_t j = threadIdx.x; j < valid; j += kThreads) {
      const float dy = load_as_float(p.dy, t, off[1] + j * L.col_stride[1]);
      acc += p.log ? dy : dy * load_as_float(p.y, t, off[0] + j * L.col_stride[0]);
    }
    const float s = block_sum(acc, scratch);
    for (int64_t j = threadIdx.x; j < L.cols; j += kThreads) {
      float out = 0.0f;
      if (j < valid) {
        const float y = load_as_float(p.y, t, off[0] + j * L.col_stride[0]);
        const float dy = load_as_float(p.dy, t, off[1] + j * L.col_stride[1]);
        out = p.log ? p.scale * (dy - expf(y) * s) : p.scale * (y * (dy - s));
      }
      store_from_float(p.dx, t, off[2] + j * L.col_stride[2], out);
    }
  }
}

// (kThreads, 4): with the thread count alone ptxas 13.0 kept this kernel at 32
// registers on sm_90a and spilled 12 bytes; with 4 blocks per SM it takes 44, no spill.
extern "C" __global__ void __launch_bounds__(kThreads, 4) hal_norm_backward_rows(const NormBackwardParams p) {
  __shared__ float scratch[kThreads / 32];
  const RowTensors& L = p.layout;
  const auto t = static_cast<ElemType>(p.dtype);
  const float n = static_cast<float>(L.cols);
  for (int64_t r = blockIdx.x; r < L.rows; r += gridDim.x) {
    int64_t off[kRowTensors], unused;
    row_tensor_offsets(L, r, off, &unused);
    // The row's offsets as scalars: a lambda capturing the offset array by
    // reference put it in local memory (a stack frame and spills on sm_90a).
    const int64_t x0 = off[0], xs = L.col_stride[0];
    const auto x_at = [=](int64_t j) { return load_as_float(p.x, t, x0 + j * xs); };
    float mean = 0.0f, acc = 0.0f;
    if (!p.rms) {
      for (int64_t j = threadIdx.x; j < L.cols; j += kThreads) acc += x_at(j);
      mean = block_sum(acc, scratch) / n;
      acc = 0.0f;
    }
    for (int64_t j = threadIdx.x; j < L.cols; j += kThreads) {
      const float d = x_at(j) - mean;
      acc += d * d;
    }
    const float rstd = 1.0f / sqrtf(block_sum(acc, scratch) / n + p.eps);
    if (threadIdx.x == 0) {
      p.stats[2 * r] = mean;
      p.stats[2 * r + 1] = rstd;
    }
    float sg = 0.0f, sgx = 0.0f;
    for (int64_t j = threadIdx.x; j < L.cols; j += kThreads) {
      const float g = load_as_float(p.dy, t, off[1] + j * L.col_stride[1]) * load_as_float(p.weight, t, j * p.weight_stride);
      sg += g;
      sgx += g * ((x_at(j) - mean) * rstd);
    }
    const float mean_gx = block_sum(sgx, scratch) / n;
    const float mean_g = p.rms ? 0.0f : block_sum(sg, scratch) / n;
    for (int64_t j = threadIdx.x; j < L.cols; j += kThreads) {
      const float g = load_as_float(p.dy, t, off[1] + j * L.col_stride[1]) * load_as_float(p.weight, t, j * p.weight_stride);
      const float xhat = (x_at(j) - mean) * rstd;
      const float out = p.rms ? rstd * (g - xhat * mean_gx) : rstd * ((g - mean_g) - xhat * mean_gx);
      store_from_float(p.dx, t, off[2] + j * L.col_stride[2], out);
    }
  }
}

extern "C" __global__ void __launch_bounds__(kThreads) hal_norm_backward_partials(const NormBackwardParams p) {
  const RowTensors& L = p.layout;
  const auto t = static_cast<ElemType>(p.dtype);
  const int64_t j = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t b = blockIdx.y;
  if (j >= L.cols) return;
  const int64_t first = b * p.block_rows;
  const int64_t last = first + p.block_rows < L.rows ? first + p.block_rows : L.rows;
  float aw = 0.0f, ab = 0.0f;
  for (int64_t r = first; r < last; ++r) {
    int64_t off[kRowTensors], unused;
    row_tensor_offsets(L, r, off, &unused);
    const float dy = load_as_float(p.dy, t, off[1] + j * L.col_stride[1]);
    const float xhat = (load_as_float(p.x, t, off[0] + j * L.col_stride[0]) - p.stats[2 * r]) * p.stats[2 * r + 1];
    aw += dy * xhat;
    ab += dy;
  }
  p.partial_w[b * L.cols + j] = aw;
  if (p.partial_b != nullptr) p.partial_b[b * L.cols + j] = ab;
}

extern "C" __global__ void __launch_bounds__(kThreads) hal_norm_backward_finish(const NormBackwardParams p) {
  const auto t = static_cast<ElemType>(p.dtype);
  const int64_t cols = p.layout.cols;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; j < cols;
       j += static_cast<int64_t>(gridDim.x) * kThreads) {
    float w = 0.0f, bsum = 0.0f;
    for (int64_t b = 0; b < p.blocks; ++b) {
      w += p.partial_w[b * cols + j];
      if (p.partial_b != nullptr) bsum += p.partial_b[b * cols + j];
    }
    store_from_float(p.dweight, t, j * p.dweight_stride, w);
    if (p.dbias != nullptr) store_from_float(p.dbias, t, j * p.dbias_stride, bsum);
  }
}
