#pragma once
// Parameters of the training kernels (backward passes and the optimizer),
// shared by the CUDA kernels (ptx/kernels/training_*.cu), the HIP kernels
// (hip/kernels/training_*.hip) and both launchers; packed by
// backends/gpu/kernel_args_training.cpp. rope_backward reuses RopeParams
// (kernel_params/rows.h) with `inverse` set.
//
// These kernels were compiled but have never run on a GPU: the support
// matrix declines them unless HAL_GPU_UNVERIFIED=1 (backends/gpu/unverified.h).
//
// Determinism: every sum over rows, columns or elements runs in an order that
// depends on the shape alone (the helpers below fix the splits), so one
// device gives the same bits on every run.
#include <stdint.h>

#include "hal/host_device.h"
#include "kernel_params/rows.h"
#include "kernel_params/strided.h"

namespace hal::kernel_params {

// --- elementwise -----------------------------------------------------------

// dx = dy * f'(x). op: hal::UnaryKind numbering (exp 2, tanh 6, sigmoid 7,
// relu 8, gelu 9, gelu_tanh 10, silu 11; ops/ rejects the others). One dtype
// for x, dy and dx; strides aligned to x's shape.
struct UnaryBackwardParams {
  const void* x;
  const void* dy;
  void* dx;
  int64_t n;
  int32_t op;
  int32_t dtype;
  KernelShape shape;
  KernelStrides x_strides, dy_strides, dx_strides;
};

// dgate = dy * up * silu'(gate), dup = dy * silu(gate); one dtype for all five.
struct SwigluBackwardParams {
  const void* gate;
  const void* up;
  const void* dy;
  void* dgate;
  void* dup;
  int64_t n;
  int32_t dtype;
  int32_t pad_;
  KernelShape shape;
  KernelStrides gate_strides, up_strides, dy_strides, dgate_strides, dup_strides;
};

// One AdamW step (hal/op_training.h AdamwCall). The scalars are computed on
// the host in fp64 and rounded to fp32 once per call (kernel_args), exactly as
// cpu_ref/adamw.cpp does, so every element of every backend sees the same
// constants. master == nullptr: p is read from and written to param; else p
// is read from master, and master and param (rounded to param_type) written.
struct AdamwParams {
  void* param;
  const void* grad;
  float* m;
  float* v;
  float* master;
  int64_t n;
  KernelShape shape;
  KernelStrides param_strides, grad_strides, m_strides, v_strides, master_strides;
  int32_t param_type, grad_type;
  float beta1, beta2, one_minus_beta1, one_minus_beta2;
  float step_size;     // lr / (1 - beta1^t)
  float inv_sqrt_bc2;  // 1 / sqrt(1 - beta2^t)
  float decay;         // 1 - lr * weight_decay
  float eps;
};

// global_norm, pass 1: the squares of tensor x's logical elements, cut into
// chunks of kGlobalNormChunk (the CPU's chunk), one block / workgroup per
// chunk; each writes its chunk's sum to partials[chunk] (fixed in-chunk order:
// lane-strided, then the block's fixed tree).
inline constexpr int64_t kGlobalNormChunk = 1 << 14;
struct GlobalNormPartialParams {
  const void* x;
  float* partials;  // this tensor's first chunk slot
  int64_t n;
  int32_t dtype;
  int32_t pad_;
  KernelShape shape;
  KernelStrides strides;
};

HAL_HOST_DEVICE inline int64_t global_norm_chunks(int64_t n) { return (n + kGlobalNormChunk - 1) / kGlobalNormChunk; }

// global_norm, pass 2 (one block / workgroup): tensor k's partials are
// [chunk_begin[k], chunk_begin[k + 1]); each tensor's chunks are summed in a
// fixed tree, then the tensors in list order, then y = sqrt (y_type f32).
inline constexpr int kGlobalNormMaxTensors = 64;  // hal::kMaxGlobalNormTensors
struct GlobalNormFinishParams {
  const float* partials;
  void* y;
  int64_t chunk_begin[kGlobalNormMaxTensors + 1];
  int32_t tensors;
  int32_t y_type;
};

// --- rows ------------------------------------------------------------------

// Three tensors walked row by row over the same outer shape (the last axis is
// the row): index 0 is the forward tensor (softmax's y, a norm's x), 1 dy, 2
// dx. Strides in elements; pointers already include each tensor's offset.
inline constexpr int kRowTensors = 3;
struct RowTensors {
  int32_t outer_rank;
  int32_t pad_;
  int64_t outer_shape[kRowsMaxOuterRank];
  int64_t outer_stride[kRowTensors][kRowsMaxOuterRank];
  int64_t col_stride[kRowTensors];
  int64_t rows;
  int64_t cols;
};

// Element offsets of row `row`'s first element in each of the three tensors,
// and the row's innermost outer coordinate (softmax's query index).
HAL_HOST_DEVICE inline void row_tensor_offsets(const RowTensors& L, int64_t row, int64_t off[kRowTensors],
                                               int64_t* last_coord) {
  for (int k = 0; k < kRowTensors; ++k) off[k] = 0;
  *last_coord = 0;
  for (int d = L.outer_rank - 1; d >= 0; --d) {
    const int64_t e = L.outer_shape[d];
    const int64_t q = row / e, c = row - q * e;
    if (d == L.outer_rank - 1) *last_coord = c;
    for (int k = 0; k < kRowTensors; ++k) off[k] += c * L.outer_stride[k][d];
    row = q;
  }
}

// The visible keys of a row: all of them, or with the causal mask (as the
// forward softmax and cpu_ref/softmax_backward.cpp) min(lk, q + lk - lq + 1),
// clamped at 0; lq = the innermost outer extent (1 for a 1-D tensor).
HAL_HOST_DEVICE inline int64_t softmax_visible_keys(const RowTensors& L, int64_t query, int32_t causal) {
  if (!causal) return L.cols;
  const int64_t lq = L.outer_rank > 0 ? L.outer_shape[L.outer_rank - 1] : 1;
  int64_t v = query + (L.cols - lq) + 1;
  if (v < 0) v = 0;
  if (v > L.cols) v = L.cols;
  return v;
}

// softmax_backward (log = 0) / log_softmax_backward (log = 1): one block /
// workgroup per row; the row's sum in a fixed order, then dx; masked entries 0.
struct SoftmaxBackwardParams {
  RowTensors layout;
  const void* y;
  const void* dy;
  void* dx;
  int32_t dtype;
  float scale;
  int32_t causal;
  int32_t log;
};

// The fixed split of R rows into blocks for dweight / dbias (the CPU's
// cpu_ref/row_blocks.h): block b holds rows [b * size, min(R, (b+1) * size)).
HAL_HOST_DEVICE inline int64_t norm_backward_block_rows(int64_t rows) {
  const int64_t by_count = (rows + 255) / 256;
  return by_count > 32 ? by_count : 32;
}
HAL_HOST_DEVICE inline int64_t norm_backward_blocks(int64_t rows) {
  const int64_t size = norm_backward_block_rows(rows);
  return (rows + size - 1) / size;
}

// layernorm_backward (rms = 0) / rmsnorm_backward (rms = 1), three kernels on
// one parameter struct:
//   *_rows      one block / workgroup per row: the row's statistics (two
//               passes, as the forward), written to stats[2 r] = mean,
//               stats[2 r + 1] = rstd, then mean(g) and mean(g xhat), then dx;
//   *_partials  grid (column tiles, row blocks): column j of row block b sums
//               dy xhat (and dy) over the block's rows in row order into
//               partial_w[b * cols + j] (partial_b);
//   *_finish    column j adds the partials in block order into dweight[j]
//               (dbias[j]).
// stats, partial_w and partial_b are device scratch the launcher owns.
struct NormBackwardParams {
  RowTensors layout;
  const void* x;
  const void* weight;
  const void* dy;
  void* dx;
  void* dweight;
  void* dbias;  // nullptr: rmsnorm, or a layernorm without bias
  float* stats;
  float* partial_w;
  float* partial_b;  // nullptr when dbias is
  int64_t weight_stride, dweight_stride, dbias_stride;
  int64_t block_rows;  // norm_backward_block_rows(rows)
  int64_t blocks;      // norm_backward_blocks(rows)
  int32_t dtype;
  float eps;
  int32_t rms;
  int32_t pad_;
};


// --- cross_entropy ----------------------------------------------------------

// hal_cross_entropy_check (one block / workgroup of 256): counts the rows
// whose target is not ignore_index and finds the first row whose target lies
// outside [0, V); the launcher reads this back and throws before any output
// is written (as the embedding's id check).
struct CrossEntropyCheck {
  int64_t counted;
  int64_t bad_row;  // -1: every target in range
  int64_t bad_value;
};
struct CrossEntropyCheckParams {
  const void* targets;
  CrossEntropyCheck* result;  // device memory, written by thread 0
  int64_t n, vocab, targets_stride, ignore_index;
  int32_t targets_i64;
  int32_t pad_;
};

// hal_cross_entropy_rows: one block / workgroup per row, the vocabulary in
// lane-strided chunks of the block (V up to 128256 and beyond): the max
// (NaN wins), sum exp(z - max) and, with smoothing, sum z, each in a fixed
// order; lse = max + log(sum); the row's loss to row_loss[i * row_loss_stride]
// (the loss tensor itself for reduction none, else scratch) and, when
// dlogits != nullptr, dlogits_ij = weight * (exp(z_ij - max) / sum - keep [j ==
// t] - spread). keep = 1 - s, spread = s / V, weight = 1 or 1 / count are the
// CPU's fp32 constants, computed on the host.
struct CrossEntropyParams {
  const void* logits;
  const void* targets;
  float* row_loss;
  void* dlogits;  // nullptr: no gradient asked for
  int64_t n, vocab;
  int64_t logits_row_stride, logits_col_stride;
  int64_t dlogits_row_stride, dlogits_col_stride;
  int64_t targets_stride, row_loss_stride;
  int64_t ignore_index;
  int32_t logits_type, targets_i64;
  float smoothing, keep, spread, weight;
};

// hal_cross_entropy_reduce (one block): the row losses summed in a fixed
// order (lane-strided, then the block's fixed tree), divided by counted for
// the mean (0 / 0 = NaN, as PyTorch), stored to loss (f32).
struct CrossEntropyReduceParams {
  const float* row_loss;
  float* loss;
  int64_t n;
  float counted;
  int32_t mean;
};

}  // namespace hal::kernel_params
