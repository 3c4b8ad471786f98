// layernorm / rmsnorm over the last axis. One workgroup per row. layernorm
// uses two passes (mean, then the sum of squared deviations) rather than
// E[x^2] - mean^2, which cancels catastrophically for rows with a large mean;
// rmsnorm one (the sum of squares); then the write. The passes are those of
// the NVIDIA kernel (ptx/kernels/rows_norm.cu).
// Two paths, chosen by the launcher:
//   x_vec16 (contiguous, 16-byte-aligned f32/f16/bf16 rows): the statistics
//     passes read 16-byte chunks (rows_common.h); the write moves 16-byte
//     chunks of x, weight, bias and y when all four qualify (y_vec16,
//     weight_vec16, bias_vec16), one element per lane otherwise;
//   otherwise (any strides): one element per lane in every pass.
// The vector path sums in a different order (see rows_common.h): results
// differ in the last bits, within docs/accuracy.md, and stay deterministic.
#include "rows_common.h"

using namespace hal::hip;
using namespace hal::hip::kernels;
using namespace hal::kernel_params;

namespace {

// Sum over the row of f(x_j), in the vector path's order, reduced over the workgroup.
template <int kSize, class F>
__device__ __forceinline__ float row_sum_vec16(const NormParams& p, const RowOffsets& o, float* scratch, F f) {
  constexpr int kPer = kChunkElems<kSize>;
  const int64_t cols = p.layout.cols, chunks = cols / kPer;
  const Chunk16* xc = chunk_row<kSize>(p.x, o.x);
  float acc = 0.0f;
  for (int64_t c = threadIdx.x; c < chunks; c += kRowThreads) {
    const Chunk16 chunk = xc[c];
#pragma unroll
    for (int e = 0; e < kPer; ++e) acc += f(chunk_f32<kSize>(chunk, p.x_type, e));
  }
  for (int64_t j = chunks * kPer + threadIdx.x; j < cols; j += kRowThreads) acc += f(load_f32(p.x, p.x_type, o.x + j));
  return block_reduce<kRowWaves, ReduceOp::sum>(acc, scratch);
}

template <int kSize>
__device__ __forceinline__ void norm_row_vec16(const NormParams& p, const RowOffsets& o, float* scratch) {
  constexpr int kPer = kChunkElems<kSize>;
  const RowsLayout& l = p.layout;
  const float inv_n = 1.0f / static_cast<float>(l.cols);
  float mean = 0.0f;
  if (!p.rms) mean = row_sum_vec16<kSize>(p, o, scratch, [](float x) { return x; }) * inv_n;
  const float ss = row_sum_vec16<kSize>(p, o, scratch, [mean](float x) {
    const float d = x - mean;
    return d * d;
  });
  const float inv_std = 1.0f / sqrtf(ss * inv_n + p.eps);

  const bool vec_write = l.y_vec16 && p.weight_vec16 && (p.bias == nullptr || p.bias_vec16);
  int64_t first_scalar = 0;
  if (vec_write) {
    const int64_t chunks = l.cols / kPer;
    const Chunk16* xc = chunk_row<kSize>(p.x, o.x);
    const Chunk16* wc = chunk_row<kSize>(p.weight, 0);
    const Chunk16* bc = chunk_row<kSize>(p.bias, 0);
    Chunk16* yc = chunk_row<kSize>(p.y, o.y);
    for (int64_t c = threadIdx.x; c < chunks; c += kRowThreads) {
      const Chunk16 xv = xc[c], wv = wc[c];
      Chunk16 bv = {0u, 0u, 0u, 0u};
      if (p.bias) bv = bc[c];
      Chunk16 yv = {0u, 0u, 0u, 0u};
#pragma unroll
      for (int e = 0; e < kPer; ++e) {
        float v = (chunk_f32<kSize>(xv, p.x_type, e) - mean) * inv_std * chunk_f32<kSize>(wv, p.weight_type, e);
        if (p.bias) v += chunk_f32<kSize>(bv, p.bias_type, e);
        chunk_put<kSize>(yv, e, encode_sized<kSize>(p.y_type, v));
      }
      yc[c] = yv;
    }
    first_scalar = chunks * kPer;
  }
  for (int64_t j = first_scalar + threadIdx.x; j < l.cols; j += kRowThreads) {
    float v = (load_f32(p.x, p.x_type, o.x + j) - mean) * inv_std * load_f32(p.weight, p.weight_type, j * p.weight_stride);
    if (p.bias) v += load_f32(p.bias, p.bias_type, j * p.bias_stride);
    store_f32(p.y, p.y_type, o.y + j * l.y_col_stride, v);
  }
}

}  // namespace

extern "C" __global__ __launch_bounds__(kRowThreads) void hal_norm(NormParams p) {
  __shared__ float scratch[kRowWaves];
  const RowsLayout& l = p.layout;
  const float inv_n = 1.0f / static_cast<float>(l.cols);
  for (int64_t r = blockIdx.x; r < l.rows; r += gridDim.x) {
    const RowOffsets o = row_offsets(l, r);
    if (l.x_vec16) {
      if (elem_size(p.x_type) == 4) norm_row_vec16<4>(p, o, scratch);
      else norm_row_vec16<2>(p, o, scratch);
      continue;
    }
    float mean = 0.0f;
    if (!p.rms) {
      float s = 0.0f;
      for (int64_t j = threadIdx.x; j < l.cols; j += kRowThreads) s += load_f32(p.x, p.x_type, o.x + j * l.x_col_stride);
      mean = block_reduce<kRowWaves, ReduceOp::sum>(s, scratch) * inv_n;
    }
    float ss = 0.0f;
    for (int64_t j = threadIdx.x; j < l.cols; j += kRowThreads) {
      const float d = load_f32(p.x, p.x_type, o.x + j * l.x_col_stride) - mean;
      ss += d * d;
    }
    ss = block_reduce<kRowWaves, ReduceOp::sum>(ss, scratch);
    const float inv_std = 1.0f / sqrtf(ss * inv_n + p.eps);
    for (int64_t j = threadIdx.x; j < l.cols; j += kRowThreads) {
      const float xv = load_f32(p.x, p.x_type, o.x + j * l.x_col_stride);
      float v = (xv - mean) * inv_std * load_f32(p.weight, p.weight_type, j * p.weight_stride);
      if (p.bias) v += load_f32(p.bias, p.bias_type, j * p.bias_stride);
      store_f32(p.y, p.y_type, o.y + j * l.y_col_stride, v);
    }
  }
}

// 16-bit rows on the vector path only (x_vec16, 2-byte x; never run:
// HAL_GPU_UNVERIFIED=1, backends/hip/hip_rows.cpp): hal_norm's row code for
// those rows without its f32 and strided paths (hal_norm spills 57 SGPRs
// into VGPR lanes on gfx90a, 85 on gfx940).
extern "C" __global__ __launch_bounds__(kRowThreads) void hal_norm_vec16_2b(NormParams p) {
  __shared__ float scratch[kRowWaves];
  const RowsLayout& l = p.layout;
  for (int64_t r = blockIdx.x; r < l.rows; r += gridDim.x) norm_row_vec16<2>(p, row_offsets(l, r), scratch);
}
