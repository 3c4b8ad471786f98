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
#include "ptx/packed16.cuh"

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

// --- 16-bit rows in registers, packed (never run: HAL_GPU_UNVERIFIED=1) ----
// softmax_rows_reg for x and y of one 16-bit dtype E, with the work per
// element cut to what the math needs (issue 24: the bf16 kernel was
// issue-bound at 42 instructions per element, 53% of copy bandwidth):
//  - E is a compile-time type: no dtype switch per chunk, and two values
//    converted per instruction (ptx/packed16.cuh);
//  - the scale is folded into the exponent: max_j fl(scale x_j) is
//    fl(scale max_j x_j) for scale > 0 (rounding is monotonic), fl(scale
//    min_j x_j) for scale < 0, so pass 1 is one fmax (fmin) per element and
//    pass 2 one fma(scale, x, -max) per exponent argument (one rounding
//    where the verified kernel has two; docs/accuracy.md's softmax bound
//    counts u32 * A per argument either way). scale == 0 takes the max
//    branch: max 0 * x is 0 for finite rows and NaN only when some x is
//    +-inf or NaN, where the verified kernel's sum is NaN too;
//  - Causal is a compile-time flag: unmasked rows (the common case) carry no
//    per-element masks; causal ones branch per chunk on full / partial / none;
//  - the row's offsets without 64-bit divisions (row_offsets_fast).
// Special values as softmax_rows_reg: NaN / +inf among the unmasked entries,
// or unmasked entries all -inf, give a NaN row; a fully masked row is 0 /
// -inf.
namespace hal::ptx::rows {

// Pass 1: max (Min: min) of the unmasked raw values of the row group.
template <int T, bool Causal, bool Min>
__device__ __forceinline__ float softmax_reg16_extreme(const int32_t (&in_chunk)[kRegChunks],
                                                       const float (&v)[kRegChunks][8], float* scratch) {
  const auto pick = [](float a, float b) { return Min ? fminf(a, b) : fmaxf(a, b); };
  float ext = Min ? INFINITY : -INFINITY;
#pragma unroll
  for (int k = 0; k < kRegChunks; ++k) {
    if (in_chunk[k] == 8) {
      // A tree over the chunk: 7 operations, 3 deep.
      const float a = pick(pick(v[k][0], v[k][1]), pick(v[k][2], v[k][3]));
      const float b = pick(pick(v[k][4], v[k][5]), pick(v[k][6], v[k][7]));
      ext = pick(ext, pick(a, b));
    } else if (Causal && in_chunk[k] > 0) {
#pragma unroll
      for (int e = 0; e < 8; ++e)
        if (e < in_chunk[k]) ext = pick(ext, v[k][e]);
    }
  }
  return group_allreduce(ext, T, pick, scratch);
}

// Pass 2: z = scale x - m (one fma), the sum of exp(z); kept: exp(z) (softmax)
// or z (log). Pass 3: one write of exp(z) / sum or z - log(sum).
template <class E, int T, bool Causal, bool Log>
__device__ __forceinline__ void softmax_reg16_tail(const RegRow<T>& r, const int32_t (&in_chunk)[kRegChunks],
                                                   float (&v)[kRegChunks][8], float scale, float neg_m, uint4* yrow,
                                                   float* scratch) {
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < kRegChunks; ++k) {
    if (in_chunk[k] == 0) continue;
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      if (Causal && e >= in_chunk[k]) continue;
      const float z = fmaf(scale, v[k][e], neg_m);
      const float x = expf(z);
      s += x;
      v[k][e] = Log ? z : x;
    }
  }
  s = group_allreduce(s, T, [](float a, float b) { return a + b; }, scratch);

  const float log_s = Log ? logf(s) : 0.0f, inv_s = Log ? 0.0f : 1.0f / s;
  const float masked = Log ? -INFINITY : 0.0f;
#pragma unroll
  for (int k = 0; k < kRegChunks; ++k) {
    if (r.chunk(k) >= r.chunks) continue;
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const float y = Log ? v[k][e] - log_s : v[k][e] * inv_s;
      v[k][e] = (Causal && e >= in_chunk[k]) ? masked : y;
    }
    yrow[r.chunk(k)] = pack8<E>(v[k]);
  }
}

template <class E, int T, bool Causal>
__device__ __forceinline__ void softmax_rows_reg16(const SoftmaxParams& p) {
  __shared__ float scratch[kBlockThreads / 32];
  const RowsLayout& L = p.layout;
  const RegRow<T> r = reg_row<T>(L);
  const RowOffsets o = row_offsets_fast(L, r.row);
  const uint4* xrow = reinterpret_cast<const uint4*>(static_cast<const E*>(p.x) + o.x);
  uint4* yrow = reinterpret_cast<uint4*>(static_cast<E*>(p.y) + o.y);

  float v[kRegChunks][8];
#pragma unroll
  for (int k = 0; k < kRegChunks; ++k)
    if (r.chunk(k) < r.chunks) unpack8<E>(xrow[r.chunk(k)], v[k]);

  // Unmasked elements of chunk k: 8 (all), 0 (none or inactive), or 1..7 (causal edge).
  int32_t in_chunk[kRegChunks];
  if constexpr (Causal) {
    const int64_t lq = L.outer_shape[L.outer_rank - 1];
    const int64_t last_key = o.last_coord + (L.cols - lq);
    const int32_t valid = last_key < 0 ? 0 : (last_key + 1 < L.cols ? static_cast<int32_t>(last_key + 1)
                                                                     : static_cast<int32_t>(L.cols));
#pragma unroll
    for (int k = 0; k < kRegChunks; ++k)
      in_chunk[k] = r.chunk(k) < r.chunks ? min(max(valid - 8 * r.chunk(k), 0), 8) : 0;
  } else {
#pragma unroll
    for (int k = 0; k < kRegChunks; ++k) in_chunk[k] = r.chunk(k) < r.chunks ? 8 : 0;
  }
  const float scale = p.scale;
  const bool flip = scale < 0.0f;  // the largest scale * x comes from the smallest x

  // Pass 1: the extreme raw value of the unmasked entries (NaN ignored, as
  // fmaxf does), one uniform branch on the sign of the scale.
  const float ext = flip ? softmax_reg16_extreme<T, Causal, true>(in_chunk, v, scratch)
                         : softmax_reg16_extreme<T, Causal, false>(in_chunk, v, scratch);
  const float m = scale * ext, neg_m = -m;

  // Passes 2 and 3, once for softmax and once for log_softmax (the branch is
  // uniform; one path per element instead of both and a select).
  if (p.log) softmax_reg16_tail<E, T, Causal, true>(r, in_chunk, v, scale, neg_m, yrow, scratch);
  else softmax_reg16_tail<E, T, Causal, false>(r, in_chunk, v, scale, neg_m, yrow, scratch);
}

}  // namespace hal::ptx::rows

// The kernels of the 16-bit variant: dtype x row group x causal, named
// hal_softmax_rows_reg16_<dtype>[_causal]_t<T> (backends/gpu/rows_variants.h).
#define HAL_SOFTMAX_REG16(name, E, T, C)                                                  \
  extern "C" __global__ void __launch_bounds__(kBlockThreads, 4) name(SoftmaxParams p) { \
    softmax_rows_reg16<E, T, C>(p);                                                      \
  }
HAL_SOFTMAX_REG16(hal_softmax_rows_reg16_bf16_t64, __nv_bfloat16, 64, false)
HAL_SOFTMAX_REG16(hal_softmax_rows_reg16_bf16_t128, __nv_bfloat16, 128, false)
HAL_SOFTMAX_REG16(hal_softmax_rows_reg16_bf16_t256, __nv_bfloat16, 256, false)
HAL_SOFTMAX_REG16(hal_softmax_rows_reg16_bf16_causal_t64, __nv_bfloat16, 64, true)
HAL_SOFTMAX_REG16(hal_softmax_rows_reg16_bf16_causal_t128, __nv_bfloat16, 128, true)
HAL_SOFTMAX_REG16(hal_softmax_rows_reg16_bf16_causal_t256, __nv_bfloat16, 256, true)
HAL_SOFTMAX_REG16(hal_softmax_rows_reg16_f16_t64, __half, 64, false)
HAL_SOFTMAX_REG16(hal_softmax_rows_reg16_f16_t128, __half, 128, false)
HAL_SOFTMAX_REG16(hal_softmax_rows_reg16_f16_t256, __half, 256, false)
HAL_SOFTMAX_REG16(hal_softmax_rows_reg16_f16_causal_t64, __half, 64, true)
HAL_SOFTMAX_REG16(hal_softmax_rows_reg16_f16_causal_t128, __half, 128, true)
HAL_SOFTMAX_REG16(hal_softmax_rows_reg16_f16_causal_t256, __half, 256, true)
#undef HAL_SOFTMAX_REG16
