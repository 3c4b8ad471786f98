// softmax / log_softmax over the last axis, with scale and an optional causal
// mask. One workgroup per row. Two paths, chosen by the launcher:
//   x_vec16 (contiguous, 16-byte-aligned f32/f16/bf16 rows): two passes, as
//     the NVIDIA kernel (ptx/kernels/rows_softmax.cu): pass 1 reads the row
//     once in 16-byte chunks and keeps an online max m and sum s of
//     exp(v - m) per lane (the sum rescaled when the max grows), combined
//     across the workgroup in a fixed order; pass 2 writes.
//   otherwise (any strides): three passes over the row in global memory
//     (max, sum of exp, write); rows are re-read from L2.
// The vector path sums in a different order (see rows_common.h): results
// differ in the last bits, within docs/accuracy.md, and stay deterministic.
// Special values are the same on both paths: a NaN or +inf among the
// unmasked entries, or unmasked entries all -inf, make every output NaN; a
// fully masked row gives 0 (softmax) or -inf (log_softmax), as hal/op.h
// specifies; masked entries are 0 / -inf.
#include "rows_common.h"

using namespace hal::hip;
using namespace hal::hip::kernels;
using namespace hal::kernel_params;

namespace {

// Online softmax statistics of a set of values: max m, sum s of exp(v - m).
struct MaxSum {
  float m, s;
};

__device__ __forceinline__ void max_sum_add(MaxSum& st, float v) {
  // One exp per element: rescale the sum only when the max grows. A NaN v
  // fails both tests' `v > m` and lands in the sum, which becomes NaN (and
  // stays NaN: NaN * 0 + 1 is NaN).
  if (v > st.m) {
    st.s = st.s * expf(st.m - v) + 1.0f;
    st.m = v;
  } else if (v != -INFINITY) {
    st.s += expf(v - st.m);
  }
}

// Commutative bit for bit (fmaxf and + are), so every lane of the butterfly
// ends with the same value. Two empty sets keep s (0, or NaN from a NaN seen).
__device__ __forceinline__ MaxSum max_sum_combine(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return {m, a.s + b.s};
  return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
}

__device__ __forceinline__ MaxSum block_max_sum(MaxSum v, MaxSum* scratch) {
#pragma unroll
  for (int off = kWaveSize / 2; off > 0; off /= 2)
    v = max_sum_combine(v, MaxSum{__shfl_xor(v.m, off, kWaveSize), __shfl_xor(v.s, off, kWaveSize)});
  __syncthreads();  // scratch may still be read for the previous row
  if (lane_id() == 0) scratch[wave_id()] = v;
  __syncthreads();
  MaxSum r = scratch[0];
#pragma unroll
  for (int w = 1; w < kRowWaves; ++w) r = max_sum_combine(r, scratch[w]);
  return r;
}

// One row on the vector path; x elements are kSize bytes (y too when y_vec16).
template <int kSize>
__device__ __forceinline__ void softmax_row_vec16(const SoftmaxParams& p, const RowOffsets& o, int64_t valid,
                                                  MaxSum* scratch) {
  constexpr int kPer = kChunkElems<kSize>;
  const RowsLayout& l = p.layout;
  const Chunk16* xc = chunk_row<kSize>(p.x, o.x);
  const int64_t valid_chunks = valid / kPer;

  MaxSum st{-INFINITY, 0.0f};
  for (int64_t c = threadIdx.x; c < valid_chunks; c += kRowThreads) {
    const Chunk16 chunk = xc[c];
#pragma unroll
    for (int e = 0; e < kPer; ++e) max_sum_add(st, p.scale * chunk_f32<kSize>(chunk, p.x_type, e));
  }
  for (int64_t j = valid_chunks * kPer + threadIdx.x; j < valid; j += kRowThreads)
    max_sum_add(st, p.scale * load_f32(p.x, p.x_type, o.x + j));
  st = block_max_sum(st, scratch);
  // The three-pass path's special values: +inf max, or nothing but -inf
  // among valid > 0 entries, gives exp(inf - inf) = NaN there.
  if (st.m == INFINITY || (st.m == -INFINITY && valid > 0)) st.s = NAN;
  const float m = st.m, s = st.s, log_s = logf(s);
  const bool log_out = p.log != 0;
  auto out = [&](int64_t j, float x) {
    if (j >= valid) return log_out ? -INFINITY : 0.0f;
    const float z = p.scale * x - m;
    return log_out ? z - log_s : expf(z) / s;
  };

  if (!l.y_vec16) {
    // y strided, misaligned or of another width: element per lane (x's reads
    // stay coalesced; unrolling a chunk of any-dtype stores costs registers).
    for (int64_t j = threadIdx.x; j < l.cols; j += kRowThreads)
      store_f32(p.y, p.y_type, o.y + j * l.y_col_stride, out(j, load_f32(p.x, p.x_type, o.x + j)));
    return;
  }
  const int64_t chunks = l.cols / kPer;
  Chunk16* yc = chunk_row<kSize>(p.y, o.y);
  for (int64_t c = threadIdx.x; c < chunks; c += kRowThreads) {
    const Chunk16 chunk = xc[c];
    Chunk16 yv = {0u, 0u, 0u, 0u};
#pragma unroll
    for (int e = 0; e < kPer; ++e)
      chunk_put<kSize>(yv, e, encode_sized<kSize>(p.y_type, out(c * kPer + e, chunk_f32<kSize>(chunk, p.x_type, e))));
    yc[c] = yv;
  }
  for (int64_t j = chunks * kPer + threadIdx.x; j < l.cols; j += kRowThreads)
    store_f32(p.y, p.y_type, o.y + j, out(j, load_f32(p.x, p.x_type, o.x + j)));
}

}  // namespace

extern "C" __global__ __launch_bounds__(kRowThreads) void hal_softmax(SoftmaxParams p) {
  __shared__ float scratch[kRowWaves];
  __shared__ MaxSum max_sum_scratch[kRowWaves];
  const RowsLayout& l = p.layout;
  for (int64_t r = blockIdx.x; r < l.rows; r += gridDim.x) {
    const RowOffsets o = row_offsets(l, r);
    // Keys j > limit are masked (limit = i + Lk - Lq); no mask: all cols.
    int64_t limit = l.cols - 1;
    if (p.causal) limit = o.last_coord + (l.cols - l.outer_shape[l.outer_rank - 1]);
    const int64_t valid = limit + 1 < l.cols ? (limit + 1 > 0 ? limit + 1 : 0) : l.cols;
    if (l.x_vec16) {
      if (elem_size(p.x_type) == 4) softmax_row_vec16<4>(p, o, valid, max_sum_scratch);
      else softmax_row_vec16<2>(p, o, valid, max_sum_scratch);
      continue;
    }
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < valid; j += kRowThreads)
      m = fmaxf(m, p.scale * load_f32(p.x, p.x_type, o.x + j * l.x_col_stride));
    m = block_reduce<kRowWaves, ReduceOp::max>(m, scratch);
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < valid; j += kRowThreads)
      s += expf(p.scale * load_f32(p.x, p.x_type, o.x + j * l.x_col_stride) - m);
    s = block_reduce<kRowWaves, ReduceOp::sum>(s, scratch);
    const float log_s = logf(s);
    for (int64_t j = threadIdx.x; j < l.cols; j += kRowThreads) {
      float v;
      if (j >= valid) {
        v = p.log ? -INFINITY : 0.0f;
      } else {
        const float z = p.scale * load_f32(p.x, p.x_type, o.x + j * l.x_col_stride) - m;
        v = p.log ? z - log_s : expf(z) / s;
      }
      store_f32(p.y, p.y_type, o.y + j * l.y_col_stride, v);
    }
  }
}

// 16-bit rows on the vector path only (x_vec16, 2-byte x; never run:
// HAL_GPU_UNVERIFIED=1, backends/hip/hip_rows.cpp): the same row code as
// hal_softmax's for those rows, without the f32 and strided paths, whose
// uniform values hal_softmax keeps in SGPRs next to these (30 SGPRs spilled
// into VGPR lanes on gfx90a, 32 on gfx940).
extern "C" __global__ __launch_bounds__(kRowThreads) void hal_softmax_vec16_2b(SoftmaxParams p) {
  __shared__ MaxSum max_sum_scratch[kRowWaves];
  const RowsLayout& l = p.layout;
  for (int64_t r = blockIdx.x; r < l.rows; r += gridDim.x) {
    const RowOffsets o = row_offsets(l, r);
    int64_t limit = l.cols - 1;
    if (p.causal) limit = o.last_coord + (l.cols - l.outer_shape[l.outer_rank - 1]);
    const int64_t valid = limit + 1 < l.cols ? (limit + 1 > 0 ? limit + 1 : 0) : l.cols;
    softmax_row_vec16<2>(p, o, valid, max_sum_scratch);
  }
}
