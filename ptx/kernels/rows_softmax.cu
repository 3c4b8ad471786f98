// Softmax / log-softmax over the last axis, one row per warp (short rows) or
// per 256-thread block (long rows), for any strides and float dtypes.
//
// Pass 1 computes the row's max m and sum s = sum exp(v - m) online (one read
// of x); pass 2 writes exp(v - m) / s (or v - m - log s). Causal rows only
// look at keys j <= i + (Lk - Lq); masked outputs are 0 (log: -inf); a row
// with no unmasked key is all 0 (log: -inf). NaN in a row makes s NaN, so the
// whole row becomes NaN, as in the reference.
#include <math.h>

#include "ptx/kernels/rows_common.cuh"

namespace hal::ptx::rows {

__device__ __forceinline__ MaxSum combine_max_sum(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return {m, 0.0f};  // both empty
  return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
}

}  // namespace hal::ptx::rows

using namespace hal::ptx;
using namespace hal::kernel_params;
using namespace hal::ptx::rows;

extern "C" __global__ void __launch_bounds__(kBlockThreads) hal_softmax_rows(SoftmaxParams p) {
  __shared__ MaxSum scratch[kBlockThreads / 32];
  const RowsLayout& L = p.layout;
  const int T = L.cuda_threads_per_row;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (kBlockThreads / T) + threadIdx.x / T;
  const int lane = threadIdx.x % T;
  if (row >= L.rows) return;  // only possible when T <= 32 (whole warps leave)

  const ElemType xt = static_cast<ElemType>(p.x_type), yt = static_cast<ElemType>(p.y_type);
  const RowOffsets o = row_offsets(L, row);
  const void* xrow = offset_ptr(p.x, xt, o.x);
  void* yrow = offset_ptr(p.y, yt, o.y);

  int64_t valid = L.cols;
  if (p.causal) {
    const int64_t lq = L.outer_shape[L.outer_rank - 1];
    const int64_t last_key = o.last_coord + (L.cols - lq);
    valid = last_key < 0 ? 0 : (last_key + 1 < L.cols ? last_key + 1 : L.cols);
  }
  const float scale = p.scale;

  MaxSum st{-INFINITY, 0.0f};
  for_each_in_row(xrow, xt, valid, L.x_col_stride, L.x_vec16, lane, T, [&](int64_t, float x) {
    // One exp per element: rescale the sum only when the max grows.
    const float v = scale * x;
    if (v > st.m) {
      st.s = st.s * expf(st.m - v) + 1.0f;
      st.m = v;
    } else if (v != -INFINITY) {
      st.s += expf(v - st.m);  // NaN v makes s NaN
    }
  });
  st = group_allreduce(st, T, combine_max_sum, scratch);

  const bool empty = st.s == 0.0f;  // NaN s is not empty: it propagates
  const float m = st.m, log_s = logf(st.s), s = st.s;
  const bool log_out = p.log;
  map_row(xrow, xt, L.x_col_stride, yrow, yt, L.y_col_stride, L.cols, L.x_vec16 && L.y_vec16, lane, T,
          [&](int64_t j, float x) {
            if (j >= valid || empty) return log_out ? -INFINITY : 0.0f;
            const float v = scale * x - m;
            return log_out ? v - log_s : expf(v) / s;
          });
}

// The same softmax with the row held in registers (see RegRow; the launcher
// checks the conditions and picks the kernel of the row group): max, then sum
// of exp(v - max), both in a fixed order, then one write of exp(v - max)
// (computed once, kept) times 1 / sum, the CPU reference's form. Nsight
// Compute put the bf16 kernel at 61 instructions per element, issue-bound:
// hence the multiply rather than a division per element, and 32-bit column
// indices (cols <= kRegMaxCols). Special values as in the reference: a NaN
// or +inf among the unmasked entries, or unmasked entries all -inf, make the
// row NaN (through the sum); a row with every key masked is 0 / -inf.
template <int T>
__device__ __forceinline__ void softmax_rows_reg(const SoftmaxParams& p) {
  __shared__ float scratch[kBlockThreads / 32];
  const RowsLayout& L = p.layout;
  const RegRow<T> r = reg_row<T>(L);
  const ElemType xt = static_cast<ElemType>(p.x_type), yt = static_cast<ElemType>(p.y_type);
  const RowOffsets o = row_offsets(L, r.row);
  const void* xrow = offset_ptr(p.x, xt, o.x);
  void* yrow = offset_ptr(p.y, yt, o.y);

  float v[kRegChunks][8];
  load_row_regs(xrow, xt, r, v);

  // Unmasked columns of chunk k: [8 c, 8 c + in_chunk(k)), clamped to [0, 8].
  int32_t valid = static_cast<int32_t>(L.cols);
  if (p.causal) {
    const int64_t lq = L.outer_shape[L.outer_rank - 1];
    const int64_t last_key = o.last_coord + (L.cols - lq);
    valid = last_key < 0 ? 0 : (last_key + 1 < L.cols ? static_cast<int32_t>(last_key + 1) : valid);
  }
  int32_t in_chunk[kRegChunks];
#pragma unroll
  for (int k = 0; k < kRegChunks; ++k)
    in_chunk[k] = r.chunk(k) < r.chunks ? min(max(valid - 8 * r.chunk(k), 0), 8) : 0;
  const float scale = p.scale;

  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < kRegChunks; ++k) {
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      v[k][e] *= scale;
      if (e < in_chunk[k]) m = fmaxf(m, v[k][e]);
    }
  }
  m = group_allreduce(m, T, [](float a, float b) { return fmaxf(a, b); }, scratch);

  const bool log_out = p.log;
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < kRegChunks; ++k) {
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      v[k][e] -= m;
      if (e < in_chunk[k]) {
        const float x = expf(v[k][e]);
        s += x;
        if (!log_out) v[k][e] = x;
      }
    }
  }
  s = group_allreduce(s, T, [](float a, float b) { return a + b; }, scratch);

  const float log_s = logf(s), inv_s = 1.0f / s;
#pragma unroll
  for (int k = 0; k < kRegChunks; ++k) {
    if (r.chunk(k) >= r.chunks) continue;
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      if (e >= in_chunk[k]) v[k][e] = log_out ? -INFINITY : 0.0f;
      else v[k][e] = log_out ? v[k][e] - log_s : v[k][e] * inv_s;
    }
    store8(yrow, yt, r.chunk(k), v[k]);
  }
}

// One kernel per row group (RowsLayout::cuda_threads_per_row, picked by the launcher).
extern "C" __global__ void __launch_bounds__(kBlockThreads, 4) hal_softmax_rows_reg(SoftmaxParams p) {
  softmax_rows_reg<256>(p);
}
extern "C" __global__ void __launch_bounds__(kBlockThreads, 4) hal_softmax_rows_reg_t128(SoftmaxParams p) {
  softmax_rows_reg<128>(p);
}
extern "C" __global__ void __launch_bounds__(kBlockThreads, 4) hal_softmax_rows_reg_t64(SoftmaxParams p) {
  softmax_rows_reg<64>(p);
}
