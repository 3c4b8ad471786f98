#pragma once
// Shared pieces of the row kernels: locating a row of a strided tensor,
// reading a row 8 elements at a time when it is contiguous and 16-byte
// aligned, and a deterministic all-reduce over the threads of one row.
//
// Determinism: every thread visits its columns in a fixed order, lanes are
// combined by a butterfly (each step combines two values with a commutative
// operation, so all lanes hold bit-identical results), and warps are combined
// in warp order. The result depends only on the launch shape, which the
// launcher derives from the tensor shape alone.
#include <stdint.h>

#include "kernel_params/rows.h"
#include "ptx/element.cuh"
#include "ptx/kernels/rows_geometry.h"

namespace hal::ptx::rows {

using kernel_params::NormParams;
using kernel_params::ReduceParams;
using kernel_params::RopeParams;
using kernel_params::RowsLayout;
using kernel_params::SoftmaxParams;

inline constexpr int kBlockThreads = kRowsBlockThreads;

__device__ __forceinline__ int elem_bytes(ElemType t) {
  switch (t) {
    case ElemType::f32: case ElemType::i32: return 4;
    case ElemType::f16: case ElemType::bf16: return 2;
    case ElemType::i64: return 8;
    default: return 1;
  }
}

__device__ __forceinline__ const void* offset_ptr(const void* base, ElemType t, int64_t elements) {
  return static_cast<const char*>(base) + elements * elem_bytes(t);
}
__device__ __forceinline__ void* offset_ptr(void* base, ElemType t, int64_t elements) {
  return static_cast<char*>(base) + elements * elem_bytes(t);
}

struct RowOffsets {
  int64_t x = 0, y = 0;
  int64_t last_coord = 0;  // coordinate of the innermost outer dim (softmax's query index)
};

__device__ __forceinline__ RowOffsets row_offsets(const RowsLayout& L, int64_t row) {
  RowOffsets o;
  for (int i = L.outer_rank - 1; i >= 0; --i) {
    const int64_t extent = L.outer_shape[i];
    const int64_t c = row % extent;
    row /= extent;
    if (i == L.outer_rank - 1) o.last_coord = c;
    o.x += c * L.x_outer_stride[i];
    o.y += c * L.y_outer_stride[i];
  }
  return o;
}

// row_offsets with the common shapes' index arithmetic cut down (the 16-bit
// rows_reg kernels, which the launcher gives layouts whose mergeable outer
// dims are merged, backends/gpu/rows_variants.h): one outer dim needs no
// division, two need one 32-bit division when the rows fit (a 64-bit
// division is a call of ~70 instructions per thread, a few per element of
// a 4096-wide 16-bit row spread over 128 threads); anything else as above.
__device__ __forceinline__ RowOffsets row_offsets_fast(const RowsLayout& L, int64_t row) {
  RowOffsets o;
  if (L.outer_rank == 1) {
    o.last_coord = row;
    o.x = row * L.x_outer_stride[0];
    o.y = row * L.y_outer_stride[0];
    return o;
  }
  if (L.outer_rank == 2 && L.rows <= 0x7fffffffLL) {
    const uint32_t r = static_cast<uint32_t>(row), e = static_cast<uint32_t>(L.outer_shape[1]);
    const uint32_t c0 = r / e, c1 = r - c0 * e;
    o.last_coord = c1;
    o.x = static_cast<int64_t>(c0) * L.x_outer_stride[0] + static_cast<int64_t>(c1) * L.x_outer_stride[1];
    o.y = static_cast<int64_t>(c0) * L.y_outer_stride[0] + static_cast<int64_t>(c1) * L.y_outer_stride[1];
    return o;
  }
  return row_offsets(L, row);
}

// Loads elements [8*chunk, 8*chunk + 8) of a contiguous, 16-byte-aligned row.
// Only f32, f16 and bf16 rows are flagged x_vec16 / y_vec16 (kernel_params/rows.h).
__device__ __forceinline__ void load8(const void* row, ElemType t, int64_t chunk, float v[8]) {
  if (t == ElemType::f32) {
    const float4* p = static_cast<const float4*>(row) + 2 * chunk;
    const float4 a = p[0], b = p[1];
    v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w;
    v[4] = b.x; v[5] = b.y; v[6] = b.z; v[7] = b.w;
    return;
  }
  const uint4 u = static_cast<const uint4*>(row)[chunk];
  const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const uint16_t lo = static_cast<uint16_t>(w[k] & 0xffffu), hi = static_cast<uint16_t>(w[k] >> 16);
    if (t == ElemType::f16) {
      v[2 * k] = __half2float(__ushort_as_half(lo));
      v[2 * k + 1] = __half2float(__ushort_as_half(hi));
    } else {
      v[2 * k] = __bfloat162float(__ushort_as_bfloat16(lo));
      v[2 * k + 1] = __bfloat162float(__ushort_as_bfloat16(hi));
    }
  }
}

__device__ __forceinline__ void store8(void* row, ElemType t, int64_t chunk, const float v[8]) {
  if (t == ElemType::f32) {
    float4* p = static_cast<float4*>(row) + 2 * chunk;
    p[0] = make_float4(v[0], v[1], v[2], v[3]);
    p[1] = make_float4(v[4], v[5], v[6], v[7]);
    return;
  }
  uint32_t w[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    uint16_t lo, hi;
    if (t == ElemType::f16) {
      lo = __half_as_ushort(__float2half_rn(v[2 * k]));
      hi = __half_as_ushort(__float2half_rn(v[2 * k + 1]));
    } else {
      lo = __bfloat16_as_ushort(__float2bfloat16_rn(v[2 * k]));
      hi = __bfloat16_as_ushort(__float2bfloat16_rn(v[2 * k + 1]));
    }
    w[k] = static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
  }
  static_cast<uint4*>(row)[chunk] = make_uint4(w[0], w[1], w[2], w[3]);
}

// Calls f(j, x_j) for the columns j < count that this lane owns (lane, lane+T, ...).
template <class F>
__device__ __forceinline__ void for_each_in_row(const void* row, ElemType t, int64_t count, int64_t stride,
                                                bool vec8, int lane, int T, F&& f) {
  int64_t j0 = 0;
  if (vec8) {
    const int64_t chunks = count / 8;
    for (int64_t c = lane; c < chunks; c += T) {
      float v[8];
      load8(row, t, c, v);
#pragma unroll
      for (int k = 0; k < 8; ++k) f(c * 8 + k, v[k]);
    }
    j0 = chunks * 8;
  }
  for (int64_t j = j0 + lane; j < count; j += T) f(j, load_as_float(row, t, j * stride));
}

// y_j = g(j, x_j) for every column j < count owned by this lane.
template <class G>
__device__ __forceinline__ void map_row(const void* xrow, ElemType xt, int64_t xs, void* yrow, ElemType yt,
                                        int64_t ys, int64_t count, bool vec8, int lane, int T, G&& g) {
  int64_t j0 = 0;
  if (vec8) {
    const int64_t chunks = count / 8;
    for (int64_t c = lane; c < chunks; c += T) {
      float v[8];
      load8(xrow, xt, c, v);
#pragma unroll
      for (int k = 0; k < 8; ++k) v[k] = g(c * 8 + k, v[k]);
      store8(yrow, yt, c, v);
    }
    j0 = chunks * 8;
  }
  for (int64_t j = j0 + lane; j < count; j += T) store_from_float(yrow, yt, j * ys, g(j, load_as_float(xrow, xt, j * xs)));
}

// --- whole row in registers (the "rows_reg" kernels) ----------------------
// A group of T = RowsLayout::cuda_threads_per_row threads per row (64, 128 or
// 256), 256 / T rows per 256-thread block; the row contiguous, 16-byte
// aligned, of f32/f16/bf16, cols % 8 == 0 and cols <= kRegMaxCols (8192,
// rows_geometry.h). Lane l of the group holds chunks l, l + T, ... (8 elements each);
// the launcher picks the smallest T that leaves at most kRegChunks chunks to
// a lane, so short rows still put kRegChunks loads in flight per thread
// (with T = 256 for every row, a 4096-wide bf16 row left two of them idle
// and the H200 reached 56% of copy bandwidth). The row is read from global
// memory once, every load issued before any arithmetic.
template <int T>
struct RegRow {
  int64_t row;    // may be past the last row in the block's last group: then chunks == 0
  int32_t chunks;  // 8-element chunks this group loads (0 when inactive)
  int32_t lane;
  __device__ __forceinline__ int32_t chunk(int k) const { return lane + k * T; }
};

// T is a compile-time constant (one kernel per group size) so that chunk
// offsets are immediates: with T read from the layout at run time the f32
// layernorm fell from 93% to 85% of copy bandwidth on the H200. Every thread of the block
// must stay to the end (group_allreduce synchronises the block when T > 32),
// so a group past the last row runs with no chunks instead of returning.
template <int T>
__device__ __forceinline__ RegRow<T> reg_row(const RowsLayout& L) {
  RegRow<T> r;
  r.row = static_cast<int64_t>(blockIdx.x) * (kBlockThreads / T) + threadIdx.x / T;
  r.lane = threadIdx.x % T;
  r.chunks = r.row < L.rows ? static_cast<int32_t>(L.cols / 8) : 0;
  if (r.row >= L.rows) r.row = 0;  // a valid row for the offsets; nothing is read or written
  return r;
}

template <int T>
__device__ __forceinline__ void load_row_regs(const void* row, ElemType t, const RegRow<T>& r, float v[kRegChunks][8]) {
#pragma unroll
  for (int k = 0; k < kRegChunks; ++k)
    if (r.chunk(k) < r.chunks) load8(row, t, r.chunk(k), v[k]);
}

// --- values combined across lanes -----------------------------------------

__device__ __forceinline__ float shfl_xor(float v, int off) { return __shfl_xor_sync(0xffffffffu, v, off); }
__device__ __forceinline__ int64_t shfl_xor(int64_t v, int off) {
  return static_cast<int64_t>(__shfl_xor_sync(0xffffffffu, static_cast<long long>(v), off));
}

// Running softmax statistics: max m and sum s of exp(v - m).
struct MaxSum {
  float m, s;
};
__device__ __forceinline__ MaxSum shfl_xor(MaxSum v, int off) { return {shfl_xor(v.m, off), shfl_xor(v.s, off)}; }

struct ValIdx {
  float v;
  int64_t i;
};
__device__ __forceinline__ ValIdx shfl_xor(ValIdx v, int off) { return {shfl_xor(v.v, off), shfl_xor(v.i, off)}; }

// All threads of a row group (T consecutive threads: 1, 32 or 256 with a
// 256-thread block) end with the combination of their values. `scratch` holds
// one value per warp of the block. With T == 256 every thread of the block
// must call this (it synchronises the block).
template <class V, class Combine>
__device__ __forceinline__ V group_allreduce(V v, int T, Combine comb, V* scratch) {
  const int width = T < 32 ? T : 32;
  for (int off = width / 2; off > 0; off >>= 1) v = comb(v, shfl_xor(v, off));
  if (T > 32) {
    const int warp = threadIdx.x / 32, group_first_warp = (threadIdx.x / T) * (T / 32);
    __syncthreads();  // scratch may still be read by a previous call
    if (threadIdx.x % 32 == 0) scratch[warp] = v;
    __syncthreads();
    V r = scratch[group_first_warp];
    for (int w = 1; w < T / 32; ++w) r = comb(r, scratch[group_first_warp + w]);
    v = r;
  }
  return v;
}

}  // namespace hal::ptx::rows
