// Attention backward on CUDA cores, any head dims, strides and f32/f16/bf16
// (kernel_params/attention_backward.h): the fallback behind the tensor-core
// kernels (attention_backward_mma.cu) and the path of every shape they do not
// take. Three kernels, launched in this order on one stream
// (backends/gpu/attention_backward_plan.h):
//   hal_attention_bwd_delta_<t>    one warp per (batch, query, head): D_i = dy_i . y_i
//                                  into the delta scratch;
//   hal_attention_bwd_dkdv_general_<t> one warp per (batch, kv head, key): dk_j and
//                                  dv_j, summed over the query heads of the kv
//                                  head in ascending order, each over the
//                                  queries that see key j in ascending order;
//   hal_attention_bwd_dq_general_<t>   one warp per (batch, query, head): dq_i over
//                                  its visible keys in ascending order.
// Each output element is written by exactly one warp as one fixed chain of
// fp32 FMAs, so there are no atomics and the bits do not depend on the grid
// or on the GPU model. Both gradient kernels compute each score and dp with
// the same function (lane-strided partial dots, the same butterfly), so they
// see the same P and dS bits.
//
// Lane t holds output channels c0 + t + 32u (u < kPerLane) of a slice of
// kSlice channels; wider heads take several slices, recomputing the scores
// per slice (as attention_general.cu). Only visible (query, key) pairs are
// ever read: a masked key reaches no gradient, a query with no key gets
// dq = 0, a key no query sees gets dk = dv = 0.
//
// One instance per dtype (_f32, _f16, _bf16): with the dtype a runtime switch
// (ptx/element.cuh's load_as_float) ptxas spilled the dk/dv kernel on sm_80.
// __launch_bounds__(256, 1): with the thread count alone ptxas 13.0 held these
// kernels at 64 or 128 registers and spilled (as training_rows.cu notes).
#include <math.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernel_params/attention_backward.h"

namespace {
constexpr int kWarpsPerBlock = 8;
constexpr int kPerLane = 8;
constexpr int kSlice = 32 * kPerLane;
}  // namespace

using namespace hal::kernel_params;

namespace {

// Element access by the storage type: float, __half or __nv_bfloat16.
__device__ __forceinline__ float widen(float x) { return x; }
__device__ __forceinline__ float widen(__half x) { return __half2float(x); }
__device__ __forceinline__ float widen(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class E> __device__ __forceinline__ E narrow(float x);
template <> __device__ __forceinline__ float narrow<float>(float x) { return x; }
template <> __device__ __forceinline__ __half narrow<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 narrow<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <class E> __device__ __forceinline__ float ld(const void* base, int64_t i) {
  return widen(static_cast<const E*>(base)[i]);
}
template <class E> __device__ __forceinline__ void st(void* base, int64_t i, float x) {
  static_cast<E*>(base)[i] = narrow<E>(x);
}

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
  return x;
}

// Element offsets of one row of a [b, s, h, c] tensor.
__device__ __forceinline__ int64_t row_of(const int64_t* st, int64_t b, int64_t i, int64_t h) {
  return b * st[0] + i * st[1] + h * st[2];
}

// P_ij and dS_ij of query row (b, i, h) and key row (b, j, kvh); every lane
// gets the same values.
template <class E>
__device__ __forceinline__ void probability(const AttentionBackwardParams& p, int64_t qr, int64_t dyr,
                                            int64_t kr, int64_t vr, float lse, float delta, float& pij, float& dsij) {
  const int lane = threadIdx.x % 32;
  float s = 0.0f, dp = 0.0f;
  for (int c = lane; c < p.d; c += 32)
    s = fmaf(ld<E>(p.q, qr + c * p.q_stride[3]), ld<E>(p.k, kr + c * p.k_stride[3]), s);
  for (int c = lane; c < p.dv_dim; c += 32)
    dp = fmaf(ld<E>(p.dy, dyr + c * p.dy_stride[3]), ld<E>(p.v, vr + c * p.v_stride[3]), dp);
  s = warp_sum(s) * p.scale;
  dp = warp_sum(dp);
  pij = expf(s - lse);
  dsij = pij * (dp - delta);
}

template <class E> __device__ __forceinline__ void bwd_delta(const AttentionBackwardParams& p) {
  const int lane = threadIdx.x % 32;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (row >= p.batch * p.sq * p.hq) return;  // whole warps
  const int64_t h = row % p.hq, i = (row / p.hq) % p.sq, b = row / (static_cast<int64_t>(p.hq) * p.sq);
  const int64_t yr = row_of(p.y_stride, b, i, h), dyr = row_of(p.dy_stride, b, i, h);
  float acc = 0.0f;
  for (int c = lane; c < p.dv_dim; c += 32)
    acc = fmaf(ld<E>(p.dy, dyr + c * p.dy_stride[3]), ld<E>(p.y, yr + c * p.y_stride[3]), acc);
  acc = warp_sum(acc);
  if (lane == 0) p.delta[row] = acc;
}

template <class E> __device__ __forceinline__ void bwd_dkdv(const AttentionBackwardParams& p) {
  const int lane = threadIdx.x % 32;
  const int64_t w = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (w >= p.batch * p.hkv * p.sk) return;
  const int64_t j = w % p.sk, kvh = (w / p.sk) % p.hkv, b = w / (p.sk * static_cast<int64_t>(p.hkv));
  const int64_t group = p.hq / p.hkv;
  const int64_t kr = row_of(p.k_stride, b, j, kvh), vr = row_of(p.v_stride, b, j, kvh);
  const int64_t i_first = first_query_of_key(p, j);
  const int width = p.d > p.dv_dim ? p.d : p.dv_dim;
  for (int c0 = 0; c0 < width; c0 += kSlice) {
    float dk[kPerLane], dv[kPerLane];
#pragma unroll
    for (int u = 0; u < kPerLane; ++u) dk[u] = dv[u] = 0.0f;
    for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h)
      for (int64_t i = i_first; i < p.sq; ++i) {
        const int64_t qr = row_of(p.q_stride, b, i, h), dyr = row_of(p.dy_stride, b, i, h);
        const int64_t r = (b * p.sq + i) * p.hq + h;
        float pij, dsij;
        probability<E>(p, qr, dyr, kr, vr, p.lse[row_of(p.lse_stride, b, i, h)], p.delta[r], pij, dsij);
#pragma unroll
        for (int u = 0; u < kPerLane; ++u) {
          const int c = c0 + lane + 32 * u;
          if (c < p.d) dk[u] = fmaf(dsij, ld<E>(p.q, qr + c * p.q_stride[3]), dk[u]);
          if (c < p.dv_dim) dv[u] = fmaf(pij, ld<E>(p.dy, dyr + c * p.dy_stride[3]), dv[u]);
        }
      }
    const int64_t dkr = row_of(p.dk_stride, b, j, kvh), dvr = row_of(p.dv_stride, b, j, kvh);
#pragma unroll
    for (int u = 0; u < kPerLane; ++u) {
      const int c = c0 + lane + 32 * u;
      if (c < p.d) st<E>(p.dk, dkr + c * p.dk_stride[3], dk[u] * p.scale);
      if (c < p.dv_dim) st<E>(p.dv, dvr + c * p.dv_stride[3], dv[u]);
    }
  }
}

template <class E> __device__ __forceinline__ void bwd_dq(const AttentionBackwardParams& p) {
  const int lane = threadIdx.x % 32;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (row >= p.batch * p.sq * p.hq) return;
  const int64_t h = row % p.hq, i = (row / p.hq) % p.sq, b = row / (static_cast<int64_t>(p.hq) * p.sq);
  const int64_t kvh = h / (p.hq / p.hkv);
  const int64_t qr = row_of(p.q_stride, b, i, h), dyr = row_of(p.dy_stride, b, i, h);
  const float lse = p.lse[row_of(p.lse_stride, b, i, h)], delta = p.delta[row];
  const int64_t keys = keys_of_query(p, i);
  for (int c0 = 0; c0 < p.d; c0 += kSlice) {
    float dq[kPerLane];
#pragma unroll
    for (int u = 0; u < kPerLane; ++u) dq[u] = 0.0f;
    for (int64_t j = 0; j < keys; ++j) {
      const int64_t kr = row_of(p.k_stride, b, j, kvh), vr = row_of(p.v_stride, b, j, kvh);
      float pij, dsij;
      probability<E>(p, qr, dyr, kr, vr, lse, delta, pij, dsij);
#pragma unroll
      for (int u = 0; u < kPerLane; ++u) {
        const int c = c0 + lane + 32 * u;
        if (c < p.d) dq[u] = fmaf(dsij, ld<E>(p.k, kr + c * p.k_stride[3]), dq[u]);
      }
    }
    const int64_t dqr = row_of(p.dq_stride, b, i, h);
#pragma unroll
    for (int u = 0; u < kPerLane; ++u) {
      const int c = c0 + lane + 32 * u;
      if (c < p.d) st<E>(p.dq, dqr + c * p.dq_stride[3], dq[u] * p.scale);
    }
  }
}

}  // namespace

// One macro per kernel, its name spelled out: cmake/embed_device_code.py
// finds kernel names in the macro's name argument.
#define HAL_BWD_KERNEL(name, fn, E) \
  extern "C" __global__ void __launch_bounds__(32 * kWarpsPerBlock, 1) name(AttentionBackwardParams p) { fn<E>(p); }
HAL_BWD_KERNEL(hal_attention_bwd_delta_f32, bwd_delta, float)
HAL_BWD_KERNEL(hal_attention_bwd_delta_f16, bwd_delta, __half)
HAL_BWD_KERNEL(hal_attention_bwd_delta_bf16, bwd_delta, __nv_bfloat16)
HAL_BWD_KERNEL(hal_attention_bwd_dkdv_general_f32, bwd_dkdv, float)
HAL_BWD_KERNEL(hal_attention_bwd_dkdv_general_f16, bwd_dkdv, __half)
HAL_BWD_KERNEL(hal_attention_bwd_dkdv_general_bf16, bwd_dkdv, __nv_bfloat16)
HAL_BWD_KERNEL(hal_attention_bwd_dq_general_f32, bwd_dq, float)
HAL_BWD_KERNEL(hal_attention_bwd_dq_general_f16, bwd_dq, __half)
HAL_BWD_KERNEL(hal_attention_bwd_dq_general_bf16, bwd_dq, __nv_bfloat16)
#undef HAL_BWD_KERNEL
