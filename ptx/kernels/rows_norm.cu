// LayerNorm / RMSNorm over the last axis, one row per warp (short rows) or per
// 256-thread block (long rows), for any strides and float dtypes.
//
// Two-pass statistics (mean, then the sum of squared deviations) rather than
// E[x^2] - E[x]^2, which cancels catastrophically for rows with a large mean;
// the row is re-read from global memory (it stays in L1/L2).
#include <math.h>

#include "ptx/kernels/rows_common.cuh"

using namespace hal::ptx;
using namespace hal::kernel_params;
using namespace hal::ptx::rows;

extern "C" __global__ void __launch_bounds__(kBlockThreads) hal_norm_rows(NormParams p) {
  __shared__ float scratch[kBlockThreads / 32];
  const RowsLayout& L = p.layout;
  const int T = L.cuda_threads_per_row;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (kBlockThreads / T) + threadIdx.x / T;
  const int lane = threadIdx.x % T;
  if (row >= L.rows) return;

  const ElemType xt = static_cast<ElemType>(p.x_type), yt = static_cast<ElemType>(p.y_type);
  const ElemType wt = static_cast<ElemType>(p.weight_type), bt = static_cast<ElemType>(p.bias_type);
  const RowOffsets o = row_offsets(L, row);
  const void* xrow = offset_ptr(p.x, xt, o.x);
  void* yrow = offset_ptr(p.y, yt, o.y);
  const float n = static_cast<float>(L.cols);
  const auto add = [](float a, float b) { return a + b; };

  float mean = 0.0f;
  float acc = 0.0f;
  if (p.rms) {
    for_each_in_row(xrow, xt, L.cols, L.x_col_stride, L.x_vec16, lane, T, [&](int64_t, float x) { acc += x * x; });
  } else {
    for_each_in_row(xrow, xt, L.cols, L.x_col_stride, L.x_vec16, lane, T, [&](int64_t, float x) { acc += x; });
    mean = group_allreduce(acc, T, add, scratch) / n;
    acc = 0.0f;
    for_each_in_row(xrow, xt, L.cols, L.x_col_stride, L.x_vec16, lane, T, [&](int64_t, float x) {
      const float d = x - mean;
      acc += d * d;
    });
  }
  const float var = group_allreduce(acc, T, add, scratch) / n;
  const float rstd = 1.0f / sqrtf(var + p.eps);

  const void* w = p.weight;
  const void* b = p.bias;
  const int64_t ws = p.weight_stride, bs = p.bias_stride;
  map_row(xrow, xt, L.x_col_stride, yrow, yt, L.y_col_stride, L.cols, L.x_vec16 && L.y_vec16, lane, T,
          [&](int64_t j, float x) {
            float v = (x - mean) * rstd * load_as_float(w, wt, j * ws);
            if (b != nullptr) v += load_as_float(b, bt, j * bs);
            return v;
          });
}

namespace {
// Weight / bias elements [8c, 8c + 8) (one chunk of 8 when the launcher
// flagged the vector weight_vec16 / bias_vec16: contiguous and aligned).
__device__ __forceinline__ void load8_param(const void* base, ElemType t, int64_t stride, bool vec, int64_t c,
                                            float out[8]) {
  if (vec) {
    load8(base, t, c, out);
    return;
  }
#pragma unroll
  for (int e = 0; e < 8; ++e) out[e] = load_as_float(base, t, (c * 8 + e) * stride);
}
}  // namespace

// The same LayerNorm / RMSNorm with the row held in registers (see
// RegRow; the launcher checks the conditions): the mean, then the sum
// of squared deviations (sum of squares for RMS), both in a fixed order from
// registers, then one write.
template <int T>
__device__ __forceinline__ void norm_rows_reg(const NormParams& p) {
  __shared__ float scratch[kBlockThreads / 32];
  const RowsLayout& L = p.layout;
  const RegRow<T> r = reg_row<T>(L);
  const ElemType xt = static_cast<ElemType>(p.x_type), yt = static_cast<ElemType>(p.y_type);
  const ElemType wt = static_cast<ElemType>(p.weight_type), bt = static_cast<ElemType>(p.bias_type);
  const RowOffsets o = row_offsets(L, r.row);
  const void* xrow = offset_ptr(p.x, xt, o.x);
  void* yrow = offset_ptr(p.y, yt, o.y);
  const float n = static_cast<float>(L.cols);
  const auto add = [](float a, float b) { return a + b; };

  float v[kRegChunks][8];
  load_row_regs(xrow, xt, r, v);

  float mean = 0.0f;
  if (!p.rms) {
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < kRegChunks; ++k) {
      if (r.chunk(k) < r.chunks) {
#pragma unroll
        for (int e = 0; e < 8; ++e) acc += v[k][e];
      }
    }
    mean = group_allreduce(acc, T, add, scratch) / n;
  }
  float acc = 0.0f;
#pragma unroll
  for (int k = 0; k < kRegChunks; ++k) {
    if (r.chunk(k) < r.chunks) {
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const float d = v[k][e] - mean;
        acc += d * d;
      }
    }
  }
  const float var = group_allreduce(acc, T, add, scratch) / n;
  const float rstd = 1.0f / sqrtf(var + p.eps);

  const bool w_vec = p.weight_vec16 != 0;
  const bool b_vec = p.bias != nullptr && p.bias_vec16 != 0;
#pragma unroll
  for (int k = 0; k < kRegChunks; ++k) {
    const int32_t c = r.chunk(k);
    if (c >= r.chunks) continue;
    float w[8];
    load8_param(p.weight, wt, p.weight_stride, w_vec, c, w);
#pragma unroll
    for (int e = 0; e < 8; ++e) v[k][e] = (v[k][e] - mean) * rstd * w[e];
    if (p.bias != nullptr) {
      load8_param(p.bias, bt, p.bias_stride, b_vec, c, w);
#pragma unroll
      for (int e = 0; e < 8; ++e) v[k][e] += w[e];
    }
    store8(yrow, yt, c, v[k]);
  }
}

// One kernel per row group (RowsLayout::cuda_threads_per_row, picked by the launcher).
extern "C" __global__ void __launch_bounds__(kBlockThreads, 4) hal_norm_rows_reg(NormParams p) {
  norm_rows_reg<256>(p);
}
extern "C" __global__ void __launch_bounds__(kBlockThreads, 4) hal_norm_rows_reg_t128(NormParams p) {
  norm_rows_reg<128>(p);
}
extern "C" __global__ void __launch_bounds__(kBlockThreads, 4) hal_norm_rows_reg_t64(NormParams p) {
  norm_rows_reg<64>(p);
}
