// LayerNorm / RMSNorm over the last axis, one row per warp (short rows) or per
// 256-thread block (long rows), for any strides and float dtypes.
//
// Two-pass statistics (mean, then the sum of squared deviations) rather than
// E[x^2] - E[x]^2, which cancels catastrophically for rows with a large mean;
// the row is re-read from global memory (it stays in L1/L2).
#include <math.h>

#include "ptx/kernels/rows_common.cuh"
#include "ptx/packed16.cuh"

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

// --- 16-bit rows in registers, packed (never run: HAL_GPU_UNVERIFIED=1) ----
// norm_rows_reg for x, y, weight and bias of one 16-bit dtype E, all
// contiguous and 16-byte aligned (the launcher checks; anything else takes
// the verified kernels), with the work per element cut (issue 24: bf16
// rmsnorm / layernorm at 65% / 61% of copy bandwidth, issue-bound):
// E a compile-time type (no dtype switch per chunk, two conversions per
// instruction, ptx/packed16.cuh); pass 2 keeps d = x - mean in the
// registers, so the write is d * rstd then one fma with weight and bias
// (one rounding fewer than (d * rstd) * w + b, inside docs/accuracy.md's
// layernorm bound, which charges u32 per product and for the bias add);
// offsets without 64-bit divisions (row_offsets_fast). Statistics in the
// verified kernel's order: the same mean and variance bit for bit.
namespace hal::ptx::rows {

template <class E, int T>
__device__ __forceinline__ void norm_rows_reg16(const NormParams& p) {
  __shared__ float scratch[kBlockThreads / 32];
  const RowsLayout& L = p.layout;
  const RegRow<T> r = reg_row<T>(L);
  const RowOffsets o = row_offsets_fast(L, r.row);
  const uint4* xrow = reinterpret_cast<const uint4*>(static_cast<const E*>(p.x) + o.x);
  uint4* yrow = reinterpret_cast<uint4*>(static_cast<E*>(p.y) + o.y);
  const uint4* wrow = static_cast<const uint4*>(p.weight);
  const uint4* brow = static_cast<const uint4*>(p.bias);
  const float n = static_cast<float>(L.cols);
  const auto add = [](float a, float b) { return a + b; };

  float v[kRegChunks][8];
#pragma unroll
  for (int k = 0; k < kRegChunks; ++k)
    if (r.chunk(k) < r.chunks) unpack8<E>(xrow[r.chunk(k)], v[k]);

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
        v[k][e] -= mean;
        acc = fmaf(v[k][e], v[k][e], acc);
      }
    }
  }
  const float var = group_allreduce(acc, T, add, scratch) / n;
  const float rstd = 1.0f / sqrtf(var + p.eps);

  const bool has_bias = brow != nullptr;
#pragma unroll
  for (int k = 0; k < kRegChunks; ++k) {
    const int32_t c = r.chunk(k);
    if (c >= r.chunks) continue;
    float w[8], b[8];
    unpack8<E>(wrow[c], w);
    if (has_bias) {
      unpack8<E>(brow[c], b);
#pragma unroll
      for (int e = 0; e < 8; ++e) v[k][e] = fmaf(v[k][e] * rstd, w[e], b[e]);
    } else {
#pragma unroll
      for (int e = 0; e < 8; ++e) v[k][e] = (v[k][e] * rstd) * w[e];
    }
    yrow[c] = pack8<E>(v[k]);
  }
}

}  // namespace hal::ptx::rows

// The kernels of the 16-bit variant, named hal_norm_rows_reg16_<dtype>_t<T>
// (backends/gpu/rows_variants.h).
#define HAL_NORM_REG16(name, E, T)                                                     \
  extern "C" __global__ void __launch_bounds__(kBlockThreads, 4) name(NormParams p) { \
    norm_rows_reg16<E, T>(p);                                                         \
  }
HAL_NORM_REG16(hal_norm_rows_reg16_bf16_t64, __nv_bfloat16, 64)
HAL_NORM_REG16(hal_norm_rows_reg16_bf16_t128, __nv_bfloat16, 128)
HAL_NORM_REG16(hal_norm_rows_reg16_bf16_t256, __nv_bfloat16, 256)
HAL_NORM_REG16(hal_norm_rows_reg16_f16_t64, __half, 64)
HAL_NORM_REG16(hal_norm_rows_reg16_f16_t128, __half, 128)
HAL_NORM_REG16(hal_norm_rows_reg16_f16_t256, __half, 256)
#undef HAL_NORM_REG16
